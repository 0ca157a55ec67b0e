import type { FastifyInstance, FastifyRequest } from 'fastify';
import { WebhookDispatcher } from '../runtime/webhooks.js';
import type { Services } from '../services.js';

/** Headers never handed to webhook code: a browser's cookies are no business of server-to-server calls. */
const WITHHELD_HEADERS = new Set(['cookie']);

/**
 * `POST /api/webhook/<Name>` (spec 4.5, 5.4): no authentication, no CORS. The JSON body becomes
 * `instance` (`null` for a request without a body), the request headers `headers`. Answers 200
 * with the code's return value as JSON, 204 when it returns `undefined`, 404 for an unknown name,
 * 500 `HOOK_FAILED` when the code throws or is stopped, 429 past the limit; the server's body
 * handling answers 400 (malformed JSON), 413 (over 2 MB) and 415 (not `application/json`).
 */
export function registerWebhookRoute(app: FastifyInstance, services: Services): void {
  const dispatcher = new WebhookDispatcher(services);
  app.post<{ Params: { name: string } }>('/api/webhook/:name', async (request, reply) => {
    const answer = await dispatcher.dispatch({
      name: request.params.name,
      body: request.body ?? null,
      headers: hookHeaders(request),
      ip: request.ip,
    });
    reply.header('cache-control', 'no-store');
    if (answer.value === undefined) return reply.status(204).send();
    return reply.status(200).type('application/json; charset=utf-8').send(JSON.stringify(answer.value));
  });
}

function hookHeaders(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || WITHHELD_HEADERS.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
