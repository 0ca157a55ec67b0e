import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';

/** The endpoints a browser may call from the application's allowed origins (docs/spec.md 5.3). */
const CORS_ROUTES = ['/graphql', '/api/auth/token'] as const;

const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, x-userid',
  'access-control-max-age': '600',
};

/**
 * CORS on /graphql and /api/auth/token for the origins listed in the application settings
 * (`corsOrigins`); a settings change applies at once. Bearer tokens, not cookies, carry the
 * credentials, so credentials are never allowed. Any other origin gets no CORS header at all: its
 * preflight is answered 204 without them, and the browser blocks the call.
 */
export function registerCors(app: FastifyInstance, services: Services): void {
  const routes = new Set<string>(CORS_ROUTES);
  app.addHook('onRequest', async (request, reply) => {
    if (!routes.has(request.routeOptions.url ?? '')) return;
    reply.header('vary', 'Origin');
    const origin = request.headers.origin;
    if (!origin || !(await services.application.allowsOrigin(origin))) return;
    reply.header('access-control-allow-origin', origin);
    if (request.method === 'OPTIONS') reply.headers(PREFLIGHT_HEADERS);
    else reply.header('access-control-expose-headers', 'retry-after');
  });
  for (const url of CORS_ROUTES) app.options(url, async (_request, reply) => reply.status(204).send());
}
