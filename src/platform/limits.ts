import { TrellisError } from './errors.js';

/** 2 MB per request (spec section 8). */
export const BODY_LIMIT = 2 * 1024 * 1024;

/** Which limit refused a request: named in the 429's details (`limit`) and in the metrics. */
export type RateLimitKind = 'mcp' | 'webhook' | 'auth-failures';

/** Counts refusals by limit (the metrics' `trellis_rate_limit_refusals_total`). */
export interface RefusalCounter {
  inc(labels: { kind: RateLimitKind }): void;
}

/**
 * A fixed-window counter per key, in process memory. Rate limits are tracked per server instance
 * (spec section 8): with N replicas the effective ceiling is N times the limit.
 */
export class WindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly kind: RateLimitKind,
    private readonly refusals?: RefusalCounter,
  ) {}

  /** Counts one hit for `key`; throws RATE_LIMITED (with retryAfter seconds) past the limit. */
  hit(key: string, now = Date.now()): void {
    const window = this.current(key, now);
    window.count += 1;
    if (window.count > this.limit) throw this.limited(window, now);
  }

  /** Throws RATE_LIMITED when `key` is already over the limit, without counting. */
  check(key: string, now = Date.now()): void {
    if (this.over(key, now)) throw this.limited(this.windows.get(key)!, now);
  }

  /** Whether `key` has used up its hits in the current window. */
  over(key: string, now = Date.now()): boolean {
    const window = this.windows.get(key);
    return window !== undefined && now - window.start < this.windowMs && window.count >= this.limit;
  }

  private current(key: string, now: number) {
    let window = this.windows.get(key);
    if (!window || now - window.start >= this.windowMs) {
      if (this.windows.size > 10_000) this.sweep(now);
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    return window;
  }

  private limited(window: { start: number }, now: number): TrellisError {
    const retryAfter = Math.max(1, Math.ceil((window.start + this.windowMs - now) / 1000));
    this.refusals?.inc({ kind: this.kind });
    return new TrellisError('RATE_LIMITED', `Too many requests; retry in ${retryAfter} s`, { retryAfter, limit: this.kind });
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (now - window.start >= this.windowMs) this.windows.delete(key);
  }
}

/** Failures in a row after which a key is locked out, and the first and longest lockout. */
const LOCKOUT_AFTER_FAILURES = 5;
const LOCKOUT_FIRST_MS = 1_000;
const LOCKOUT_MAX_MS = 15 * 60_000;
/** A key with no failure for this long starts again from zero. */
const LOCKOUT_FORGET_MS = 60 * 60_000;

/**
 * Failed attempts in a row per key (an account at one address, for example): after
 * LOCKOUT_AFTER_FAILURES, further attempts on that key are refused for a time that doubles with
 * each further failure (1 s, 2 s, 4 s … at most 15 min); a success starts it again from zero.
 */
export class FailureLockout {
  private readonly keys = new Map<string, { failures: number; lockedUntil: number; lastFailure: number }>();

  constructor(private readonly refusals?: RefusalCounter) {}

  /** Throws RATE_LIMITED (with retryAfter seconds) while `key` is locked out. */
  check(key: string, now = Date.now()): void {
    const entry = this.keys.get(key);
    if (!entry || entry.lockedUntil <= now) return;
    const retryAfter = Math.max(1, Math.ceil((entry.lockedUntil - now) / 1000));
    this.refusals?.inc({ kind: 'auth-failures' });
    throw new TrellisError('RATE_LIMITED', `Too many failed attempts; retry in ${retryAfter} s`, { retryAfter, limit: 'auth-failures' satisfies RateLimitKind });
  }

  fail(key: string, now = Date.now()): void {
    let entry = this.keys.get(key);
    if (!entry || now - entry.lastFailure >= LOCKOUT_FORGET_MS) {
      if (this.keys.size > 10_000) this.sweep(now);
      entry = { failures: 0, lockedUntil: 0, lastFailure: now };
      this.keys.set(key, entry);
    }
    entry.failures += 1;
    entry.lastFailure = now;
    const beyond = entry.failures - LOCKOUT_AFTER_FAILURES;
    if (beyond >= 0) entry.lockedUntil = now + Math.min(LOCKOUT_FIRST_MS * 2 ** Math.min(beyond, 30), LOCKOUT_MAX_MS);
  }

  succeed(key: string): void {
    this.keys.delete(key);
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.keys) if (now - entry.lastFailure >= LOCKOUT_FORGET_MS && entry.lockedUntil <= now) this.keys.delete(key);
  }
}
