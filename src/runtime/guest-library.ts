import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Unserialisable, type HostMember } from './sandbox.js';

export const CONSOLE_MAX_LINES = 100;
export const CONSOLE_MAX_CHARS = 500;

/**
 * The synchronous capabilities every run gets, `console` and `crypto`. They run beside the engine
 * (in its worker thread), so a hook calling them never waits for the server's thread.
 */
export function guestLibrary(consoleLines: string[]): Record<string, Record<string, HostMember>> {
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
    },
  };
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
