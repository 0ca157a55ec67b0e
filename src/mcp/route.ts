import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../access/permissions.js';
import { bearerToken, requestBaseUrl } from '../http/auth.js';
import { isLoopbackHost } from '../http/loopback.js';
import { TrellisError, toTrellisError, unauthenticated } from '../platform/errors.js';
import { WindowLimiter } from '../platform/limits.js';
import type { Services } from '../services.js';
import { rawJsonOf, runTool } from './run-tool.js';
import { loadSdk, type Sdk } from './sdk.js';
import { buildMcpServer } from './server-factory.js';
import { TOOLS_BY_NAME } from './tools/index.js';
import { BODY_LIMIT } from '../platform/limits.js';
import { withFields } from '../platform/objects.js';

/** 60 requests per minute per key (spec section 8). */
export const MCP_REQUESTS_PER_MINUTE = 60;

interface McpCaller {
  principal: Principal;
  keyId: string;
}

type JsonRpcId = string | number | null;

/**
 * `POST /api/mcp`: stateless Streamable HTTP. Authentication, the Origin check and the per-key
 * limit run here; `tools/call` of the 2025 protocol generation is answered directly, everything
 * else goes to the official SDK (a fresh McpServer per request).
 */
export function registerMcpRoute(app: FastifyInstance, services: Services, options: { requestsPerMinute?: number } = {}): void {
  const limiter = new WindowLimiter(options.requestsPerMinute ?? MCP_REQUESTS_PER_MINUTE, 60_000, 'mcp', services.ctx.metrics.rateLimited);
  const toolLists = new Map<string, unknown>();
  const publicUrl = services.ctx.config.publicUrl === undefined ? undefined : new URL(services.ctx.config.publicUrl);
  let modernHandler: McpHttpHandler | undefined;
  const modern = (sdk: Sdk) =>
    (modernHandler ??= sdk.createMcpHandler((context) => buildMcpServer(sdk, services, ...callerOf(context.authInfo)), {
      legacy: 'reject',
      // 'auto' answers plain JSON unless a tool streams progress first, which Trellis tools never do.
      responseMode: 'auto',
      onerror: () => {},
    }));

  // A scope of its own: a body that cannot be parsed is answered as JSON-RPC, not as a REST error.
  void app.register(async (scope) => {
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      const answer = jsonRpcRequestError(error);
      if (answer.status >= 500) request.log.error({ err: error }, 'MCP request failed');
      // A database that is down (503) or a limit (429) says when to try again, as the REST endpoints do.
      const { retryAfter } = error instanceof TrellisError ? error : toTrellisError(error);
      if (retryAfter !== undefined && !reply.hasHeader('retry-after')) reply.header('retry-after', String(retryAfter));
      return reply.status(answer.status).send(jsonRpcError(null, answer.code, answer.message));
    });
    scope.route({
      method: ['GET', 'DELETE', 'PUT', 'PATCH'],
      url: '/api/mcp',
      handler: async (_request, reply) =>
        reply
          .status(405)
          .header('allow', 'POST')
          .send(jsonRpcError(null, -32000, 'Method not allowed: this MCP server is stateless and serves POST only')),
    });

    scope.post('/api/mcp', async (request, reply) => {
      try {
        return await handle(request, reply);
      } catch (error) {
        if (!(error instanceof TrellisError) || error.status >= 500) throw error;
        if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
        return reply.status(error.status).send(jsonRpcError(idOf(request.body), -32000, error.message));
      }
    });
  });

  async function handle(request: FastifyRequest, reply: FastifyReply) {
    const refusal = await hostOrOriginRefusal(request, services, publicUrl);
    if (refusal) return reply.status(403).send(jsonRpcError(null, -32000, `Forbidden: ${refusal}`));
    const caller = await authenticate(services, request);
    if (!caller) {
      return reply
        .status(401)
        .header('www-authenticate', 'Bearer realm="trellis"')
        .send(jsonRpcError(idOf(request.body), -32001, 'Unauthorized: send a valid MCP key as Authorization: Bearer <key>'));
    }
    limiter.hit(caller.keyId);
    if (Array.isArray(request.body)) {
      const message = request.body.length === 0 ? 'Invalid Request: an empty batch' : 'Invalid Request: JSON-RPC batches are not supported; send one message per request';
      return reply.status(400).send(jsonRpcError(null, -32600, message));
    }
    const sdk = await loadSdk();
    const route = sdk.classifyInboundRequest({
      httpMethod: 'POST',
      body: request.body,
      protocolVersionHeader: header(request, 'mcp-protocol-version'),
      mcpMethodHeader: header(request, 'mcp-method'),
      mcpNameHeader: header(request, 'mcp-name'),
    });
    const toolCall = toolCallOf(request.body);
    if (route.kind === 'modern') {
      const early = toolCall && (await precheckToolCall(services, caller, toolCall));
      // The 2026-07-28 revision requires the result's kind on every result.
      if (early) return reply.send({ jsonrpc: '2.0', id: toolCall.id, result: withFields(early, { resultType: 'complete' }) });
      return forward(reply, await modern(sdk).fetch(webRequest(request), { authInfo: authInfoOf(caller), parsedBody: request.body }));
    }
    const listId = toolsListIdOf(request.body);
    if (route.kind === 'legacy' && (toolCall || listId !== undefined)) {
      const refused = legacyHeaderRefusal(sdk, request);
      if (refused) return reply.status(refused.status).send(jsonRpcError(null, -32000, refused.message));
      if (toolCall) {
        const answer = await answerToolCall(services, caller, toolCall);
        return typeof answer === 'string' ? reply.header('content-type', 'application/json; charset=utf-8').send(answer) : reply.send(answer);
      }
      const cached = toolLists.get(scopeKey(caller.principal));
      if (cached) return reply.send({ jsonrpc: '2.0', id: listId, result: cached });
    }
    const response = await serveLegacy(sdk, services, caller, request);
    if (listId !== undefined && response.ok) return sendAndRememberToolList(reply, response, scopeKey(caller.principal));
    return forward(reply, response);
  }

  /** The SDK's own `tools/list` answer for a set of scopes, kept for the next request with the same set. */
  async function sendAndRememberToolList(reply: FastifyReply, response: Response, key: string) {
    const text = await response.text();
    const message = JSON.parse(text) as { result?: unknown };
    if (message.result) toolLists.set(key, message.result);
    reply.status(response.status).header('content-type', 'application/json');
    return reply.send(text);
  }
}

function scopeKey(principal: Principal): string {
  return [...principal.permissions].sort().join(' ');
}

function toolsListIdOf(body: unknown): JsonRpcId | undefined {
  const message = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { cursor?: unknown } };
  if (!message || message.jsonrpc !== '2.0' || message.method !== 'tools/list') return undefined;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return undefined;
  return message.params?.cursor === undefined ? message.id : undefined;
}

async function authenticate(services: Services, request: FastifyRequest): Promise<McpCaller | undefined> {
  const token = bearerToken(request);
  try {
    return await services.auth.guard(request.ip, async () => {
      if (!token) throw unauthenticated();
      const resolved = await services.keys.resolveMcpKey(token);
      return { principal: withFields(resolved.principal, { requestId: request.id, baseUrl: requestBaseUrl(request, services.ctx.config.publicUrl) }), keyId: resolved.keyId };
    });
  } catch (error) {
    if (error instanceof TrellisError && error.code === 'UNAUTHENTICATED') return undefined;
    throw error;
  }
}

interface ToolCall {
  id: JsonRpcId;
  name: string;
  arguments: unknown;
}

function toolCallOf(body: unknown): ToolCall | undefined {
  const message = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } };
  if (!message || message.jsonrpc !== '2.0' || message.method !== 'tools/call' || message.id === undefined) return undefined;
  if (typeof message.params?.name !== 'string') return undefined;
  return { id: message.id as JsonRpcId, name: message.params.name, arguments: message.params.arguments };
}

/**
 * Answers a call that cannot run before it reaches the SDK, so that a hidden tool names the missing
 * scope and a refused call is audited: a tool the key may not use, or arguments that do not parse.
 */
async function precheckToolCall(services: Services, caller: McpCaller, call: ToolCall) {
  const tool = TOOLS_BY_NAME.get(call.name);
  if (!tool) return undefined;
  const runnable = caller.principal.permissions.has(tool.scope) && tool.input.safeParse(call.arguments ?? {}).success;
  return runnable ? undefined : runTool(services, caller.principal, caller.keyId, tool, call.arguments);
}

/** The checks the SDK's transport makes on a 2025-generation request, for the requests answered here. */
function legacyHeaderRefusal({ SUPPORTED_PROTOCOL_VERSIONS }: Sdk, request: FastifyRequest): { status: number; message: string } | undefined {
  const accept = request.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return { status: 406, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' };
  }
  const version = header(request, 'mcp-protocol-version');
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return {
      status: 400,
      message: `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
    };
  }
  return undefined;
}

/** A 2025-generation `tools/call`, answered without building a server. */
async function answerToolCall(services: Services, caller: McpCaller, call: ToolCall) {
  const tool = TOOLS_BY_NAME.get(call.name);
  if (!tool) {
    // The caller's name is not echoed: nothing a caller sent reaches the model outside a fence.
    const message = 'Unknown tool: no tool of this server has that name. Call tools/list to see the tools this key may use.';
    services.ctx.metrics.mcpToolCalls.inc({ tool: '(unknown)', outcome: 'error' });
    await services.auditLog.write({
      keyId: caller.keyId,
      userId: caller.principal.userId,
      tool: call.name,
      arguments: call.arguments ?? {},
      outcome: 'error',
      error: message,
      durationMs: 0,
      codeSha256: null,
      requestId: caller.principal.requestId ?? null,
    });
    return jsonRpcError(call.id, -32602, message);
  }
  const result = await runTool(services, caller.principal, caller.keyId, tool, call.arguments);
  const raw = rawJsonOf(result);
  if (raw === undefined) return { jsonrpc: '2.0', id: call.id, result };
  return `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":${raw}}`;
}

async function serveLegacy(sdk: Sdk, services: Services, caller: McpCaller, request: FastifyRequest): Promise<Response> {
  const server = buildMcpServer(sdk, services, caller.principal, caller.keyId);
  const transport = new sdk.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    return await transport.handleRequest(webRequest(request), { authInfo: authInfoOf(caller), parsedBody: request.body });
  } finally {
    void server.close();
  }
}

function authInfoOf(caller: McpCaller): AuthInfo {
  return { token: caller.keyId, clientId: caller.keyId, scopes: [...caller.principal.permissions], extra: { caller } };
}

function callerOf(authInfo: AuthInfo | undefined): [Principal, string] {
  const caller = authInfo?.extra?.caller as McpCaller | undefined;
  if (!caller) throw unauthenticated();
  return [caller.principal, caller.keyId];
}

function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  headers.delete('content-length');
  return new Request(`http://${request.host || 'localhost'}${request.url}`, {
    method: request.method,
    headers,
    body: JSON.stringify(request.body),
  });
}

async function forward(reply: FastifyReply, response: Response) {
  reply.status(response.status);
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'connection' && name !== 'keep-alive') reply.header(name, value);
  });
  return reply.send(await response.text());
}

/**
 * DNS-rebinding protection: on a loopback-bound server the Host must be a loopback name (or the
 * public URL's host), and a browser Origin must be this server's own or an allowed CORS origin.
 */
async function hostOrOriginRefusal(request: FastifyRequest, services: Services, publicUrl: URL | undefined): Promise<string | undefined> {
  const loopbackBound = isLoopbackHost(services.ctx.config.host);
  if (loopbackBound && !isLoopbackHost(request.hostname) && request.hostname !== publicUrl?.hostname) {
    return `Host ${request.host} is not allowed`;
  }
  const origin = request.headers.origin;
  if (!origin) return undefined;
  if (publicUrl?.origin === origin) return undefined;
  if (loopbackBound && URL.canParse(origin) && isLoopbackHost(new URL(origin).hostname)) return undefined;
  return (await services.application.allowsOrigin(origin)) ? undefined : `Origin ${origin} is not allowed`;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function idOf(body: unknown): JsonRpcId {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** How a request that never reached the handler (its body could not be read) is answered in JSON-RPC. */
function jsonRpcRequestError(error: FastifyError): { status: number; code: number; message: string } {
  if (error instanceof TrellisError && error.code === 'BAD_INPUT') return { status: 400, code: -32700, message: `Parse error: ${error.message}` };
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, code: -32700, message: 'Parse error: the request body is not valid JSON' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, code: -32700, message: 'Parse error: the request body is empty' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, code: -32000, message: `Payload Too Large: the request body is larger than ${BODY_LIMIT} bytes` };
  }
  if (error.statusCode === 400) return { status: 400, code: -32700, message: 'Parse error: the request body is not valid JSON' };
  if (error instanceof TrellisError && error.status < 500) return { status: error.status, code: -32000, message: error.message };
  // A database that is down, restarting or full is the service's condition, not an internal error.
  const trellis = toTrellisError(error);
  if (trellis.code === 'UNAVAILABLE' || trellis.code === 'INSUFFICIENT_STORAGE') return { status: trellis.status, code: -32000, message: trellis.message };
  return { status: 500, code: -32603, message: 'Internal error' };
}

function jsonRpcError(id: JsonRpcId, code: number, message: string) {
  return { jsonrpc: '2.0', id, error: { code, message } };
}
