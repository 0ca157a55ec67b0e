import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { HookResponse } from '../hooks/run-contract.js';
import { Unserialisable, type HostMember } from './sandbox-types.js';

export const CONSOLE_MAX_LINES = 100;
export const CONSOLE_MAX_CHARS = 500;

/** The digests `crypto.hash` and `crypto.hmac` offer, and their encodings. */
const ALGORITHMS = new Set(['sha1', 'sha256', 'sha512']);
const ENCODINGS = new Set(['hex', 'base64', 'base64url']);

/** The key of the object `respond()` returns; its value is the run's brand, unknown to callers. */
const RESPONSE_BRAND_KEY = '__trellisResponse';
/** Headers the code may not set: the server frames the answer itself. */
const RESERVED_RESPONSE_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'trailer', 'te', 'set-cookie']);
/** A field name: an RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** What RFC 9110 refuses in a field value: anything but tab, space, visible ASCII and obs-text (U+0080 to U+00FF). */
const REFUSED_IN_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/u;
const MAX_HEADER_VALUE_CHARS = 4096;
const MAX_RESPONSE_HEADERS = 50;

/**
 * The synchronous capabilities every run gets: `console`, `crypto` and `respond`. They run beside
 * the engine (in its worker thread), so a hook calling them never waits for the server's thread.
 * `responseBrand` is a random value of this run only: `respond()` marks its answer with it, so a
 * caller's body echoed back by the code can never pass for one (see `unwrapResponse`).
 */
export function guestLibrary(consoleLines: string[], responseBrand: string): Record<string, HostMember | Record<string, HostMember>> {
  const logger = (level: string): HostMember => ({
    sync: (args) => {
      if (consoleLines.length < CONSOLE_MAX_LINES) consoleLines.push(`[${level}] ${args.map(shown).join(' ')}`.slice(0, CONSOLE_MAX_CHARS));
    },
  });
  return {
    console: { log: logger('log'), info: logger('info'), warn: logger('warn'), error: logger('error') },
    crypto: {
      sha256: { sync: ([data]) => createHash('sha256').update(text(data, 'crypto.sha256(data): data')).digest('hex') },
      hmacSha256: {
        sync: ([key, data]) =>
          createHmac('sha256', text(key, 'crypto.hmacSha256(key, data): key'))
            .update(text(data, 'crypto.hmacSha256(key, data): data'))
            .digest('hex'),
      },
      timingSafeEqual: {
        sync: ([a, b]) => timingSafeEqual(digest(text(a, 'crypto.timingSafeEqual(a, b): a')), digest(text(b, 'crypto.timingSafeEqual(a, b): b'))),
      },
      hash: {
        sync: ([algorithm, data, encoding]) => {
          const what = 'crypto.hash(algorithm, data, encoding)';
          return createHash(algorithmOf(algorithm, what)).update(text(data, `${what}: data`)).digest(encodingOf(encoding, what));
        },
      },
      hmac: {
        sync: ([algorithm, key, data, encoding]) => {
          const what = 'crypto.hmac(algorithm, key, data, encoding)';
          return createHmac(algorithmOf(algorithm, what), text(key, `${what}: key`))
            .update(text(data, `${what}: data`))
            .digest(encodingOf(encoding, what));
        },
      },
    },
    respond: { sync: ([status, body, headers]) => ({ [RESPONSE_BRAND_KEY]: responseBrand, ...checkedResponse(status, body, headers) }) },
  };
}

/**
 * Why Node would refuse to send `response`, checked with Node's own validators on the server's
 * thread before the run is recorded: an answer `respond()` let through must still never fail on
 * its way out (a 500 without the webhook's fixed headers, a run logged as ok). Undefined when it
 * can be sent.
 */
export function unsendableResponse(response: HookResponse): string | undefined {
  const what = 'respond(status, body, headers)';
  if (!Number.isInteger(response.status) || response.status < 200 || response.status > 599) return `${what}: status ${String(response.status)} cannot be sent`;
  for (const [name, value] of Object.entries(response.headers)) {
    try {
      if (typeof value !== 'string') throw new TypeError('not a string');
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch (error) {
      return `${what}: ${headerValueProblem(name, value) ?? `the header '${name.slice(0, 100)}' cannot be sent (${(error as Error).message})`}`;
    }
  }
  return undefined;
}

/** The webhook answer `value` stands for when `respond()` of this run made it; undefined otherwise. */
export function unwrapResponse(value: unknown, responseBrand: string): HookResponse | undefined {
  if (typeof value !== 'object' || value === null || (value as Record<string, unknown>)[RESPONSE_BRAND_KEY] !== responseBrand) return undefined;
  const { status, headers, body } = value as HookResponse;
  return { status, headers, body };
}

function checkedResponse(status: unknown, body: unknown, headers: unknown): HookResponse {
  const what = 'respond(status, body, headers)';
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
    throw new TypeError(`${what}: status must be an integer from 200 to 599`);
  }
  if (body instanceof Unserialisable) throw new TypeError(`${what}: body must be a string or a JSON value`);
  if (headers === undefined || headers === null) return { status, headers: {}, body };
  if (typeof headers !== 'object' || Array.isArray(headers) || headers instanceof Unserialisable) throw new TypeError(`${what}: headers must be an object of strings`);
  const entries = Object.entries(headers);
  if (entries.length > MAX_RESPONSE_HEADERS) throw new TypeError(`${what}: at most ${MAX_RESPONSE_HEADERS} headers`);
  const checked: Record<string, string> = {};
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) throw new TypeError(`${what}: '${name.slice(0, 100)}' is not a valid header name`);
    if (RESERVED_RESPONSE_HEADERS.has(lower)) throw new TypeError(`${what}: the header '${lower}' is set by the server`);
    const problem = headerValueProblem(lower, value);
    if (problem) throw new TypeError(`${what}: ${problem}`);
    checked[lower] = value as string;
  }
  return { status, headers: checked, body };
}

/** What HTTP's rules (RFC 9110, field-value) refuse in the value of the header `name`; undefined when nothing. */
function headerValueProblem(name: string, value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_HEADER_VALUE_CHARS) return `the header '${name}' must be a string of at most ${MAX_HEADER_VALUE_CHARS} characters`;
  const refused = REFUSED_IN_HEADER_VALUE.exec(value);
  if (refused) {
    const codePoint = `U+${refused[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    return `the header '${name}' has ${codePoint} at position ${refused.index}, which HTTP does not allow in a header value (tab, space, visible ASCII and U+0080 to U+00FF only)`;
  }
  if (/^[\t ]|[\t ]$/.test(value)) return `the header '${name}' begins or ends with a space or tab, which HTTP does not keep`;
  return undefined;
}

function algorithmOf(value: unknown, what: string): string {
  if (typeof value !== 'string' || !ALGORITHMS.has(value)) throw new TypeError(`${what}: algorithm must be one of ${[...ALGORITHMS].join(', ')}`);
  return value;
}

function encodingOf(value: unknown, what: string): 'hex' | 'base64' | 'base64url' {
  if (value === undefined) return 'hex';
  if (typeof value !== 'string' || !ENCODINGS.has(value)) throw new TypeError(`${what}: encoding must be one of ${[...ENCODINGS].join(', ')}`);
  return value as 'hex' | 'base64' | 'base64url';
}

/** A console argument as text: a string as it is, others as JSON, or as `String(value)` when JSON cannot show them. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Unserialisable) return value.text;
  return value === undefined ? 'undefined' : JSON.stringify(value);
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new TypeError(`${what} must be a string`);
  return value;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
