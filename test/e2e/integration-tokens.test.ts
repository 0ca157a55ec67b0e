import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/platform/crypto.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';
import { allStoredText } from '../helpers/stored-text.js';

type Gql = ReturnType<typeof graphqlClient>;
type Credentials = { clientId: string; apiKey: string };

const CREATE = 'mutation($name: String!) { createIntegrationKey(name: $name) { clientId apiKey } }';
const DELETE = 'mutation($clientId: String!) { deleteIntegrationKey(clientId: $clientId) }';
const BUILDER_REFUSAL = "Builder operations need a signed-in user; integration tokens reach the application's generated operations only";
const LEGACY_REFUSAL =
  'Since API version 2.10.0, /api/auth/token accepts only clientId and apiKey from an integration key created in the designer ' +
  '(Designer > Integrations > API Keys); client_id/client_secret of an identity provider are no longer accepted.';
const GENERIC_401 = { code: 'UNAUTHENTICATED', message: 'Authentication required or invalid' };
const ALLOWED_ORIGIN = 'https://shop.example.com';
const FOREIGN_ORIGIN = 'https://evil.example.net';

let server: TestServer;
let ownerGql: Gql;
let integrationCounter = 0;

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
  await gqlData(ownerGql, 'mutation($o: [String!]) { updateApplication(corsOrigins: $o) { _id } }', { o: [ALLOWED_ORIGIN] });
});
afterAll(async () => server?.close());

const db = () => server.server.services.ctx.db;

async function createIntegration(): Promise<Credentials> {
  integrationCounter += 1;
  return (await gqlData(ownerGql, CREATE, { name: `Integration ${integrationCounter}` })).createIntegrationKey;
}

function exchange(body: unknown, headers: Record<string, string> = {}, base = server.url) {
  return postJson(`${base}/api/auth/token`, body, headers);
}

async function accessToken(credentials: Credentials): Promise<string> {
  const result = await exchange(credentials);
  if (result.status !== 200) throw new Error(`token exchange failed: ${result.status} ${JSON.stringify(result.body)}`);
  return result.body.access_token;
}

/** A builder query with the token: 200 with FORBIDDEN proves the token authenticated. */
function builderQuery(token: string, headers: Record<string, string> = {}, base = server.url) {
  return postJson(`${base}/graphql`, { query: '{ integrationKeys { _id } }' }, { authorization: `Bearer ${token}`, ...headers });
}

async function tokenCount(clientId?: string): Promise<number> {
  let query = db().selectFrom('access_tokens').select((eb) => eb.fn.countAll<string>().as('n'));
  if (clientId) query = query.where('client_id', '=', clientId);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

function expectAuthenticatedButRefused(result: { status: number; body: any }) { // eslint-disable-line @typescript-eslint/no-explicit-any
  expect(result.status).toBe(200);
  expect(result.body.errors[0].message).toBe(BUILDER_REFUSAL);
  expect(result.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
}

describe('POST /api/auth/token', () => {
  it('exchanges clientId and apiKey for a Bearer access token valid for TRELLIS_TOKEN_TTL seconds', async () => {
    const credentials = await createIntegration();
    const before = Date.now();
    const result = await exchange(credentials);
    expect(result.status).toBe(200);
    expect(result.headers.get('cache-control')).toBe('no-store');
    expect(result.body).toEqual({ access_token: expect.stringMatching(/^tat_[A-Za-z0-9_-]{43}$/), expires_in: 3600, token_type: 'Bearer' });
    const row = await db().selectFrom('access_tokens').selectAll().where('client_id', '=', credentials.clientId).executeTakeFirstOrThrow();
    expect(row.expires_at.getTime()).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(row.expires_at.getTime()).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
  });

  it('stores only the SHA-256 of the access token', async () => {
    const credentials = await createIntegration();
    const token = await accessToken(credentials);
    const row = await db().selectFrom('access_tokens').selectAll().where('client_id', '=', credentials.clientId).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256Hex(token));
    const stored = await allStoredText(db());
    expect(stored.columns).toBeGreaterThan(0);
    expect(stored.text).not.toContain(token);
    expect(stored.text).not.toContain(token.slice(4));
  });

  it('issues a new token on every exchange, each one working', async () => {
    const credentials = await createIntegration();
    const first = await accessToken(credentials);
    const second = await accessToken(credentials);
    expect(first).not.toBe(second);
    expect(await tokenCount(credentials.clientId)).toBe(2);
    expectAuthenticatedButRefused(await builderQuery(first));
    expectAuthenticatedButRefused(await builderQuery(second));
  });

  it.each([
    ['a wrong apiKey', (c: Credentials, _other: Credentials) => ({ clientId: c.clientId, apiKey: `${c.apiKey}x` })],
    ['an unknown clientId', (c: Credentials, _other: Credentials) => ({ clientId: 'trc_unknownclient00', apiKey: c.apiKey })],
    ["another integration's apiKey", (c: Credentials, other: Credentials) => ({ clientId: c.clientId, apiKey: other.apiKey })],
  ])('answers the same generic 401 for %s and issues no token', async (_case, body) => {
    const [credentials, other] = [await createIntegration(), await createIntegration()];
    const before = await tokenCount();
    const result = await exchange(body(credentials, other));
    expect(result.status).toBe(401);
    expect(result.body.error).toEqual(GENERIC_401);
    expect(await tokenCount()).toBe(before);
  });

  it.each([
    ['client_id and client_secret alone', () => ({ client_id: 'idp-client', client_secret: 'idp-secret' })],
    ['client_secret alone', () => ({ client_secret: 'idp-secret' })],
    ['client_id beside valid clientId and apiKey', (c: Credentials) => ({ ...c, client_id: 'idp-client' })],
  ])("refuses an identity provider's %s with 400 naming API 2.10.0, issuing no token", async (_case, body) => {
    const credentials = await createIntegration();
    const before = await tokenCount();
    const result = await exchange(body(credentials));
    expect(result.status).toBe(400);
    expect(result.body.error).toMatchObject({ code: 'BAD_INPUT', message: LEGACY_REFUSAL });
    expect(await tokenCount()).toBe(before);
  });

  it.each([
    ['a missing clientId', { apiKey: 'trik_x' }, 'clientId: is required'],
    ['a missing apiKey', { clientId: 'trc_x' }, 'apiKey: is required'],
    ['a numeric apiKey', { clientId: 'trc_x', apiKey: 42 }, 'apiKey: must be a string'],
    ['an empty clientId', { clientId: '', apiKey: 'trik_x' }, 'clientId: must not be empty'],
    ['a JSON array', [], 'expected object'],
    ['malformed JSON', '{"clientId":', 'not valid JSON'],
  ])('rejects %s with 400 naming the problem', async (_case, body, fragment) => {
    const result = await exchange(body);
    expect(result.status).toBe(400);
    expect(result.body.error.code).toBe('BAD_INPUT');
    expect(result.body.error.message).toContain(fragment);
  });

  it('stops every token of a deleted integration at once and refuses new exchanges', async () => {
    const credentials = await createIntegration();
    const token = await accessToken(credentials);
    expectAuthenticatedButRefused(await builderQuery(token));
    await gqlData(ownerGql, DELETE, { clientId: credentials.clientId });
    const refused = await builderQuery(token);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toEqual(GENERIC_401);
    expect((await exchange(credentials)).status).toBe(401);
    expect(await tokenCount(credentials.clientId)).toBe(0);
  });

  it('keeps the tokens of the other integrations working when one is deleted', async () => {
    const [kept, deleted] = [await createIntegration(), await createIntegration()];
    const [keptToken, deletedToken] = [await accessToken(kept), await accessToken(deleted)];
    await gqlData(ownerGql, DELETE, { clientId: deleted.clientId });
    expect((await builderQuery(deletedToken)).status).toBe(401);
    expectAuthenticatedButRefused(await builderQuery(keptToken));
  });
});

describe('access tokens on /graphql', () => {
  let token: string;
  beforeAll(async () => {
    token = await accessToken(await createIntegration());
  });

  it.each([
    ['a query', '{ integrationKeys { _id } }'],
    ['the me query', '{ me { _id } }'],
    ['a mutation', 'mutation { createIntegrationKey(name: "Sneaky") { clientId } }'],
  ])('refuses %s of the builder with FORBIDDEN and writes nothing', async (_case, query) => {
    const result = await postJson(`${server.url}/graphql`, { query }, { authorization: `Bearer ${token}` });
    expectAuthenticatedButRefused(result);
    expect(await db().selectFrom('integration_keys').select('id').where('name', '=', 'Sneaky').executeTakeFirst()).toBeUndefined();
  });

  it.each([
    ['an unknown access token', () => `tat_${'A'.repeat(43)}`],
    ['a truncated access token', () => token.slice(0, -1)],
    ['an apiKey used as a bearer token', () => 'trik_notatoken'],
  ])('answers the generic 401 for %s', async (_case, bearer) => {
    const result = await builderQuery(bearer());
    expect(result.status).toBe(401);
    expect(result.body.error).toEqual(GENERIC_401);
  });

  it('refuses a token once its expires_at has passed', async () => {
    const credentials = await createIntegration();
    const expiring = await accessToken(credentials);
    expectAuthenticatedButRefused(await builderQuery(expiring));
    await db().updateTable('access_tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('token_hash', '=', sha256Hex(expiring)).execute();
    await server.server.services.ctx.changes.publish('auth');
    const result = await builderQuery(expiring);
    expect(result.status).toBe(401);
    expect(result.body.error).toEqual(GENERIC_401);
  });
});

describe('x-userid', () => {
  let token: string;
  let credentials: Credentials;
  let userId: string;
  beforeAll(async () => {
    credentials = await createIntegration();
    token = await accessToken(credentials);
    const created = await gqlData(ownerGql, 'mutation { createUser(email: "ida@example.com", password: "ida-password", role: "designer") { _id } }');
    userId = created.createUser._id;
  });

  async function setDisabled(disabled: boolean) {
    await gqlData(ownerGql, 'mutation($id: ID!, $d: Boolean) { updateUser(_id: $id, disabled: $d) { _id } }', { id: userId, d: disabled });
  }

  it('lets an integration act for an existing, enabled user: the principal names both', async () => {
    expectAuthenticatedButRefused(await builderQuery(token, { 'x-userid': userId }));
    const principal = await server.server.services.integrations.principalForAccessToken(token, userId);
    expect(principal).toMatchObject({
      kind: 'integration',
      userId,
      isAdmin: false,
      source: 'graphql',
      credentialId: credentials.clientId,
      label: expect.stringMatching(new RegExp(`${credentials.clientId}.*ida@example\\.com`)),
    });
    expect(principal.permissions.size).toBe(0);
  });

  it('leaves the author empty without x-userid', async () => {
    const principal = await server.server.services.integrations.principalForAccessToken(token);
    expect(principal).toMatchObject({ kind: 'integration', userId: null, credentialId: credentials.clientId });
  });

  it('refuses an unknown user with 403 naming x-userid', async () => {
    const result = await builderQuery(token, { 'x-userid': 'no-such-user' });
    expect(result.status).toBe(403);
    expect(result.body.error).toMatchObject({ code: 'FORBIDDEN', message: "x-userid: user 'no-such-user' does not exist or is disabled" });
  });

  it('refuses a disabled user at once, and accepts the user again once re-enabled', async () => {
    expectAuthenticatedButRefused(await builderQuery(token, { 'x-userid': userId }));
    await setDisabled(true);
    const refused = await builderQuery(token, { 'x-userid': userId });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe(`x-userid: user '${userId}' does not exist or is disabled`);
    await setDisabled(false);
    expectAuthenticatedButRefused(await builderQuery(token, { 'x-userid': userId }));
  });
});

describe('failed authentication per IP', () => {
  let limited: TestServer;
  let credentials: Credentials;
  let token: string;
  beforeAll(async () => {
    limited = await startTestServer({ TRELLIS_AUTH_FAILURES_PER_MINUTE: '3' });
    const gql = graphqlClient(limited.url, await login(limited.url));
    credentials = (await gqlData(gql, CREATE, { name: 'Limited' })).createIntegrationKey;
    token = await (await exchange(credentials, {}, limited.url)).body.access_token;
  });
  afterAll(async () => limited?.close());

  it('answers 429 with Retry-After to an IP past 3 failures, yet still exchanges good credentials and accepts good tokens', async () => {
    const other = (await gqlData(graphqlClient(limited.url, await login(limited.url)), CREATE, { name: 'Other' })).createIntegrationKey;
    for (let i = 0; i < 3; i += 1) {
      expect((await exchange({ clientId: credentials.clientId, apiKey: 'trik_wrong' }, {}, limited.url)).status).toBe(401);
    }
    const limitedExchange = await exchange({ clientId: credentials.clientId, apiKey: 'trik_wrong' }, {}, limited.url);
    expect(limitedExchange.status).toBe(429);
    expect(limitedExchange.body.error.code).toBe('RATE_LIMITED');
    expect(Number(limitedExchange.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await exchange(other, {}, limited.url)).status).toBe(200);
    expect((await builderQuery(token, {}, limited.url)).status).not.toBe(429);
  });

  it('locks a clientId out for the address that keeps guessing its key, and only that clientId', async () => {
    const guessed = (await gqlData(graphqlClient(limited.url, await login(limited.url)), CREATE, { name: 'Guessed' })).createIntegrationKey;
    for (let i = 0; i < 5; i += 1) await exchange({ clientId: guessed.clientId, apiKey: 'trik_wrong' }, {}, limited.url);
    const locked = await exchange(guessed, {}, limited.url);
    expect(locked.status).toBe(429);
    expect(locked.body.error.message).toMatch(/^Too many failed attempts; retry in \d+ s$/);
    expect((await exchange(credentials, {}, limited.url)).status).toBe(200);
  });
});

describe('CORS', () => {
  function preflight(path: string, origin: string) {
    return fetch(`${server.url}${path}`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-userid' },
    });
  }

  function corsHeaders(headers: Headers): Record<string, string> {
    return Object.fromEntries([...headers].filter(([name]) => name.startsWith('access-control-')));
  }

  const ROUTES = [['/graphql'], ['/api/auth/token']];

  it.each(ROUTES)('answers a POST to %s from an allowed origin with that origin and Vary: Origin', async (path) => {
    const result = await postJson(`${server.url}${path}`, {}, { origin: ALLOWED_ORIGIN });
    expect(result.status).toBe(400);
    expect(result.headers.get('vary')).toContain('Origin');
    expect(corsHeaders(result.headers)).toEqual({
      'access-control-allow-origin': ALLOWED_ORIGIN,
      'access-control-expose-headers': 'retry-after',
    });
  });

  it.each(ROUTES)('answers the preflight of %s from an allowed origin with 204 and the allowed methods and headers', async (path) => {
    const response = await preflight(path, ALLOWED_ORIGIN);
    expect(response.status).toBe(204);
    expect(corsHeaders(response.headers)).toEqual({
      'access-control-allow-origin': ALLOWED_ORIGIN,
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': 'authorization, content-type, x-userid',
      'access-control-max-age': '600',
    });
  });

  it.each(ROUTES)('gives a foreign origin no CORS header on %s, for the POST and the preflight', async (path) => {
    const post = await postJson(`${server.url}${path}`, {}, { origin: FOREIGN_ORIGIN });
    expect(corsHeaders(post.headers)).toEqual({});
    const response = await preflight(path, FOREIGN_ORIGIN);
    expect(response.status).toBe(204);
    expect(corsHeaders(response.headers)).toEqual({});
  });

  it('lets a browser on an allowed origin exchange credentials and call /graphql with the token', async () => {
    const credentials = await createIntegration();
    const issued = await exchange(credentials, { origin: ALLOWED_ORIGIN });
    expect(issued.status).toBe(200);
    expect(issued.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    const result = await builderQuery(issued.body.access_token, { origin: ALLOWED_ORIGIN });
    expect(result.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expectAuthenticatedButRefused(result);
  });

  it('keeps the CORS headers on a 401 so the page can read the error', async () => {
    const result = await exchange({ clientId: 'trc_unknownclient00', apiKey: 'trik_wrong' }, { origin: ALLOWED_ORIGIN });
    expect(result.status).toBe(401);
    expect(result.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
  });

  it('gives no CORS header to other endpoints, even for an allowed origin', async () => {
    const result = await postJson(`${server.url}/api/auth/login`, {}, { origin: ALLOWED_ORIGIN });
    expect(corsHeaders(result.headers)).toEqual({});
    expect((await preflight('/api/mcp', ALLOWED_ORIGIN)).status).toBe(404);
  });

  it('applies a change of the allowed origins at once', async () => {
    const next = 'https://next.example.org';
    const update = 'mutation($o: [String!]) { updateApplication(corsOrigins: $o) { corsOrigins } }';
    try {
      expect((await gqlData(ownerGql, update, { o: [next] })).updateApplication.corsOrigins).toEqual([next]);
      expect((await preflight('/graphql', next)).headers.get('access-control-allow-origin')).toBe(next);
      expect(corsHeaders((await preflight('/graphql', ALLOWED_ORIGIN)).headers)).toEqual({});
    } finally {
      await gqlData(ownerGql, update, { o: [ALLOWED_ORIGIN] });
    }
    expect((await preflight('/graphql', ALLOWED_ORIGIN)).headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
  });
});
