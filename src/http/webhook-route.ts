import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { HookRequest } from '../hooks/run-contract.js';
import { TrellisError } from '../platform/errors.js';
import { WEBHOOK_FIXED_HEADERS, WITHHELD_HEADERS, mediaTypeOf, parseWebhookBody, queryOf, webhookReply } from '../runtime/webhooks.js';
import type { Services } from '../services.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * `POST /api/webhook/<Name>` (docs/spec.md 4.5, 5.4): no authentication, no CORS. The code gets the parsed
 * body as `instance` (JSON, a form as an object, text as a string; `null` without a body), the
 * request headers as `headers`, and the request as received as `request` (method, url, query,
 * headers, rawBody, contentType), so that it can check a provider's signature over the raw bytes.
 * Answers 200 with the code's return value as JSON, 204 when it returns `undefined`, or what the
 * code chose with `respond(status, body, headers)`; 405 for another method; 404 for an unknown name, 500 `HOOK_FAILED` when
 * the code throws or is stopped, 429 past the limit, 400 for a malformed body, 413 over 2 MB and
 * 415 for another media type.
 */
export function registerWebhookRoute(app: FastifyInstance, services: Services): void {
  const dispatcher = services.webhooks;
  // Its own parsers, in a scope of its own: the code needs the body's bytes, and providers send forms.
  void app.register(async (scope) => {
    // On every answer, an error's too, and over whatever the code chose.
    scope.addHook('onSend', async (_request, reply) => {
      reply.headers(WEBHOOK_FIXED_HEADERS);
    });
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    // Another method answers 405 whatever the name (a provider's check of the URL should not read "no such webhook").
    scope.route({
      method: ['GET', 'PUT', 'PATCH', 'DELETE'],
      url: '/api/webhook/:name',
      handler: async (request, reply) => {
        reply.header('allow', 'POST');
        throw new TrellisError('METHOD_NOT_ALLOWED', `Webhooks answer POST only, not ${request.method}`);
      },
    });
    scope.post<{ Params: { name: string } }>('/api/webhook/:name', async (request, reply) => {
      const webhookRequest = requestOf(request);
      const answer = await dispatcher.dispatch({
        name: request.params.name,
        body: parseWebhookBody(webhookRequest),
        headers: webhookRequest.headers,
        request: webhookRequest,
        ip: request.ip,
        requestId: request.id,
      });
      const { status, headers, body } = webhookReply(answer);
      return reply.status(status).headers(headers).send(body);
    });
  });
}

function requestOf(request: FastifyRequest): HookRequest {
  const headers = hookHeaders(request);
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  let rawBody: string;
  try {
    rawBody = utf8.decode(raw);
  } catch {
    throw new TrellisError('BAD_INPUT', 'Request body is not valid UTF-8');
  }
  const url = request.raw.url ?? request.url;
  return {
    method: request.method,
    url,
    query: queryOf(url),
    headers,
    rawBody,
    contentType: mediaTypeOf(headers),
  };
}

function hookHeaders(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || WITHHELD_HEADERS.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
