import type { FastifyRequest } from 'fastify';
import { ACCESS_TOKEN_PREFIX, type IntegrationService } from '../integrations/service.js';
import type { PlatformContext } from '../platform/context.js';
import { TrellisError, unauthenticated } from '../platform/errors.js';
import { WindowLimiter } from '../platform/limits.js';
import type { Principal } from './permissions.js';
import { SESSION_TOKEN_PREFIX, type AccessService } from './service.js';

/** The header with which an integration names the user it acts for (spec 4.4). */
export const ACTING_USER_HEADER = 'x-userid';

/**
 * Turns a bearer credential into a Principal. Failed attempts are counted per client IP; past the
 * limit every attempt from that IP is refused with 429 until the window ends.
 */
export class Authenticator {
  private readonly failures: WindowLimiter;

  constructor(
    ctx: PlatformContext,
    private readonly access: AccessService,
    private readonly integrations: IntegrationService,
  ) {
    this.failures = new WindowLimiter(ctx.config.authFailuresPerMinute, 60_000);
  }

  /**
   * The principal of a user session or an integration access token. `x-userid` is honoured with
   * an access token only: a signed-in user cannot act as someone else.
   */
  async principalForBearer(token: string, request: FastifyRequest): Promise<Principal> {
    return this.guard(request.ip, async () => {
      if (token.startsWith(SESSION_TOKEN_PREFIX)) return this.access.authenticateSession(token);
      if (token.startsWith(ACCESS_TOKEN_PREFIX)) return this.integrations.principalForAccessToken(token, actingUserId(request));
      throw unauthenticated();
    });
  }

  /** Runs an authentication attempt under the per-IP failure limit. */
  async guard<T>(ip: string, attempt: () => Promise<T>): Promise<T> {
    this.failures.check(ip);
    try {
      return await attempt();
    } catch (error) {
      if (error instanceof TrellisError && error.code === 'UNAUTHENTICATED') this.failures.hit(ip);
      throw error;
    }
  }
}

function actingUserId(request: FastifyRequest): string | undefined {
  const value = request.headers[ACTING_USER_HEADER];
  const userId = (Array.isArray(value) ? value[0] : value)?.trim();
  return userId || undefined;
}
