import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Unserialisable, type HostMember, type HookResponse } from './sandbox.js';

export const CONSOLE_MAX_LINES = 100;
export const CONSOLE_MAX_CHARS = 500;

/** The digests `crypto.hash` and `crypto.hmac` offer, and their encodings. */
const ALGORITHMS = new Set(['sha1', 'sha256', 'sha512']);
const ENCODINGS = new Set(['hex', 'base64', 'base64url']);

/** The key of the object `respond()` returns; its value is the run's brand, unknown to callers. */
const RESPONSE_BRAND_KEY = '__trellisResponse';
/** Headers the code may not set: the server frames the answer itself. */
const RESERVED_RESPONSE_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'trailer', 'te', 'set-cookie']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
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
    if (typeof value !== 'string' || /[\r\n\0]/.test(value) || value.length > 4096) {
      throw new TypeError(`${what}: the header '${lower}' must be a string of at most 4096 characters without line breaks`);
    }
    checked[lower] = value;
  }
  return { status, headers: checked, body };
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
