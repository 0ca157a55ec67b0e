import { closeSync, constants, existsSync, fstatSync, mkdirSync, openSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync, writeSync, type Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { randomSecret } from './crypto.js';
import { TrellisError } from './errors.js';

/**
 * One process owns an embedded data folder. The owner writes `trellis.lock` with its pid, the port
 * it serves and a token; the CLI uses that to send its commands through the running server.
 */
export interface DataDirLock {
  pid: number;
  url: string;
  token: string;
}

const LOCK_FILE = 'trellis.lock';
const SECRET_FILE = 'secret.key';

/** Entries that make a folder a data folder: Trellis's lock, the embedded database, a PostgreSQL data directory. */
const DATA_FOLDER_MARKS = [LOCK_FILE, 'pgdata', 'PG_VERSION'];

/** The live lock of `dataDir`, or undefined when no running process holds it. */
export function readLiveLock(dataDir: string): DataDirLock | undefined {
  const path = join(dataDir, LOCK_FILE);
  if (!existsSync(path)) return undefined;
  return liveLock(readFileSync(path, 'utf8'));
}

/**
 * The live lock of `dataDir` when this user may send its server what a command carries (a new
 * user's password, the lock's token): the folder and the lock, a regular file, belong to this
 * user or root, and no one else may write either. Undefined when no running process holds the
 * folder; throws FORBIDDEN saying why (`untrustedLock`) for any lock file it does not trust, live
 * or not. Where the lock's URL may point is the caller's check.
 */
export function readOwnLiveLock(dataDir: string): DataDirLock | undefined {
  let fd: number;
  try {
    // Not through a link, and without waiting on a FIFO: what is opened is what is checked.
    fd = openSync(join(dataDir, LOCK_FILE), constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw untrustedLock(dataDir, 'the lock file is not a regular file (it is a symbolic link)');
    throw error;
  }
  try {
    const file = fstatSync(fd);
    if (!file.isFile()) throw untrustedLock(dataDir, 'the lock file is not a regular file');
    const problem = ownershipProblem('the folder', 'in the folder', statSync(dataDir)) ?? ownershipProblem('the lock file', 'the lock file', file);
    if (problem) throw untrustedLock(dataDir, problem);
    return liveLock(readFileSync(fd, 'utf8'));
  } finally {
    closeSync(fd);
  }
}

/** The refusal of the lock of `dataDir`, saying `reason` in one line. */
export function untrustedLock(dataDir: string, reason: string): TrellisError {
  return new TrellisError(
    'FORBIDDEN',
    `Refusing the lock file of ${dataDir}: ${reason}. A server of another user could read what the command sends (passwords, the lock token): ` +
      'check who holds this folder, or point TRELLIS_DATA_DIR at a folder only you can write',
  );
}

/**
 * The data folder that `path` lies in, or is, with links resolved: `dataDir` (named first when it
 * holds `path`), or else the nearest folder holding a Trellis lock, an embedded database or a
 * PostgreSQL data directory. Both the place a link named `path` sits and the place it points to
 * count. Undefined when there is none.
 */
export function enclosingDataFolder(path: string, dataDir: string): string | undefined {
  const absolute = resolve(path);
  const configured = realLocation(dataDir);
  let nearest: string | undefined;
  for (const place of new Set([join(realLocation(dirname(absolute)), basename(absolute)), realLocation(absolute)])) {
    for (let dir = place; ; dir = dirname(dir)) {
      if (dir === configured) return dir;
      nearest ??= DATA_FOLDER_MARKS.some((mark) => existsSync(join(dir, mark))) ? dir : undefined;
      if (dirname(dir) === dir) break;
    }
  }
  return nearest;
}

/** The data folder is held by another live process. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
}

/** Takes the folder for this process; throws DataDirInUseError when another live process holds it. */
export function acquireLock(dataDir: string): { token: string; publish(url: string): void; release(): void } {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, LOCK_FILE);
  const holder = readLiveLock(dataDir);
  if (holder && holder.pid !== process.pid) {
    throw new DataDirInUseError(`The data folder ${dataDir} is in use by process ${holder.pid} (${holder.url || 'starting'})`);
  }
  rmSync(path, { force: true });
  const token = randomSecret();
  const write = (url: string) => {
    const fd = openSync(path, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify({ pid: process.pid, url, token } satisfies DataDirLock));
    } finally {
      closeSync(fd);
    }
  };
  write('');
  return {
    token,
    publish: write,
    release: () => {
      const current = readLiveLock(dataDir);
      if (!current || current.pid === process.pid) rmSync(path, { force: true });
    },
  };
}

/** The deployment secret kept in the data folder (created on first use, mode 0600). */
export function dataDirSecret(dataDir: string): string {
  const existing = readDataDirSecret(dataDir);
  if (existing) return existing;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secret = randomSecret(48);
  writeFileSync(join(dataDir, SECRET_FILE), secret, { mode: 0o600, flag: 'wx' });
  return secret;
}

/** The deployment secret in the data folder, or undefined when it has none. */
export function readDataDirSecret(dataDir: string): string | undefined {
  const path = join(dataDir, SECRET_FILE);
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined;
}

/** Makes `secret` the data folder's deployment secret (mode 0600), replacing any; undefined removes it. */
export function replaceDataDirSecret(dataDir: string, secret: string | undefined): void {
  const path = join(dataDir, SECRET_FILE);
  rmSync(path, { force: true });
  if (secret) writeFileSync(path, secret, { mode: 0o600, flag: 'wx' });
}

function liveLock(text: string): DataDirLock | undefined {
  let lock: DataDirLock;
  try {
    lock = JSON.parse(text) as DataDirLock;
  } catch {
    return undefined;
  }
  return isAlive(lock?.pid) ? lock : undefined;
}

/** Why `stats` may not be trusted: another owner than this user or root, or writable by others. */
function ownershipProblem(name: string, writeName: string, stats: Stats): string | undefined {
  const uid = process.getuid?.();
  // Windows has no owners or modes to check.
  if (uid === undefined) return undefined;
  if (stats.uid !== uid && stats.uid !== 0) return `${name} belongs to uid ${stats.uid}, not to you (uid ${uid}) or root`;
  if (stats.mode & 0o022) return `other users may write ${writeName} (mode ${(stats.mode & 0o7777).toString(8).padStart(4, '0')})`;
  return undefined;
}

/** `path` with every link resolved, for as much of it as exists. */
function realLocation(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(realLocation(parent), basename(absolute));
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
