import type { FastifyInstance } from 'fastify';
import { unauthenticated } from '../platform/errors.js';
import type { Services } from '../services.js';
import { accountOf } from '../access/authenticate.js';
import { bearerToken } from './auth.js';

/** `POST /api/auth/login {email, password}` and `POST /api/auth/logout`. */
export function registerAccessRoutes(app: FastifyInstance, services: Services): void {
  app.post('/api/auth/login', async (request) =>
    services.auth.guard(request.ip, () => services.access.login(request.body), accountOf(request.body, 'email')),
  );
  app.post('/api/auth/logout', async (request, reply) => {
    const token = bearerToken(request);
    if (!token) throw unauthenticated();
    await services.access.logout(token);
    return reply.status(204).send();
  });
}
