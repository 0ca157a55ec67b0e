import { describe, expect, it } from 'vitest';
import type { PlatformContext } from '../platform/context.js';
import { TrellisError, unauthenticated } from '../platform/errors.js';
import { Authenticator } from './authenticate.js';

/** An authenticator allowing `limit` failures per IP and minute; it needs nothing else of the context here. */
function authenticator(limit: number): Authenticator {
  const ctx = { config: { authFailuresPerMinute: limit }, metrics: { rateLimited: { inc: () => {} } } } as unknown as PlatformContext;
  return new Authenticator(ctx, {} as never, {} as never);
}

const codeOf = (outcome: PromiseSettledResult<unknown>) =>
  outcome.status === 'fulfilled' ? 'ok' : outcome.reason instanceof TrellisError ? outcome.reason.code : String(outcome.reason);

describe('Authenticator.guard', () => {
  it('checks the attempts of an IP past the failure limit one at a time, refusing the others unchecked, and still lets a valid one pass', async () => {
    const guard = authenticator(2);
    let checked = 0;
    const wrong = () =>
      guard.guard('203.0.113.7', async () => {
        checked += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw unauthenticated();
      });
    // Under the limit, attempts in parallel are all checked.
    expect((await Promise.allSettled([wrong(), wrong()])).map(codeOf)).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED']);
    expect(checked).toBe(2);
    // Past it: ten at once cost one check; the other nine are refused at once.
    checked = 0;
    expect((await Promise.allSettled(Array.from({ length: 10 }, wrong))).map(codeOf)).toEqual(Array(10).fill('RATE_LIMITED'));
    expect(checked).toBe(1);
    // One at a time, each is checked, and a valid credential passes.
    expect(codeOf((await Promise.allSettled([wrong()]))[0]!)).toBe('RATE_LIMITED');
    expect(checked).toBe(2);
    expect(await guard.guard('203.0.113.7', async () => 'valid')).toBe('valid');
    // Other addresses are not affected.
    expect(await Promise.all([1, 2, 3].map(() => guard.guard('198.51.100.1', async () => 'valid')))).toEqual(['valid', 'valid', 'valid']);
  });
});
