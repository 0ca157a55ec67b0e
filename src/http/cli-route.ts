import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { runCliCommand } from '../cli/commands.js';
import { createBackup } from '../platform/backup.js';
import { safeEqual } from '../platform/crypto.js';
import { unauthenticated } from '../platform/errors.js';
import { parseInput } from '../platform/validation.js';
import type { Services } from '../services.js';

const body = z.object({ command: z.string().max(100), args: z.record(z.string(), z.unknown()) });

/**
 * The CLI's doors into a server that holds the embedded data folder. Only a caller that can read
 * the folder's lock file knows the token.
 * - `POST /api/internal/cli`: runs one CLI data command, answers `{ result }`.
 * - `POST /api/internal/backup`: answers the backup file (D24), taken between two transactions.
 */
export function registerCliRoute(app: FastifyInstance, services: Services, token: string): void {
  const requireToken = (request: FastifyRequest) => {
    const presented = request.headers['x-trellis-cli-token'];
    if (typeof presented !== 'string' || !safeEqual(presented, token)) throw unauthenticated();
  };
  app.post('/api/internal/cli', async (request) => {
    requireToken(request);
    const { command, args } = parseInput(body, request.body, { storableText: false });
    return { result: await runCliCommand(services, command, args) };
  });
  app.post('/api/internal/backup', async (request, reply) => {
    requireToken(request);
    const { database, config } = services.ctx;
    const backup = await createBackup({ database, dataDir: config.dataDir, secret: config.secret });
    return reply.type('application/octet-stream').send(backup);
  });
}
