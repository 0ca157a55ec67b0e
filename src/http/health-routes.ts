import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';

/** `GET /healthz` (the process answers) and `GET /readyz` (the database answers too). */
export function registerHealthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    try {
      await services.ctx.database.ping();
      return { status: 'ready', database: services.ctx.database.kind };
    } catch (error) {
      request.log.warn({ err: error }, 'database not ready');
      return reply.status(503).send({ status: 'unavailable', database: services.ctx.database.kind });
    }
  });
}
