import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { DISK_RESERVE_MB, diskReserveCheck, freeBytesOf } from './disk-reserve.js';
import { NotificationListener } from './listener.js';
import { migrateToLatest } from './migrations.js';
import { partitionTimeTables } from './partitions.js';
import { PGliteDialect } from './pglite-dialect.js';
import { createPGliteFolder, privateFolder } from './pglite-template.js';
import type { Database } from './types.js';

export type { Database } from './types.js';
export type Db = Kysely<Database>;

/** The `application_name` of each replica's listening connection (visible in pg_stat_activity). */
export const LISTENER_APPLICATION_NAME = 'trellis-listener';

/** The database of one deployment, either embedded (PGlite) or a PostgreSQL server. */
export interface DatabaseHandle {
  readonly db: Db;
  readonly kind: 'pglite' | 'postgres';
  /** Sends a notification to every replica (including this one) after the current commit. */
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Calls `onMessage` for each notification on `channel`. `onGap` is called when notifications may
   * have been missed: the listening connection was lost, and again once it listens anew.
   */
  listen(channel: string, onMessage: (payload: string) => void, onGap?: () => void): Promise<void>;
  ping(): Promise<void>;
  /** PostgreSQL only: the connections of the pool, and the queries waiting for one. */
  poolStats?(): { total: number; idle: number; waiting: number };
  /**
   * Embedded database only: a gzip-compressed tarball of its data folder, taken between two
   * transactions after a checkpoint, so that it opens as the database was at that moment.
   */
  dumpDataDir?(): Promise<Uint8Array>;
  /** Embedded database only: milliseconds since its last statement started (maintenance waits for quiet). */
  idleMs?(): number;
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  /** Embedded database only: free space kept on its disk, writes refused below it (default DISK_RESERVE_MB, 32). */
  diskReserveMb?: number;
  /** Told what a first start is doing, step by step (creating a new embedded database takes seconds to a minute). */
  onProgress?: (message: string) => void;
}

/** Opens the database and brings its schema up to date. */
export async function openDatabase(options: OpenOptions): Promise<DatabaseHandle> {
  const handle = options.databaseUrl ? await openPostgres(options.databaseUrl) : await openPGlite(options.dataDir, options.diskReserveMb ?? DISK_RESERVE_MB, options.onProgress);
  try {
    await migrateToLatest(handle.db as Kysely<unknown>);
    // On a server, the tables that only grow by time are partitioned by day (partitions.ts).
    if (handle.kind === 'postgres') await partitionTimeTables(handle.db);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

/** Creates the embedded database of a new data folder, saying so when there is someone to tell. */
async function createFolder(dataDir: string, folder: string, onProgress?: (message: string) => void): Promise<void> {
  const started = performance.now();
  onProgress?.(`First start: creating the database in ${dataDir}…`);
  await createPGliteFolder(folder, PGLITE_CONF, { onProgress });
  onProgress?.(`Database created in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** The folder of the embedded database inside a data folder. */
export function pgliteFolder(dataDir: string): string {
  return join(dataDir, 'pgdata');
}

// PostgreSQL's default 128 MB of shared buffers would sit in this process's memory; an embedded
// single-application database works in far less. PGlite has no checkpointer: it checkpoints only
// when asked (embedded-maintenance.ts), and then keeps up to min_wal_size (80 MB by default) of old
// log segments for reuse; two 16 MB segments keep the folder small and level (issue 22).
const PGLITE_CONF = ['shared_buffers = 16MB', 'wal_buffers = 1MB', 'min_wal_size = 32MB'];

/**
 * Creates the embedded database of `dataDir` from a tarball `dumpDataDir` made, and closes it.
 * Throws when that folder already holds a database.
 */
export async function loadPGliteDataDir(dataDir: string, tarball: Uint8Array): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  const folder = pgliteFolder(dataDir);
  privateFolder(folder);
  const pglite = await PGlite.create(folder, { loadDataDir: new Blob([new Uint8Array(tarball)]), postgresqlconf: PGLITE_CONF });
  await pglite.close();
}

async function openPGlite(dataDir: string, diskReserveMb: number, onProgress?: (message: string) => void): Promise<DatabaseHandle> {
  const folder = pgliteFolder(dataDir);
  privateFolder(folder);
  if (!existsSync(join(folder, 'PG_VERSION'))) await createFolder(dataDir, folder, onProgress);
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = await PGlite.create(folder, { postgresqlconf: PGLITE_CONF });
  const reserveCheck = diskReserveCheck(freeBytesOf(folder), diskReserveMb * 1024 * 1024);
  let lastQueryAt = performance.now();
  const beforeQuery = (text: string) => {
    lastQueryAt = performance.now();
    reserveCheck(text);
  };
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite, { beforeQuery }) });
  return {
    db,
    kind: 'pglite',
    notify: async (channel, payload) => {
      await sql`select pg_notify(${channel}, ${payload})`.execute(db);
    },
    listen: async (channel, onMessage) => {
      await pglite.listen(channel, onMessage);
    },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    idleMs: () => performance.now() - lastQueryAt,
    // Holding the connection waits for the transaction in progress and keeps the next one out.
    dumpDataDir: () =>
      db.connection().execute(async (connection) => {
        await sql`checkpoint`.execute(connection);
        return new Uint8Array(await (await pglite.dumpDataDir('gzip')).arrayBuffer());
      }),
    close: async () => {
      await db.destroy();
      await pglite.close();
    },
  };
}

async function openPostgres(connectionString: string): Promise<DatabaseHandle> {
  // The driver is loaded only for a PostgreSQL server, not on every embedded start.
  const { default: pg } = await import('pg');
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
  const pool = new pg.Pool({ connectionString, max: 10, types });
  pool.on('error', () => {});
  // pg-pool takes its own 'error' listener off a client while the client is checked out: a server
  // that ends the connection between two queries of a transaction (a restart) would crash the
  // process. The query in flight rejects by itself, and the pool drops the broken client on release.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const gapHandlers: Array<() => void> = [];
  const gap = () => {
    for (const handler of gapHandlers) handler();
  };
  const listener = new NotificationListener(
    () => new pg.Client({ connectionString, application_name: LISTENER_APPLICATION_NAME, keepAlive: true }),
    (name) => pg.escapeIdentifier(name),
    { lost: gap, reconnected: gap },
  );
  return {
    db,
    kind: 'postgres',
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    notify: async (channel, payload) => {
      await sql`select pg_notify(${channel}, ${payload})`.execute(db);
    },
    listen: async (channel, onMessage, onGap) => {
      if (onGap) gapHandlers.push(onGap);
      await listener.listen(channel, onMessage);
    },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await listener.close();
      await db.destroy();
    },
  };
}
