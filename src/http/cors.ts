import type { FastifyInstance } from 'fastify';
import { ReadCache } from '../platform/read-cache.js';
import type { Services } from '../services.js';

/** The endpoints a browser may call from the application's allowed origins (spec 5.3). */
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
  const allowedOrigins = new AllowedOrigins(services);
  const routes = new Set<string>(CORS_ROUTES);
  app.addHook('onRequest', async (request, reply) => {
    if (!routes.has(request.routeOptions.url ?? '')) return;
    reply.header('vary', 'Origin');
    const origin = request.headers.origin;
    if (!origin || !(await allowedOrigins.includes(origin))) return;
    reply.header('access-control-allow-origin', origin);
    if (request.method === 'OPTIONS') reply.headers(PREFLIGHT_HEADERS);
    else reply.header('access-control-expose-headers', 'retry-after');
  });
  for (const url of CORS_ROUTES) app.options(url, async (_request, reply) => reply.status(204).send());
}

/** The allowed origins of the application settings, read again after every configuration change. */
class AllowedOrigins {
  private readonly cache: ReadCache<ReadonlySet<string>>;

  constructor(private readonly services: Services) {
    this.cache = new ReadCache(services.ctx.changes);
  }

  async includes(origin: string): Promise<boolean> {
    const cached = this.cache.get('origins');
    if (cached) return cached.has(origin);
    const generation = this.cache.generation();
    const { corsOrigins } = await this.services.application.read();
    const origins = new Set(corsOrigins.flatMap(serializedOrigin));
    this.cache.set('origins', origins, generation);
    return origins.has(origin);
  }
}

/** An origin as a browser sends it: lower-case scheme and host, no default port. */
function serializedOrigin(origin: string): string[] {
  try {
    return [new URL(origin).origin];
  } catch {
    return [];
  }
}
