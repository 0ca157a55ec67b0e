import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { TrellisError } from '../platform/errors.js';
import { isLoopbackHost } from './loopback.js';
import type { Services } from '../services.js';

const LOOPBACK = /^(?:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

/**
 * `GET /metrics`: Prometheus exposition text. With TRELLIS_METRICS_TOKEN set, the caller sends it as
 * a bearer token; without, only a caller on this machine that came through no proxy and names a
 * loopback host may read it (a forwarded request from a proxy on the same machine is refused, and
 * so is a page of another site that rebinds its DNS name to this machine).
 */
export function registerMetricsRoute(app: FastifyInstance, services: Services): void {
  const { metrics, config } = services.ctx;
  const expected = config.metricsToken ? Buffer.from(`Bearer ${config.metricsToken}`) : undefined;
  app.get('/metrics', async (request, reply) => {
    if (expected) {
      const given = Buffer.from(request.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        reply.header('www-authenticate', 'Bearer realm="trellis-metrics"');
        throw new TrellisError('UNAUTHENTICATED', 'GET /metrics needs the bearer token set in TRELLIS_METRICS_TOKEN');
      }
    } else if (!directLoopback(request)) {
      throw new TrellisError('FORBIDDEN', 'GET /metrics answers only callers on this machine that address it as localhost or 127.0.0.1, through no proxy; set TRELLIS_METRICS_TOKEN to read it from elsewhere with that bearer token');
    }
    const { contentType, body } = await metrics.scrape();
    return reply.type(contentType).header('cache-control', 'no-store').send(body);
  });
}

function directLoopback(request: FastifyRequest): boolean {
  const forwarded = request.headers['x-forwarded-for'] !== undefined || request.headers.forwarded !== undefined || request.headers['x-real-ip'] !== undefined;
  return !forwarded && LOOPBACK.test(request.socket.remoteAddress ?? '') && isLoopbackHost(request.hostname);
}
