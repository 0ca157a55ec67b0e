import { ACCESS_TOKEN_PREFIX, type IntegrationService } from '../integrations/service.js';
import type { PlatformContext } from '../platform/context.js';
import { TrellisError, unauthenticated } from '../platform/errors.js';
import { FailureLockout, WindowLimiter } from '../platform/limits.js';
import type { Principal } from './permissions.js';
import type { AccessService } from './service.js';
import { SESSION_TOKEN_PREFIX } from './sessions.js';

/** The header with which an integration names the user it acts for (docs/spec.md 4.4). */
export const ACTING_USER_HEADER = 'x-userid';

/** What authentication reads of a request: the caller's address and the headers (lower-case names). */
export interface CredentialRequest {
  ip: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * Turns a bearer credential into a Principal, and throttles failed authentication without ever
 * refusing a valid credential because of somebody else's failures (docs/decisions.md D12):
 * - every credential is checked first: a valid session, MCP key, access token or integration key
 *   always passes. Past TRELLIS_AUTH_FAILURES_PER_MINUTE failures from one IP, a failure answers
 *   429 with Retry-After instead of 401;
 * - a password (or an integration's key) failing for one account from one IP locks that account
 *   for that IP only, for a time that doubles with each failure after the fifth; the same account
 *   from any other address, and other accounts from this one, are not affected.
 */
export class Authenticator {
  private readonly failures: WindowLimiter;
  private readonly lockouts: FailureLockout;
  /** Attempts being checked from IPs past the failure limit: one at a time each (see `guard`). */
  private readonly checkingOverLimit = new Set<string>();

  constructor(
    ctx: PlatformContext,
    private readonly access: AccessService,
    private readonly integrations: IntegrationService,
  ) {
    this.failures = new WindowLimiter(ctx.config.authFailuresPerMinute, 60_000, 'auth-failures', ctx.metrics.rateLimited);
    this.lockouts = new FailureLockout(ctx.metrics.rateLimited);
  }

  /**
   * The principal of a user session or an integration access token. `x-userid` is honoured with
   * an access token only: a signed-in user cannot act as someone else.
   */
  async principalForBearer(token: string, request: CredentialRequest): Promise<Principal> {
    return this.guard(request.ip, async () => {
      if (token.startsWith(SESSION_TOKEN_PREFIX)) return this.access.authenticateSession(token);
      if (token.startsWith(ACCESS_TOKEN_PREFIX)) return this.integrations.principalForAccessToken(token, actingUserId(request));
      throw unauthenticated();
    });
  }

  /**
   * Runs an authentication attempt under the failure limits. `account` (an e-mail or a clientId)
   * names what a guessable secret belongs to: while that account is locked out for this IP the
   * attempt is refused unchecked.
   */
  async guard<T>(ip: string, attempt: () => Promise<T>, account?: string): Promise<T> {
    const pair = account === undefined ? undefined : `${account.trim().toLowerCase()}\u0000${ip}`;
    if (pair) this.lockouts.check(pair);
    // An IP past the failure limit still has its credentials checked, one attempt at a time: a
    // flood of attempts in parallel from it is refused unchecked instead of costing a hash each.
    const overLimit = this.failures.over(ip);
    if (overLimit) {
      if (this.checkingOverLimit.has(ip)) this.failures.check(ip);
      this.checkingOverLimit.add(ip);
    }
    try {
      const result = await attempt();
      if (pair) this.lockouts.succeed(pair);
      return result;
    } catch (error) {
      if (!(error instanceof TrellisError) || error.code !== 'UNAUTHENTICATED') throw error;
      if (pair) this.lockouts.fail(pair);
      this.failures.hit(ip);
      throw error;
    } finally {
      if (overLimit) this.checkingOverLimit.delete(ip);
    }
  }
}

/** The account a request body names (`email` or `clientId`), when it is a string. */
export function accountOf(body: unknown, field: 'email' | 'clientId'): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as Record<string, unknown>)[field];
  return typeof value === 'string' && value.length <= 320 ? value : undefined;
}

function actingUserId(request: CredentialRequest): string | undefined {
  const value = request.headers[ACTING_USER_HEADER];
  const userId = (Array.isArray(value) ? value[0] : value)?.trim();
  return userId || undefined;
}
