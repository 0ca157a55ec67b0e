// A small client for POST /graphql with the session's bearer token.
import { reachingFetch } from './connectivity.js';
import { clearSession, loadSession } from './session.js';

/** A GraphQL error as the server sends it (extensions.code / extensions.status). */
export interface GraphQLErrorBody {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; status?: number; details?: Record<string, unknown> } & Record<string, unknown>;
}

/** Thrown when the session is missing or the server no longer accepts it (401). */
export class SessionExpiredError extends Error {
  constructor() {
    super('Your session has ended. Sign in again.');
    this.name = 'SessionExpiredError';
  }
}

/** Thrown for an answer with errors; `errors` keeps each one with its code. */
export class GraphQLRequestError extends Error {
  constructor(readonly errors: GraphQLErrorBody[], readonly status: number) {
    super(errors.map((e) => e.message).join('\n') || `GraphQL request failed (HTTP ${status})`);
    this.name = 'GraphQLRequestError';
  }

  get code(): string | undefined {
    return this.errors[0]?.extensions?.code;
  }
}

/** Runs a GraphQL document as the signed-in user and returns `data`, or throws. */
export async function graphql<T = Record<string, unknown>>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const { data, errors, status } = await graphqlAnswer<T>(query, variables);
  if (errors?.length) throw new GraphQLRequestError(errors, status);
  return data as T;
}

/**
 * Runs a GraphQL document as the signed-in user and returns the answer as it came, errors
 * included (an HTTP error becomes one error); throws only SessionExpiredError. `feature` marks a
 * call relayed from that feature's frame: the server then allows only generated operations.
 * `scratch` asks the server to check every write and roll it back (the designer's scratch preview).
 */
export async function graphqlAnswer<T = Record<string, unknown>>(
  query: string,
  variables: Record<string, unknown> = {},
  options: { feature?: string; scratch?: boolean } = {},
): Promise<{ data?: T; errors?: GraphQLErrorBody[]; status: number }> {
  const session = loadSession();
  if (!session) throw new SessionExpiredError();
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${session.token}` };
  if (options.feature) headers['x-trellis-feature'] = options.feature;
  if (options.scratch) headers['x-trellis-scratch'] = '1';
  // Throws ServerUnreachableError when the server does not answer: the page then retries by itself.
  const response = await reachingFetch('/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  if (response.status === 401) {
    clearSession();
    throw new SessionExpiredError();
  }
  const body = (await response.json().catch(() => ({}))) as { data?: T; errors?: GraphQLErrorBody[]; error?: { message?: string; code?: string } };
  if (body.errors?.length) return { data: body.data, errors: body.errors, status: response.status };
  if (!response.ok || !body.data) {
    return { errors: [{ message: body.error?.message ?? `GraphQL request failed (HTTP ${response.status})`, extensions: { code: body.error?.code, status: response.status } }], status: response.status };
  }
  return { data: body.data, status: response.status };
}

/**
 * A JSON value of an answer (the schema's JSON scalar, typed unknown in graphql-operations.ts) read
 * as names and texts: the entries of an object whose value is a string. The server sends only such
 * objects where the pages read them (the theme's CSS variables, colours and shell variables); any
 * other entry is dropped rather than passed on.
 *
 * @example stringRecordOf({ '--primary': '#2563eb', count: 3 }) // { '--primary': '#2563eb' }
 */
export function stringRecordOf(json: unknown): Record<string, string> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return {};
  return Object.fromEntries(Object.entries(json).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}
