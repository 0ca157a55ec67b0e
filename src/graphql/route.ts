import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
} from 'graphql';
import { z } from 'zod';
import type { Principal } from '../access/permissions.js';
import { builderOperations } from '../features/graphql-documents.js';
import { bearerToken } from '../http/auth.js';
import { TrellisError, toTrellisError, unauthenticated } from '../platform/errors.js';
import { parseInput } from '../platform/validation.js';
import type { Services } from '../services.js';
import type { GraphQLContext } from './module.js';
import { queryLimitRules } from './query-limits.js';
import type { VersionedSchema } from './schema-provider.js';

const requestBody = z.object({
  query: z.string().min(1, 'is required').max(100_000),
  operationName: z.string().max(200).nullish(),
  variables: z.record(z.string(), z.unknown()).nullish(),
});

const DOCUMENT_CACHE_SIZE = 500;
/** Set by the application page on the calls it relays from a feature's frame. */
export const FEATURE_HEADER = 'x-trellis-feature';
const VALIDATION_RULES = [...specifiedRules, ...queryLimitRules];

/**
 * `POST /graphql`: authenticates, then parses and validates (cached per schema version, with the
 * depth and cost limits) and executes one operation against the current schema, which follows
 * the application's tables.
 */
export function registerGraphQLRoute(app: FastifyInstance, services: Services): void {
  let cache: { version: number; documents: Map<string, DocumentNode | readonly GraphQLError[]> } = { version: 0, documents: new Map() };

  function documentFor({ schema, version }: VersionedSchema, query: string): DocumentNode | readonly GraphQLError[] {
    if (cache.version < version) cache = { version, documents: new Map() };
    const documents = cache.version === version ? cache.documents : undefined;
    const cached = documents?.get(query);
    if (cached) return cached;
    let result: DocumentNode | readonly GraphQLError[];
    try {
      const document = parse(query, { maxTokens: 5000 });
      const errors = validate(schema, document, VALIDATION_RULES);
      result = errors.length ? errors : document;
    } catch (error) {
      result = [error instanceof GraphQLError ? error : new GraphQLError('Invalid query')];
    }
    if (!documents) return result;
    if (documents.size >= DOCUMENT_CACHE_SIZE) documents.delete(documents.keys().next().value!);
    documents.set(query, result);
    return result;
  }

  app.post('/graphql', async (request, reply) => {
    const body = parseInput(requestBody, request.body, { storableText: false });
    const principal = await authenticate(services, request);
    const current = await services.graphql.current();
    const document = documentFor(current, body.query);
    if (!('kind' in document)) return sendErrors(reply, 400, document.map((e) => e.toJSON()));
    const operation = getOperationAST(document, body.operationName ?? undefined);
    if (!operation) return sendErrors(reply, 400, [{ message: 'No operation matches operationName' }]);
    if (request.headers[FEATURE_HEADER] !== undefined) {
      // A call from a feature's frame, relayed by the application page: generated operations only.
      const builder = builderOperations(document, await services.graphql.featureSchema());
      if (builder.length) {
        const names = [...new Set(builder.map((field) => field.name))].map((name) => `"${name}"`).join(', ');
        return sendErrors(reply, 403, [
          { message: `${names} ${builder.length > 1 ? 'are builder operations' : 'is a builder operation'}: a feature reaches only the application's generated operations`, extensions: { code: 'FORBIDDEN', status: 403 } },
        ]);
      }
    }
    const context: GraphQLContext = { services, principal };
    const result = (await execute({
      schema: current.schema,
      document,
      contextValue: context,
      variableValues: body.variables ?? undefined,
      operationName: body.operationName ?? undefined,
    })) as ExecutionResult;
    // A result without `data` is a request error (for example a variable of the wrong type).
    if (!('data' in result)) return reply.status(400).send(formatResult(result, request));
    const answer = formatResult(result, request);
    const status = serviceStatusOf(answer);
    if (status === 503) reply.header('retry-after', '1');
    return reply.status(status).send(answer);
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
  return { ...(await services.auth.principalForBearer(token, request)), requestId: request.id };
}

function sendErrors(reply: FastifyReply, status: number, errors: GraphQLFormattedError[]) {
  return reply.status(status).send({ errors });
}

function formatResult(result: ExecutionResult, request: FastifyRequest) {
  if (!result.errors?.length) return result;
  return { ...result, errors: result.errors.map((error) => formatError(error, request)) };
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
  return {
    message: trellis.message,
    ...(error.locations ? { locations: error.locations } : {}),
    ...(error.path ? { path: error.path } : {}),
    extensions: { code: trellis.code, status: trellis.status, ...(trellis.details ? { details: trellis.details } : {}) },
  };
}
