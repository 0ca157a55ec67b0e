import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TrellisError } from '../platform/errors.js';
import { parseJsonText } from '../platform/json.js';
import type { HookResponse } from '../runtime/sandbox.js';
import type { HookRequest } from '../runtime/service.js';
import { WebhookDispatcher } from '../runtime/webhooks.js';
import type { Services } from '../services.js';

/** Headers never handed to webhook code: a browser's cookies are no business of server-to-server calls. */
const WITHHELD_HEADERS = new Set(['cookie']);

/**
 * Set on every webhook answer, whatever the code chose: an answer the code builds from a caller's
 * input must never run as a page of the application's origin (where the designer keeps its session).
 */
const FIXED_HEADERS = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; sandbox",
  'x-content-type-options': 'nosniff',
} as const;

const UNSUPPORTED = 'Content-Type must be application/json, application/x-www-form-urlencoded or text/*';
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * `POST /api/webhook/<Name>` (spec 4.5, 5.4): no authentication, no CORS. The code gets the parsed
 * body as `instance` (JSON, a form as an object, text as a string; `null` without a body), the
 * request headers as `headers`, and the request as received as `request` (method, url, query,
 * headers, rawBody, contentType), so that it can check a provider's signature over the raw bytes.
 * Answers 200 with the code's return value as JSON, 204 when it returns `undefined`, or what the
 * code chose with `respond(status, body, headers)`; 405 for another method; 404 for an unknown name, 500 `HOOK_FAILED` when
 * the code throws or is stopped, 429 past the limit, 400 for a malformed body, 413 over 2 MB and
 * 415 for another media type.
 */
export function registerWebhookRoute(app: FastifyInstance, services: Services): void {
  const dispatcher = new WebhookDispatcher(services);
  // Its own parsers, in a scope of its own: the code needs the body's bytes, and providers send forms.
  void app.register(async (scope) => {
    // On every answer, an error's too, and over whatever the code chose.
    scope.addHook('onSend', async (_request, reply) => {
      reply.headers(FIXED_HEADERS);
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
        body: parseBody(webhookRequest),
        headers: webhookRequest.headers,
        request: webhookRequest,
        ip: request.ip,
        requestId: request.id,
      });
      if (answer.response) return sendResponse(reply, answer.response);
      if (answer.value === undefined) return reply.status(204).send();
      return reply.status(200).type('application/json; charset=utf-8').send(JSON.stringify(answer.value));
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
    contentType: (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase(),
  };
}

/** `instance`: JSON parsed, a form as an object, text as it is, null without a body. */
function parseBody(request: HookRequest): unknown {
  const { contentType, rawBody } = request;
  if (contentType === '' && rawBody === '') return null;
  if (contentType === 'application/json' || contentType.endsWith('+json')) {
    if (rawBody.trim() === '') throw new TrellisError('BAD_INPUT', 'Request body is empty; send a JSON value');
    return parseJsonText(rawBody);
  }
  if (contentType === 'application/x-www-form-urlencoded') return paramsObject(new URLSearchParams(rawBody));
  if (contentType.startsWith('text/') || contentType === 'application/xml') return rawBody;
  throw new TrellisError('UNSUPPORTED_MEDIA_TYPE', UNSUPPORTED);
}

function queryOf(url: string): Record<string, string | string[]> {
  const mark = url.indexOf('?');
  return paramsObject(new URLSearchParams(mark === -1 ? '' : url.slice(mark + 1)));
}

/** Parameters as an object without a prototype (a parameter may be named `__proto__`); a repeated name gives an array. */
function paramsObject(params: URLSearchParams): Record<string, string | string[]> {
  const object: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of params) {
    const seen = object[name];
    object[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return object;
}

function sendResponse(reply: FastifyReply, response: HookResponse): FastifyReply {
  reply.status(response.status);
  reply.headers(response.headers);
  if (response.body === undefined) return reply.send();
  if (typeof response.body === 'string') {
    if (!reply.hasHeader('content-type')) reply.type('text/plain; charset=utf-8');
    return reply.send(response.body);
  }
  if (!reply.hasHeader('content-type')) reply.type('application/json; charset=utf-8');
  return reply.send(JSON.stringify(response.body));
}

function hookHeaders(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || WITHHELD_HEADERS.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
