import { TrellisError } from './errors.js';

/**
 * A fixed-window counter per key, in process memory. Rate limits are tracked per server instance
 * (spec section 8): with N replicas the effective ceiling is N times the limit.
 */
export class WindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts one hit for `key`; throws RATE_LIMITED (with retryAfter seconds) past the limit. */
  hit(key: string, now = Date.now()): void {
    const window = this.current(key, now);
    window.count += 1;
    if (window.count > this.limit) throw this.limited(window, now);
  }

  /** Throws RATE_LIMITED when `key` is already over the limit, without counting. */
  check(key: string, now = Date.now()): void {
    const window = this.windows.get(key);
    if (window && now - window.start < this.windowMs && window.count >= this.limit) throw this.limited(window, now);
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
    return new TrellisError('RATE_LIMITED', `Too many requests; retry in ${retryAfter} s`, { retryAfter });
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (now - window.start >= this.windowMs) this.windows.delete(key);
  }
}
