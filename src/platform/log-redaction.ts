// What a log line may not show: secrets a caller passed in a logged object. pino's own `redact`
// with wildcard paths (`*.password`) runs every field of every line through a generic path walker
// that copies and re-parses its paths on each call: on a busy server that was a large share of
// the allocation of each request (docs/benchmarks.md, session 17). These formatters do the same
// censoring with a look at each field's type, and copy only the objects they censor. A child
// logger's bindings, which pino formats apart, are censored by the same function when the child is
// made (`censoringBindings`).
import type { Logger } from 'pino';

/** What a censored value reads. */
export const LOG_CENSOR = '[redacted]';

/** Keys censored in any object one level down in a line (`{ input: { password: '…' } }`): pino's `*.password` and the like. */
const SECRET_KEYS: ReadonlySet<string> = new Set(['password', 'apiKey', 'token', 'value']);

/**
 * `record` with its secrets censored: the SECRET_KEYS of each object it holds one level down,
 * `headers.authorization` and `req.headers.authorization`. The record itself when nothing is to be
 * censored; otherwise a copy (the caller's objects are never changed).
 *
 * @example censorLogRecord({ input: { email: 'a@example.com', password: 'x' } }) // { input: { email: 'a@example.com', password: '[redacted]' } }
 */
export function censorLogRecord(record: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key in record) {
    if (!Object.prototype.hasOwnProperty.call(record, key)) continue;
    const value = record[key];
    if (typeof value !== 'object' || value === null) continue;
    let censored = censorSecrets(value as Record<string, unknown>);
    if (key === 'headers') censored = censorKey(censored, 'authorization');
    else if (key === 'req') censored = censorHeaders(censored);
    if (censored !== value) {
      copy ??= { ...record };
      copy[key] = censored;
    }
  }
  return copy ?? record;
}

/** `object` with its SECRET_KEYS censored (a copy), or itself when it has none. */
function censorSecrets(object: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key of SECRET_KEYS) {
    if (!Object.prototype.hasOwnProperty.call(object, key) || object[key] === undefined) continue;
    copy ??= copyOf(object);
    copy[key] = LOG_CENSOR;
  }
  return copy ?? object;
}

function censorKey(object: Record<string, unknown>, key: string): Record<string, unknown> {
  if (!Object.prototype.hasOwnProperty.call(object, key) || object[key] === undefined) return object;
  return { ...copyOf(object), [key]: LOG_CENSOR };
}

function censorHeaders(request: Record<string, unknown>): Record<string, unknown> {
  const headers = request.headers;
  if (typeof headers !== 'object' || headers === null) return request;
  const censored = censorKey(headers as Record<string, unknown>, 'authorization');
  return censored === headers ? request : { ...copyOf(request), headers: censored };
}

/** A shallow copy that keeps what JSON shows of an Error (its message and stack are not own enumerable). */
function copyOf(object: Record<string, unknown>): Record<string, unknown> {
  if (Array.isArray(object)) return Object.assign([], object) as unknown as Record<string, unknown>;
  if (object instanceof Error) return { ...object, type: object.name, message: object.message, stack: object.stack };
  return { ...object };
}

/**
 * `logger`, whose child loggers' bindings are censored as its lines are (pino formats bindings
 * apart from `formatters.log`). A child is made from its parent's prototype chain, so the root's
 * `child` serves every generation.
 */
export function censoringBindings(logger: Logger): Logger {
  const child = logger.child;
  logger.child = function (this: Logger, bindings, childOptions) {
    return child.call(this, censorLogRecord(bindings), childOptions);
  } as Logger['child'];
  return logger;
}
