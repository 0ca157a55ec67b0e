import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  GraphQLError,
  execute,
  getOperationAST,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
} from 'graphql';
import { z } from 'zod';
import type { Principal } from '../access/permissions.js';
import { builderOperations } from '../features/graphql-documents.js';
import { bearerToken, requestBaseUrl } from '../http/auth.js';
import { fromFastifyError } from '../http/errors.js';
import { TrellisError, badInput, errorBody, toTrellisError, unauthenticated } from '../platform/errors.js';
import { parseInput } from '../platform/validation.js';
import type { Services } from '../services.js';
import { quotedEnumValues } from './closed-sets.js';
import type { GraphQLContext } from './module.js';
import { queryLimitRules } from './query-limits.js';
import { withFields } from '../platform/objects.js';

const requestParameters = z.object({
  query: z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') }).min(1, 'is required').max(100_000),
  operationName: z.string().max(200).nullish(),
  variables: z.record(z.string(), z.unknown()).nullish(),
  extensions: z.record(z.string(), z.unknown()).nullish(),
});
type RequestParameters = z.infer<typeof requestParameters>;

/** GraphQL over HTTP's own media type; its answers to request errors are 4xx. */
export const GRAPHQL_RESPONSE_TYPE = 'application/graphql-response+json';
const JSON_TYPE = 'application/json';
type ResponseType = typeof GRAPHQL_RESPONSE_TYPE | typeof JSON_TYPE;

const DOCUMENT_CACHE_SIZE = 500;
/** Set by the application page on the calls it relays from a feature's frame. */
export const FEATURE_HEADER = 'x-trellis-feature';
/**
 * Set by the designer's scratch preview: each record write is checked in full, then rolled back
 * (RecordService, `scratch`). Builder operations are refused with it, so that nothing it names is stored.
 */
export const SCRATCH_HEADER = 'x-trellis-scratch';
const VALIDATION_RULES = [...specifiedRules, ...queryLimitRules];

/**
 * `POST /graphql`: authenticates, then parses and validates (cached per schema, with the depth and
 * cost limits) and executes one operation against the current schema, which follows the
 * application's tables; an integration token's against the application's operations only.
 */
export function registerGraphQLRoute(app: FastifyInstance, services: Services): void {
  // A document validates against one schema: the whole one and the integrations' of each version have their own cache.
  const documentsBySchema = new WeakMap<GraphQLSchema, Map<string, DocumentNode | readonly GraphQLError[]>>();

  function documentFor(schema: GraphQLSchema, query: string): DocumentNode | readonly GraphQLError[] {
    let documents = documentsBySchema.get(schema);
    if (!documents) documentsBySchema.set(schema, (documents = new Map()));
    const cached = documents.get(query);
    if (cached) return cached;
    let result: DocumentNode | readonly GraphQLError[];
    try {
      const document = quotedEnumValues(schema, parse(query, { maxTokens: 5000 }));
      const errors = validate(schema, document, VALIDATION_RULES);
      result = errors.length ? errors : document;
    } catch (error) {
      result = [error instanceof GraphQLError ? error : new GraphQLError('Invalid query')];
    }
    if (documents.size >= DOCUMENT_CACHE_SIZE) documents.delete(documents.keys().next().value!);
    documents.set(query, result);
    return result;
  }

  /**
   * The schema the caller runs against and the document validated against it. An integration
   * token sees the application's operations only; its document that names builder operations
   * runs against the whole schema, whose builder resolvers refuse each with FORBIDDEN as they
   * always did, rather than failing as an unknown field.
   */
  async function schemaAndDocument(principal: Principal, query: string): Promise<{ schema: GraphQLSchema; document: DocumentNode | readonly GraphQLError[] }> {
    const whole = (await services.graphql.current()).schema;
    if (principal.kind !== 'integration') return { schema: whole, document: documentFor(whole, query) };
    const application = (await services.graphql.integrationSchema()).schema;
    const document = documentFor(application, query);
    // Without tables there is no Mutation type, and a mutation of the builder validates against it.
    const asWritten = 'kind' in document ? document : documentFor(whole, query);
    if ('kind' in asWritten && builderOperations(asWritten, await services.graphql.featureSchema()).length) return { schema: whole, document: documentFor(whole, query) };
    return { schema: application, document };
  }

  /** One GraphQL request, from POST's body or GET's query string, answered in the negotiated media type. */
  async function answer(request: FastifyRequest, reply: FastifyReply, body: RequestParameters) {
    const responseType = reply.getHeader('content-type') === JSON_TYPE_HEADER ? JSON_TYPE : GRAPHQL_RESPONSE_TYPE;
    const principal = await authenticate(services, request);
    const { schema, document } = await schemaAndDocument(principal, body.query);
    if (!('kind' in document)) return sendRequestErrors(reply, responseType, document.map((e) => e.toJSON()));
    const operation = getOperationAST(document, body.operationName ?? undefined);
    if (!operation) return sendRequestErrors(reply, responseType, [{ message: 'No operation matches operationName' }]);
    if (request.method !== 'POST' && operation.operation !== 'query') {
      reply.header('allow', 'POST');
      return sendErrors(reply, 405, [{ message: `A ${operation.operation} runs over POST only; GET runs queries`, extensions: { code: 'METHOD_NOT_ALLOWED', status: 405 } }]);
    }
    const feature = request.headers[FEATURE_HEADER] !== undefined;
    const scratch = request.headers[SCRATCH_HEADER] !== undefined;
    if (feature || scratch) {
      // A call from a feature's frame, relayed by the application page, or a scratch call: generated operations only.
      const builder = builderOperations(document, await services.graphql.featureSchema());
      if (builder.length) {
        const names = [...new Set(builder.map((field) => field.name))].map((name) => `"${name}"`).join(', ');
        const reach = feature ? "a feature reaches only the application's generated operations" : "scratch writes cover only the application's generated operations";
        return sendErrors(reply, 403, [{ message: `${names} ${builder.length > 1 ? 'are builder operations' : 'is a builder operation'}: ${reach}`, extensions: { code: 'FORBIDDEN', status: 403 } }]);
      }
    }
    const context: GraphQLContext = { services, principal, ...(scratch ? { scratch } : {}) };
    const result = (await execute({
      schema,
      document,
      contextValue: context,
      variableValues: body.variables ?? undefined,
      operationName: body.operationName ?? undefined,
    })) as ExecutionResult;
    // A result without `data` is a request error (for example a variable of the wrong type).
    if (!('data' in result)) return sendRequestErrors(reply, responseType, formatResult(result, request).errors ?? []);
    const formatted = formatResult(result, request);
    const status = serviceStatusOf(formatted);
    if (status === 503) reply.header('retry-after', '1');
    return reply.status(status).send(formatted);
  }

  const routeOptions = { onRequest: negotiateResponseType, errorHandler: sendGraphQLError };
  app.post('/graphql', routeOptions, (request, reply) => answer(request, reply, parseInput(requestParameters, request.body, { storableText: false })));
  app.get('/graphql', routeOptions, (request, reply) => answer(request, reply, parseInput(requestParameters, queryStringParameters(request.query), { storableText: false })));
}

const JSON_TYPE_HEADER = `${JSON_TYPE}; charset=utf-8`;
const GRAPHQL_RESPONSE_TYPE_HEADER = `${GRAPHQL_RESPONSE_TYPE}; charset=utf-8`;

/**
 * The answer's media type from `Accept` (GraphQL over HTTP): `application/graphql-response+json`
 * when the client lists it first (by q), `application/json` for it, for `*\/*` and `application/*`
 * and when there is no `Accept`; undefined when the client takes neither.
 */
export function responseTypeFor(accept: string | undefined): ResponseType | undefined {
  if (!accept?.trim()) return JSON_TYPE;
  const ranges = accept
    .split(',')
    .map((part, index) => {
      const [range = '', ...params] = part.split(';').map((piece) => piece.trim().toLowerCase());
      const q = Number(params.find((param) => param.startsWith('q='))?.slice(2) ?? '1');
      return { range, q: Number.isFinite(q) ? q : 0, index };
    })
    .filter(({ q }) => q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { range } of ranges) {
    if (range === GRAPHQL_RESPONSE_TYPE) return GRAPHQL_RESPONSE_TYPE;
    if (range === JSON_TYPE || range === '*/*' || range === 'application/*') return JSON_TYPE;
  }
  return undefined;
}

/** Chooses the answer's media type before anything else runs; 406 when the client accepts none. */
async function negotiateResponseType(request: FastifyRequest, reply: FastifyReply) {
  const type = responseTypeFor(request.headers.accept);
  if (!type) {
    reply.type(JSON_TYPE_HEADER);
    return reply.status(406).send({ errors: [{ message: `Accept must allow ${GRAPHQL_RESPONSE_TYPE} or ${JSON_TYPE}`, extensions: { code: 'NOT_ACCEPTABLE', status: 406 } }] });
  }
  reply.type(type === JSON_TYPE ? JSON_TYPE_HEADER : GRAPHQL_RESPONSE_TYPE_HEADER);
}

/** GET's parameters: `variables` and `extensions` arrive as JSON text. */
function queryStringParameters(query: unknown): Record<string, unknown> {
  const parameters = { ...(query as Record<string, unknown>) };
  for (const name of ['variables', 'extensions']) {
    const value = parameters[name];
    if (typeof value !== 'string' || value === '') continue;
    try {
      parameters[name] = JSON.parse(value);
    } catch {
      throw badInput(`${name}: must be a JSON object`, { field: name });
    }
  }
  return parameters;
}

/**
 * A request error (a document that does not parse or validate, no operation to run, variables
 * that do not coerce): 400 under application/graphql-response+json, 200 under application/json,
 * as GraphQL over HTTP asks, so that a client reads the message as a GraphQL error.
 */
function sendRequestErrors(reply: FastifyReply, responseType: ResponseType, errors: readonly GraphQLFormattedError[]) {
  return sendErrors(reply, responseType === GRAPHQL_RESPONSE_TYPE ? 400 : 200, [...errors]);
}

/**
 * Errors before execution (authentication, limits, a body that is not JSON) as GraphQL errors, with
 * their status, in the negotiated media type (Fastify drops the content type before an error handler).
 */
function sendGraphQLError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const trellis = fromFastifyError(error);
  if (trellis.retryAfter !== undefined) reply.header('retry-after', String(trellis.retryAfter));
  if (trellis.status === 401) reply.header('www-authenticate', 'Bearer');
  reply.type(responseTypeFor(request.headers.accept) === GRAPHQL_RESPONSE_TYPE ? GRAPHQL_RESPONSE_TYPE_HEADER : JSON_TYPE_HEADER);
  return reply.status(trellis.status).send({
    errors: [{ message: trellis.message, extensions: { code: trellis.code, status: trellis.status, ...(trellis.details ? { details: trellis.details } : {}) } }],
    // The REST form these answers had before GraphQL over HTTP (D35): clients that read it keep working.
    ...errorBody(trellis),
  });
}

/**
 * 200, unless the operation produced nothing because the database was unreachable (503) or full
 * (507): then the answer says so over HTTP too, as every other endpoint does, so that clients and
 * proxies see a failure of the service they may retry, not a success.
 */
function serviceStatusOf(answer: { data?: Record<string, unknown> | null; errors?: ReadonlyArray<{ extensions?: Record<string, unknown> }> }): number {
  if (answer.data && Object.values(answer.data).some((value) => value !== null)) return 200;
  const statuses = new Set(answer.errors?.map((error) => error.extensions?.status));
  const [status] = statuses;
  return statuses.size === 1 && (status === 503 || status === 507) ? status : 200;
}

async function authenticate(services: Services, request: FastifyRequest): Promise<Principal> {
  const token = bearerToken(request);
  if (!token) throw unauthenticated();
  return withFields(await services.auth.principalForBearer(token, request), { requestId: request.id, baseUrl: requestBaseUrl(request, services.ctx.config.publicUrl) });
}

function sendErrors(reply: FastifyReply, status: number, errors: GraphQLFormattedError[]) {
  return reply.status(status).send({ errors });
}

function formatResult(result: ExecutionResult, request: FastifyRequest) {
  if (!result.errors?.length) return result;
  return withFields(result, { errors: result.errors.map((error) => formatError(error, request)) });
}

/** Resolver errors carry the TrellisError code and status; anything unexpected is logged, not shown. */
function formatError(error: GraphQLError, request: FastifyRequest): GraphQLFormattedError {
  // Only errors raised while resolving a field carry a path; the rest are request errors.
  if (!error.originalError || !error.path) return error.toJSON();
  const original = error.originalError;
  const trellis = original instanceof TrellisError ? original : toTrellisError(original);
  if (!(original instanceof TrellisError) && trellis.code === 'INTERNAL') {
    request.log.error({ err: original, path: error.path }, 'GraphQL resolver failed');
  }
  const extensions = trellis.details ? { code: trellis.code, status: trellis.status, details: trellis.details } : { code: trellis.code, status: trellis.status };
  const { message } = trellis;
  return error.locations ? { message, locations: error.locations, path: error.path, extensions } : { message, path: error.path, extensions };
}
