import { existsSync } from 'node:fs';
import { isLoopbackHost } from '../http/loopback.js';
import { readOwnLiveLock, untrustedLock, type DataDirLock } from '../platform/data-dir.js';
import { pgliteFolder } from '../platform/db/index.js';
import { TrellisError } from '../platform/errors.js';

/**
 * How a CLI command reaches the data (D4): through the server that holds the embedded folder, or
 * the folder itself when no server does.
 */

/** An error the server holding the folder answered, or the reason it could not be asked. */
export class RemoteError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** How long the CLI waits for the server that holds the folder before it says so. */
export const REMOTE_TIMEOUT_MS = 5000;

/**
 * The lock of the server that holds the embedded folder `dataDir`, when the CLI may send it a
 * command: a lock of this user (see `readOwnLiveLock`) naming a loopback URL of this machine.
 * Undefined when no server holds the folder; throws FORBIDDEN saying why for a lock it does not trust.
 */
export function trustedServerLock(dataDir: string): DataDirLock | undefined {
  const lock = readOwnLiveLock(dataDir);
  if (lock?.url && !isLoopbackUrl(lock.url)) throw untrustedLock(dataDir, `it names ${lock.url}, not a loopback address of this machine`);
  return lock;
}

function isLoopbackUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' && parsed.username === '' && parsed.password === '' && isLoopbackHost(parsed.hostname);
  } catch {
    return false;
  }
}

/**
 * POSTs `body` to `path` of the server that holds the folder, authenticated by the lock's token.
 * Resolves to the response when it is 2xx; throws RemoteError with the server's error otherwise,
 * or UNAVAILABLE when the server does not answer within `timeoutMs` or cannot be reached.
 */
export async function postToServer(lock: DataDirLock, path: string, body: unknown, timeoutMs = REMOTE_TIMEOUT_MS): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(`${lock.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-trellis-cli-token': lock.token },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw unreachable(lock.url, error, timeoutMs);
  }
  if (response.ok) return response;
  const answer = (await response.json().catch(() => ({}))) as { error?: { code: string; message: string } };
  throw new RemoteError(answer.error?.code ?? 'ERROR', answer.error?.message ?? `HTTP ${response.status}`);
}

/** Reads a response body, saying so when the server stops answering midway. */
export async function readBody<T>(lock: DataDirLock, read: () => Promise<T>, timeoutMs = REMOTE_TIMEOUT_MS): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw unreachable(lock.url, error, timeoutMs);
  }
}

/** Refuses a folder without a database: only `serve` creates an application, and nobody would serve a second one. */
export function requireTrellisData(dataDir: string): void {
  if (existsSync(pgliteFolder(dataDir))) return;
  throw new TrellisError(
    'NOT_FOUND',
    `${dataDir} holds no Trellis data: start the server once with \`trellis serve\` to create the application, or point TRELLIS_DATA_DIR at the folder that holds it`,
  );
}

function unreachable(url: string, error: unknown, timeoutMs: number): RemoteError {
  const timedOut = (error as Error).name === 'TimeoutError';
  return new RemoteError(
    'UNAVAILABLE',
    timedOut
      ? `The Trellis server holding the data folder (${url}) did not answer within ${timeoutMs / 1000} s; try again, or stop it and run the command again`
      : `The Trellis server holding the data folder (${url}) cannot be reached (${networkCode(error)}); if it is no longer running, remove its trellis.lock and run the command again`,
  );
}

/** The system error code under a failed fetch (ECONNREFUSED, ...), which undici nests. */
function networkCode(error: unknown): string {
  const cause = (error as { cause?: { code?: string; errors?: { code?: string }[] } }).cause;
  return cause?.code ?? cause?.errors?.find((inner) => inner.code)?.code ?? 'no connection';
}
