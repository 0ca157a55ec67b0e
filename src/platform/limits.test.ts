import { describe, expect, it } from 'vitest';
import type { TrellisError } from './errors.js';
import { FailureLockout, WindowLimiter, type RateLimitKind } from './limits.js';

/** A RefusalCounter that keeps the kinds it was told. */
function counter() {
  const kinds: RateLimitKind[] = [];
  return { kinds, inc: ({ kind }: { kind: RateLimitKind }) => kinds.push(kind) };
}

/** What a refusal with these details looks like, thrown. */
const refused = (details: { retryAfter: number; limit: RateLimitKind }, message?: string) =>
  expect.objectContaining({ code: 'RATE_LIMITED', details, ...(message === undefined ? {} : { message }) }) as unknown as TrellisError;

/** The number of keys a limiter holds in memory. */
const held = (limiter: WindowLimiter | FailureLockout) => ((limiter as unknown as { windows?: Map<string, unknown>; keys?: Map<string, unknown> }).windows ?? (limiter as unknown as { keys: Map<string, unknown> }).keys).size;

describe('WindowLimiter', () => {
  it('refuses the hit past the limit with the seconds left in the window, counts the refusal, and starts again in the next window', () => {
    const refusals = counter();
    const limiter = new WindowLimiter(3, 60_000, 'webhook', refusals);
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i += 1) limiter.hit('a', t0 + i);
    expect(limiter.over('a', t0 + 10)).toBe(true);
    expect(limiter.over('b', t0 + 10)).toBe(false);
    expect(() => limiter.hit('a', t0 + 20_500)).toThrow(refused({ retryAfter: 40, limit: 'webhook' }, 'Too many requests; retry in 40 s'));
    // check() refuses without counting a hit; another key is not touched.
    expect(() => limiter.check('a', t0 + 59_999)).toThrow(refused({ retryAfter: 1, limit: 'webhook' }));
    limiter.check('b', t0);
    expect(refusals.kinds).toEqual(['webhook', 'webhook']);
    // The next window starts from zero.
    expect(limiter.over('a', t0 + 60_000)).toBe(false);
    limiter.check('a', t0 + 60_000);
    limiter.hit('a', t0 + 60_000);
    expect(limiter.over('a', t0 + 60_000)).toBe(false);
  });

  it('forgets the keys of past windows once it holds more than 10 000, and keeps those of the current one', () => {
    const limiter = new WindowLimiter(5, 60_000, 'mcp');
    const t0 = 5_000_000;
    for (let i = 0; i <= 10_000; i += 1) limiter.hit(`old-${i}`, t0);
    for (let i = 0; i < 5; i += 1) limiter.hit('current', t0 + 30_000);
    expect(held(limiter)).toBe(10_002);
    limiter.hit('new', t0 + 60_000);
    expect(held(limiter)).toBe(2);
    expect(limiter.over('current', t0 + 60_000)).toBe(true);
  });
});

describe('FailureLockout', () => {
  it('locks a key out after five failures in a row, for 1 s, then twice as long at each failure, at most 15 minutes', () => {
    const refusals = counter();
    const lockout = new FailureLockout(refusals);
    const t0 = 2_000_000;
    for (let i = 0; i < 4; i += 1) lockout.fail('k', t0);
    lockout.check('k', t0);
    lockout.fail('k', t0);
    expect(() => lockout.check('k', t0)).toThrow(refused({ retryAfter: 1, limit: 'auth-failures' }));
    lockout.check('k', t0 + 1_000);
    lockout.fail('k', t0 + 1_000);
    expect(() => lockout.check('k', t0 + 1_000)).toThrow(refused({ retryAfter: 2, limit: 'auth-failures' }, 'Too many failed attempts; retry in 2 s'));
    for (let i = 0; i < 40; i += 1) lockout.fail('k', t0 + 2_000);
    expect(() => lockout.check('k', t0 + 2_000)).toThrow(refused({ retryAfter: 900, limit: 'auth-failures' }));
    expect(refusals.kinds).toEqual(['auth-failures', 'auth-failures', 'auth-failures']);
    // Another key is not locked; a success starts the key again from zero.
    lockout.check('other', t0 + 2_000);
    lockout.succeed('k');
    lockout.check('k', t0 + 2_000);
    lockout.fail('k', t0 + 2_000);
    lockout.check('k', t0 + 2_000);
  });

  it('starts a key again from zero after an hour without failure, and forgets such keys once it holds more than 10 000', () => {
    const lockout = new FailureLockout();
    const t0 = 3_000_000;
    for (let i = 0; i < 4; i += 1) lockout.fail('k', t0);
    lockout.fail('k', t0 + 3_600_000);
    lockout.check('k', t0 + 3_600_000);
    for (let i = 0; i <= 10_000; i += 1) lockout.fail(`old-${i}`, t0);
    expect(held(lockout)).toBe(10_002);
    lockout.fail('new', t0 + 3_600_000);
    expect(held(lockout)).toBe(2);
  });
});
