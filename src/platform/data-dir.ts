import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomSecret } from './crypto.js';

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

/** The live lock of `dataDir`, or undefined when no running process holds it. */
export function readLiveLock(dataDir: string): DataDirLock | undefined {
  const path = join(dataDir, LOCK_FILE);
  if (!existsSync(path)) return undefined;
  let lock: DataDirLock;
  try {
    lock = JSON.parse(readFileSync(path, 'utf8')) as DataDirLock;
  } catch {
    return undefined;
  }
  return isAlive(lock.pid) ? lock : undefined;
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

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
