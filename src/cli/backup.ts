import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from '../config.js';
import {
  POSTGRES_BACKUP_HINT,
  POSTGRES_RESTORE_HINT,
  createBackup,
  readBackup,
  restoreBackup,
  type BackupManifest,
} from '../platform/backup.js';
import { sha256Hex } from '../platform/crypto.js';
import { acquireLock, enclosingDataFolder, type DataDirLock } from '../platform/data-dir.js';
import { openDatabase } from '../platform/db/index.js';
import { badInput, conflict } from '../platform/errors.js';
import { postToServer, requireTrellisData, trustedServerLock } from './data-access.js';

/** What `trellis backup` wrote. */
export interface WrittenBackup {
  file: string;
  bytes: number;
  /** SHA-256 of the whole file. */
  sha256: string;
  manifest: BackupManifest;
}

/** What `trellis restore` restored, and where. */
export interface RestoredBackup {
  dataDir: string;
  file: string;
  manifest: BackupManifest;
}

/** How long a backup through the running server may take: it dumps the whole database. */
const BACKUP_TIMEOUT_MS = 120_000;

/**
 * `trellis backup <file>`: a consistent copy of the embedded database and its secret, taken by the
 * server that holds the folder (D4) or from the folder itself. Refuses an existing file unless
 * `force`, a target inside any data folder or that is a folder (even with `force`), a folder
 * without Trellis data, and a PostgreSQL server (pg_dump's job).
 */
export async function backupToFile(config: Config, file: string, options: { force?: boolean }): Promise<WrittenBackup> {
  if (config.databaseUrl) throw badInput(POSTGRES_BACKUP_HINT);
  const target = resolve(file);
  refuseDataFolderTarget(target, config.dataDir);
  if (existsSync(target) && !options.force) throw conflict(`${target} already exists: choose another file, or pass --force to replace it`);
  const lock = trustedServerLock(config.dataDir);
  const bytes = lock?.url ? await backupThroughServer(lock) : await backupFolder(config);
  // Checks what arrived, as restore will: length and checksum of the data.
  const { manifest } = readBackup(bytes, 'The backup just taken');
  writeFileAtomically(target, bytes);
  return { file: target, bytes: bytes.byteLength, sha256: sha256Hex(bytes), manifest };
}

/**
 * `trellis restore <file>`: the backup into the data folder, which must be new or empty unless
 * `force`; refuses a file that is not a Trellis backup, a folder a server holds, and a PostgreSQL
 * server (pg_restore's job).
 */
export async function restoreFromFile(config: Config, file: string, options: { force?: boolean }): Promise<RestoredBackup> {
  if (config.databaseUrl) throw badInput(POSTGRES_RESTORE_HINT);
  const source = resolve(file);
  const backup = readBackup(readBackupFile(source), source);
  await restoreBackup(backup, config.dataDir, { replace: options.force === true });
  return { dataDir: config.dataDir, file: source, manifest: backup.manifest };
}

/**
 * A backup written into a data folder could replace its lock (then the next command opens the
 * database beside the server that holds it) or its database's files, and is lost with the folder.
 */
function refuseDataFolderTarget(target: string, dataDir: string): void {
  const folder = enclosingDataFolder(target, dataDir);
  if (folder) throw badInput(`${target} is inside the data folder ${folder}: write the backup outside every data folder`);
  if (existsSync(target) && statSync(target).isDirectory()) throw badInput(`${target} is a folder: name the file to write`);
}

async function backupThroughServer(lock: DataDirLock): Promise<Buffer> {
  return postToServer(lock, '/api/internal/backup', {}, BACKUP_TIMEOUT_MS);
}

async function backupFolder(config: Config): Promise<Buffer> {
  requireTrellisData(config.dataDir);
  const lock = acquireLock(config.dataDir);
  try {
    const database = await openDatabase({ databaseUrl: undefined, dataDir: config.dataDir, diskReserveMb: config.diskReserveMb });
    try {
      return await createBackup({ database, dataDir: config.dataDir, secret: config.secret });
    } finally {
      await database.close();
    }
  } finally {
    lock.release();
  }
}

const READ_FAILURES: Record<string, string> = { ENOENT: 'there is no such file', EISDIR: 'it is a folder', EACCES: 'permission denied' };

function readBackupFile(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    throw badInput(`Cannot read ${path}: ${READ_FAILURES[code] ?? (error as Error).message}`);
  }
}

/** Writes beside the target and renames, mode 0600: a backup holds the deployment's secret. */
function writeFileAtomically(target: string, bytes: Buffer): void {
  const partial = `${target}.partial-${process.pid}`;
  try {
    writeFileSync(partial, bytes, { mode: 0o600 });
    renameSync(partial, target);
  } finally {
    rmSync(partial, { force: true });
  }
}
