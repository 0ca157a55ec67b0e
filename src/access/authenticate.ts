import type { FastifyRequest } from 'fastify';
import type { PlatformContext } from '../platform/context.js';
import { TrellisError, unauthenticated } from '../platform/errors.js';
import { WindowLimiter } from '../platform/limits.js';
import type { Principal } from './permissions.js';
import { SESSION_TOKEN_PREFIX, type AccessService } from './service.js';

/**
 * Turns a bearer credential into a Principal. Failed attempts are counted per client IP; past the
 * limit every attempt from that IP is refused with 429 until the window ends.
 */
export class Authenticator {
  private readonly failures: WindowLimiter;

  constructor(
    ctx: PlatformContext,
    private readonly access: AccessService,
  ) {
    this.failures = new WindowLimiter(ctx.config.authFailuresPerMinute, 60_000);
  }

  async principalForBearer(token: string, request: FastifyRequest): Promise<Principal> {
    return this.guard(request.ip, async () => {
      if (token.startsWith(SESSION_TOKEN_PREFIX)) return this.access.authenticateSession(token);
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
