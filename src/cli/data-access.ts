import { existsSync } from 'node:fs';
import { request } from 'node:http';
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
 * POSTs `body` to `path` of the server that holds the folder, authenticated by the lock's token,
 * and resolves with the whole answer's body when it is 2xx; throws RemoteError with the server's
 * error otherwise, or UNAVAILABLE when the server does not answer (body included) within
 * `timeoutMs` or cannot be reached. Node's own `http`, not `fetch`: loading fetch's client took
 * ~0.1 s of every command's start.
 */
export function postToServer(lock: DataDirLock, path: string, body: unknown, timeoutMs = REMOTE_TIMEOUT_MS): Promise<Buffer> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    let settled = false;
    let timedOut = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const fail = (error: unknown) => settle(() => reject(unreachable(lock.url, error, timedOut, timeoutMs)));
    const sent = request(
      `${lock.url}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'x-trellis-cli-token': lock.token } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('error', fail);
        answer.on('close', () => {
          if (!answer.complete) return fail(new Error('the answer was cut short'));
          const data = Buffer.concat(chunks);
          const status = answer.statusCode ?? 0;
          settle(() => (status >= 200 && status < 300 ? resolve(data) : reject(remoteError(status, data))));
        });
      },
    );
    const timer = setTimeout(() => {
      timedOut = true;
      sent.destroy();
      fail(new Error('timeout'));
    }, timeoutMs);
    sent.on('error', fail);
    sent.end(payload);
  });
}

/** The error a non-2xx answer carries (the REST error body), as the CLI reports it. */
function remoteError(status: number, data: Buffer): RemoteError {
  let answer: { error?: { code?: string; message?: string } } = {};
  try {
    answer = JSON.parse(data.toString('utf8')) as typeof answer;
  } catch {
    // Not JSON: the status says what there is to say.
  }
  return new RemoteError(answer.error?.code ?? 'ERROR', answer.error?.message ?? `HTTP ${status}`);
}

/** Refuses a folder without a database: only `serve` creates an application, and nobody would serve a second one. */
export function requireTrellisData(dataDir: string): void {
  if (existsSync(pgliteFolder(dataDir))) return;
  throw new TrellisError(
    'NOT_FOUND',
    `${dataDir} holds no Trellis data: start the server once with \`trellis serve\` to create the application, or point TRELLIS_DATA_DIR at the folder that holds it`,
  );
}

function unreachable(url: string, error: unknown, timedOut: boolean, timeoutMs: number): RemoteError {
  return new RemoteError(
    'UNAVAILABLE',
    timedOut
      ? `The Trellis server holding the data folder (${url}) did not answer within ${timeoutMs / 1000} s; try again, or stop it and run the command again`
      : `The Trellis server holding the data folder (${url}) cannot be reached (${networkCode(error)}); if it is no longer running, remove its trellis.lock and run the command again`,
  );
}

/** The system error code of a failed connection (ECONNREFUSED, ...); an AggregateError's first (one per address tried). */
function networkCode(error: unknown): string {
  const failed = error as { code?: string; errors?: { code?: string }[] };
  return failed.code ?? failed.errors?.find((inner) => inner.code)?.code ?? 'no connection';
}
