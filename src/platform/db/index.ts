import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { NotificationListener } from './listener.js';
import { migrateToLatest } from './migrations.js';
import { PGliteDialect } from './pglite-dialect.js';
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
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl: string | undefined;
  dataDir: string;
}

/** Opens the database and brings its schema up to date. */
export async function openDatabase(options: OpenOptions): Promise<DatabaseHandle> {
  const handle = options.databaseUrl ? await openPostgres(options.databaseUrl) : await openPGlite(options.dataDir);
  try {
    await migrateToLatest(handle.db as Kysely<unknown>);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

async function openPGlite(dataDir: string): Promise<DatabaseHandle> {
  const { PGlite } = await import('@electric-sql/pglite');
  const folder = join(dataDir, 'pgdata');
  mkdirSync(folder, { recursive: true });
  // PostgreSQL's default 128 MB of shared buffers would sit in this process's memory; an embedded
  // single-application database works in far less.
  const pglite = await PGlite.create(folder, { postgresqlconf: ['shared_buffers = 16MB', 'wal_buffers = 1MB'] });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
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
