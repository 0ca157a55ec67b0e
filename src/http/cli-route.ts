import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { runCliCommand } from '../cli/commands.js';
import { safeEqual } from '../platform/crypto.js';
import { unauthenticated } from '../platform/errors.js';
import { parseInput } from '../platform/validation.js';
import type { Services } from '../services.js';

const body = z.object({ command: z.string().max(100), args: z.record(z.string(), z.unknown()) });

/**
 * `POST /api/internal/cli`: the CLI's door into a server that holds the embedded data folder.
 * Only a caller that can read the folder's lock file knows the token.
 */
export function registerCliRoute(app: FastifyInstance, services: Services, token: string): void {
  app.post('/api/internal/cli', async (request) => {
    const presented = request.headers['x-trellis-cli-token'];
    if (typeof presented !== 'string' || !safeEqual(presented, token)) throw unauthenticated();
    const { command, args } = parseInput(body, request.body, { storableText: false });
    return { result: await runCliCommand(services, command, args) };
  });
}
