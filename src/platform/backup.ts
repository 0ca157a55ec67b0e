import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { z } from 'zod';
import { sha256Hex } from './crypto.js';
import { acquireLock, readDataDirSecret, readLiveLock, replaceDataDirSecret } from './data-dir.js';
import { loadPGliteDataDir, pgliteFolder, type DatabaseHandle } from './db/index.js';
import { TrellisError, badInput } from './errors.js';
import { trellisVersion } from './version.js';

/**
 * A Trellis backup file (D24): the line `TRELLIS-BACKUP`, one line of JSON (the manifest, and the
 * data folder's secret when the deployment uses it), then the embedded database's data folder as
 * the gzip-compressed tarball PGlite dumps, whose length and SHA-256 the manifest records.
 */
const MAGIC = 'TRELLIS-BACKUP\n';
export const BACKUP_FORMAT_VERSION = 1;
/** The header line is a few hundred bytes; anything longer is not a header. */
const MAX_HEADER_BYTES = 64 * 1024;

export const backupManifestSchema = z.object({
  format: z.literal('trellis-backup'),
  formatVersion: z.number().int().positive(),
  createdAt: z.string(),
  trellisVersion: z.string(),
  /** `server_version` of the embedded PostgreSQL that wrote the data folder. */
  postgresVersion: z.string(),
  /** The last schema migration applied. */
  schemaVersion: z.string().nullable(),
  application: z.object({ _id: z.string(), name: z.string() }).nullable(),
  /** `included`: the data folder's secret is in the file; `TRELLIS_SECRET`: it was set in the environment, not stored. */
  secret: z.enum(['included', 'TRELLIS_SECRET']),
  pgdata: z.object({ bytes: z.number().int().nonnegative(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }),
});

export type BackupManifest = z.infer<typeof backupManifestSchema>;

const headerSchema = z.object({ manifest: backupManifestSchema, secretKey: z.string().min(32).optional() });

export interface Backup {
  manifest: BackupManifest;
  /** The deployment secret of the data folder, when the manifest says `included`. */
  secretKey: string | undefined;
  /** The data folder as PGlite dumped it. */
  pgdata: Uint8Array;
}

export interface BackupSource {
  database: DatabaseHandle;
  dataDir: string;
  /** TRELLIS_SECRET, when set: then the data folder's secret is not used, and not stored. */
  secret: string | undefined;
}

/**
 * The backup file of an embedded deployment, consistent while it serves: the database is dumped
 * between two transactions after a checkpoint. Throws BAD_INPUT on a PostgreSQL server.
 */
export async function createBackup(source: BackupSource): Promise<Buffer> {
  if (!source.database.dumpDataDir) throw badInput(POSTGRES_BACKUP_HINT);
  const [postgresVersion, schemaVersion, application] = await Promise.all([
    sql<{ server_version: string }>`show server_version`.execute(source.database.db),
    sql<{ name: string }>`select name from trellis_migrations order by name desc limit 1`.execute(source.database.db),
    source.database.db.selectFrom('app').select(['id', 'name']).orderBy('created_at').executeTakeFirst(),
  ]);
  const pgdata = await source.database.dumpDataDir();
  const secretKey = source.secret ? undefined : readDataDirSecret(source.dataDir);
  const manifest: BackupManifest = {
    format: 'trellis-backup',
    formatVersion: BACKUP_FORMAT_VERSION,
    createdAt: new Date().toISOString(),
    trellisVersion: trellisVersion(),
    postgresVersion: postgresVersion.rows[0]!.server_version,
    schemaVersion: schemaVersion.rows[0]?.name ?? null,
    application: application ? { _id: application.id, name: application.name } : null,
    secret: secretKey ? 'included' : 'TRELLIS_SECRET',
    pgdata: { bytes: pgdata.byteLength, sha256: sha256Hex(Buffer.from(pgdata)) },
  };
  const header = JSON.stringify({ manifest, ...(secretKey ? { secretKey } : {}) });
  return Buffer.concat([Buffer.from(MAGIC), Buffer.from(`${header}\n`), pgdata]);
}

/**
 * Reads a backup file; `name` is how messages call it. Throws BAD_INPUT when `bytes` is not a
 * Trellis backup, is of a later format, or is damaged (truncated or altered).
 */
export function readBackup(bytes: Buffer, name: string): Backup {
  const notABackup = badInput(`${name} is not a Trellis backup: it does not start with the TRELLIS-BACKUP header that \`trellis backup\` writes`);
  if (!bytes.subarray(0, MAGIC.length).equals(Buffer.from(MAGIC))) throw notABackup;
  const end = bytes.indexOf(0x0a, MAGIC.length);
  if (end < 0 || end - MAGIC.length > MAX_HEADER_BYTES) throw notABackup;
  const header = headerSchema.safeParse(parseJson(bytes.subarray(MAGIC.length, end).toString('utf8')));
  if (!header.success) throw notABackup;
  const { manifest, secretKey } = header.data;
  if (manifest.formatVersion > BACKUP_FORMAT_VERSION) {
    throw badInput(`${name} is a Trellis backup of format ${manifest.formatVersion} (Trellis ${manifest.trellisVersion}); this Trellis reads format ${BACKUP_FORMAT_VERSION}: restore it with a newer Trellis`);
  }
  const pgdata = bytes.subarray(end + 1);
  if (pgdata.byteLength !== manifest.pgdata.bytes) {
    throw badInput(`${name} is a damaged Trellis backup: it holds ${pgdata.byteLength} bytes of data where it recorded ${manifest.pgdata.bytes} (truncated?)`);
  }
  if (sha256Hex(pgdata) !== manifest.pgdata.sha256) {
    throw badInput(`${name} is a damaged Trellis backup: its data does not match the SHA-256 it recorded`);
  }
  if (manifest.secret === 'included' && !secretKey) throw notABackup;
  return { manifest, secretKey, pgdata };
}

/**
 * Writes `backup` into the embedded data folder `dataDir`, which must be absent or empty unless
 * `replace` is set; then its database and secret are replaced. The folder is locked meanwhile, the
 * database is loaded beside the old one and moved in only once it opens. Throws CONFLICT when a
 * running server holds the folder or it holds data and `replace` is not set.
 */
export async function restoreBackup(backup: Backup, dataDir: string, options: { replace: boolean }): Promise<void> {
  const holder = readLiveLock(dataDir);
  if (holder) {
    throw new TrellisError('CONFLICT', `${dataDir} is in use by the Trellis server process ${holder.pid} (${holder.url || 'starting'}): stop it before restoring into the folder`);
  }
  const existing = folderEntries(dataDir);
  if (existing.length > 0 && !options.replace) {
    throw new TrellisError(
      'CONFLICT',
      `${dataDir} is not empty (${existing.slice(0, 5).join(', ')}${existing.length > 5 ? ', …' : ''}): restore into a new or empty folder, or pass --force to replace the Trellis data in it`,
      { entries: existing },
    );
  }
  const lock = acquireLock(dataDir);
  const staging = join(dataDir, `.restore-${process.pid}`);
  try {
    rmSync(staging, { recursive: true, force: true });
    await loadPGliteDataDir(staging, backup.pgdata);
    rmSync(pgliteFolder(dataDir), { recursive: true, force: true });
    renameSync(pgliteFolder(staging), pgliteFolder(dataDir));
    // A secret left from the replaced data would decrypt nothing of the backup's.
    replaceDataDirSecret(dataDir, backup.secretKey);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    lock.release();
  }
}

/** What `trellis backup` says on a PostgreSQL server. */
export const POSTGRES_BACKUP_HINT =
  'Trellis runs on a PostgreSQL server (TRELLIS_DATABASE_URL): back it up with pg_dump, for example ' +
  '`pg_dump --format=custom --file=trellis.dump "$TRELLIS_DATABASE_URL"`, and keep TRELLIS_SECRET with it. ' +
  '`trellis backup` copies the embedded database only.';

/** What `trellis restore` says on a PostgreSQL server. */
export const POSTGRES_RESTORE_HINT =
  'Trellis runs on a PostgreSQL server (TRELLIS_DATABASE_URL): restore a pg_dump file with pg_restore into a new, empty database, for example ' +
  '`createdb trellis_restored && pg_restore --no-owner --dbname=postgres://…/trellis_restored trellis.dump`, then start Trellis on it with the same TRELLIS_SECRET. ' +
  '`trellis restore` restores the embedded database only.';

/** The folder's entries that are not a stale lock file; none when it does not exist. */
function folderEntries(dataDir: string): string[] {
  if (!existsSync(dataDir)) return [];
  return readdirSync(dataDir)
    .filter((entry) => entry !== 'trellis.lock')
    .sort();
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
