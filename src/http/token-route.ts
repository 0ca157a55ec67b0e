import type { FastifyInstance } from 'fastify';
import { accountOf } from '../access/authenticate.js';
import type { Services } from '../services.js';

/**
 * `POST /api/auth/token {clientId, apiKey}` (docs/spec.md 4.3): exchanges an integration key for a bearer
 * access token. Wrong credentials answer the generic 401 and count toward the per-IP limit.
 */
export function registerTokenRoute(app: FastifyInstance, services: Services): void {
  app.post('/api/auth/token', async (request, reply) => {
    const issued = await services.auth.guard(request.ip, () => services.integrations.issueAccessToken(request.body), accountOf(request.body, 'clientId'));
    reply.header('cache-control', 'no-store');
    return { access_token: issued.accessToken, expires_in: issued.expiresIn, token_type: 'Bearer' };
  });
}
