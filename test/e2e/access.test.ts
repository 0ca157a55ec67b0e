import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER } from '../helpers/env.js';
import { createUserKey, MCP_ACCEPT } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let ownerGql: ReturnType<typeof graphqlClient>;

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
});
afterAll(async () => server?.close());

describe('health', () => {
  it('answers /healthz and /readyz with the database kind', async () => {
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect((await ready.json()).status).toBe('ready');
  });

  it('answers unknown routes with a JSON 404', async () => {
    const response = await fetch(`${server.url}/nope`);
    expect(response.status).toBe(404);
    expect((await response.json()).error.code).toBe('NOT_FOUND');
  });
});

describe('POST /api/auth/login', () => {
  it('returns a bearer session for the owner created on first start', async () => {
    const result = await postJson(`${server.url}/api/auth/login`, OWNER);
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ token: expect.stringMatching(/^trs_/), expires_in: 43200, token_type: 'Bearer' });
  });

  it.each([
    ['a wrong password', { email: OWNER.email, password: 'wrong-password' }],
    ['an unknown e-mail', { email: 'nobody@example.com', password: OWNER.password }],
  ])('answers the same generic 401 for %s', async (_case, body) => {
    const result = await postJson(`${server.url}/api/auth/login`, body);
    expect(result.status).toBe(401);
    expect(result.body.error).toEqual({ code: 'UNAUTHENTICATED', message: 'Authentication required or invalid' });
  });

  it.each([
    ['malformed JSON', '{"email":', 'not valid JSON'],
    ['a missing password', { email: OWNER.email }, 'password'],
    ['a number as e-mail', { email: 5, password: 'x' }, 'email'],
  ])('rejects %s with 400 naming the problem', async (_case, body, fragment) => {
    const result = await postJson(`${server.url}/api/auth/login`, body);
    expect(result.status).toBe(400);
    expect(result.body.error.code).toBe('BAD_INPUT');
    expect(result.body.error.message).toContain(fragment);
  });

  it('answers 413 for a body over 2 MB', async () => {
    const result = await postJson(`${server.url}/api/auth/login`, { email: 'a'.repeat(2 * 1024 * 1024), password: 'x' });
    expect(result.status).toBe(413);
    expect(result.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('users and roles through builder GraphQL', () => {
  it('refuses GraphQL without a valid session with 401', async () => {
    const anonymous = await postJson(`${server.url}/graphql`, { query: '{ me { _id } }' });
    expect(anonymous.status).toBe(401);
    const forged = await graphqlClient(server.url, 'trs_forged')('{ me { _id } }');
    expect(forged.status).toBe(401);
  });

  it('lists the default roles admin, designer and viewer', async () => {
    const data = await gqlData(ownerGql, '{ roles { name builtin permissions } }');
    expect(data.roles.map((r: { name: string }) => r.name)).toEqual(['admin', 'designer', 'viewer']);
    expect(data.roles[1].permissions).toContain('ai_designer');
  });

  it('creates a user who can then sign in, and refuses a duplicate e-mail with CONFLICT', async () => {
    const created = await gqlData(
      ownerGql,
      'mutation($e: String!) { createUser(email: $e, password: "designer-pass", role: "designer") { _id email roleName } }',
      { e: 'Dana@Example.com' },
    );
    expect(created.createUser).toMatchObject({ email: 'dana@example.com', roleName: 'designer' });
    const token = await login(server.url, 'dana@example.com', 'designer-pass');
    expect((await gqlData(graphqlClient(server.url, token), '{ me { email } }')).me.email).toBe('dana@example.com');

    const again = await ownerGql('mutation { createUser(email: "dana@example.com", password: "designer-pass") { _id } }');
    expect(again.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', status: 409 });
  });

  it('rejects bad user input with a message naming the field', async () => {
    const result = await ownerGql('mutation { createUser(email: "not-an-email", password: "short") { _id } }');
    expect(result.body.errors[0].extensions.code).toBe('BAD_INPUT');
    expect(result.body.errors[0].message).toMatch(/email: .*password: /);
  });

  it('answers a GraphQL type error with 400', async () => {
    const result = await ownerGql('mutation($p: String!) { createUser(email: "x@y.co", password: $p) { _id } }', { p: 42 });
    expect(result.status).toBe(400);
    expect(result.body.errors[0].message).toContain('$p');
  });

  it('stops a disabled user from signing in and ends their sessions at once', async () => {
    const user = await gqlData(ownerGql, 'mutation { createUser(email: "erin@example.com", password: "erin-password") { _id } }');
    const token = await login(server.url, 'erin@example.com', 'erin-password');
    await gqlData(ownerGql, 'mutation($id: ID!) { updateUser(_id: $id, disabled: true) { disabled } }', { id: user.createUser._id });
    expect((await graphqlClient(server.url, token)('{ me { email } }')).status).toBe(401);
    expect((await postJson(`${server.url}/api/auth/login`, { email: 'erin@example.com', password: 'erin-password' })).status).toBe(401);
  });

  it('keeps user administration to admins', async () => {
    await gqlData(ownerGql, 'mutation { createUser(email: "vic@example.com", password: "viewer-pass", role: "viewer") { _id } }');
    const viewer = graphqlClient(server.url, await login(server.url, 'vic@example.com', 'viewer-pass'));
    const result = await viewer('{ users { email } }');
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(result.body.errors[0].message).toContain("'admin'");
  });

  it('refuses to demote the last enabled admin', async () => {
    const me = await gqlData(ownerGql, '{ me { _id } }');
    const result = await ownerGql('mutation($id: ID!) { updateUser(_id: $id, role: "viewer") { _id } }', { id: me.me._id });
    expect(result.body.errors[0].extensions.code).toBe('CONFLICT');
  });

  it('creates a custom role and refuses unknown permissions', async () => {
    const role = await gqlData(ownerGql, 'mutation { createRole(name: "support", permissions: ["config:read"]) { _id permissions } }');
    expect(role.createRole.permissions).toEqual(['config:read']);
    const bad = await ownerGql('mutation { createRole(name: "bad", permissions: ["root"]) { _id } }');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ message: expect.stringMatching(/^Permission must be one of config:read, .*, ai_designer; got "root"$/), extensions: { code: 'BAD_INPUT', status: 400 } });
  });
});

describe('sessions and request hygiene', () => {
  it('ends a session on logout', async () => {
    const token = await login(server.url);
    const response = await fetch(`${server.url}/api/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(204);
    expect((await graphqlClient(server.url, token)('{ me { _id } }')).status).toBe(401);
  });

  it('answers a non-JSON content type with 415', async () => {
    const response = await fetch(`${server.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
    expect(response.status).toBe(415);
    expect((await response.json()).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers a GraphQL body without a query with 400 naming the field', async () => {
    const result = await postJson(`${server.url}/graphql`, { variables: {} }, { authorization: `Bearer ${await login(server.url)}` });
    expect(result.status).toBe(400);
    expect(result.body.error.message).toContain('query');
  });

  it('stores sessions only as SHA-256 hashes', async () => {
    const token = await login(server.url);
    const rows = await server.server.services.ctx.db.selectFrom('user_sessions').select('token_hash').execute();
    expect(rows.some((r) => r.token_hash === token)).toBe(false);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.token_hash))).toBe(true);
  });
});

describe('failed authentication never locks out a valid credential', () => {
  let limited: TestServer;
  const from = (ip: string) => ({ 'x-forwarded-for': ip });
  const signIn = (credentials: { email: string; password: string }, ip: string) => postJson(`${limited.url}/api/auth/login`, credentials, from(ip));
  const wrongOwner = { email: OWNER.email, password: 'wrong-password' };
  const other = { email: 'other@example.com', password: 'other-password-1' };

  beforeAll(async () => {
    // Behind a proxy: client addresses come from X-Forwarded-For.
    limited = await startTestServer({ TRELLIS_AUTH_FAILURES_PER_MINUTE: '3', TRELLIS_TRUST_PROXY: 'true' });
    const gql = graphqlClient(limited.url, await login(limited.url));
    await gqlData(gql, 'mutation($e: String!, $p: String!) { createUser(email: $e, password: $p, role: "designer") { _id } }', { e: other.email, p: other.password });
  });
  afterAll(async () => limited?.close());

  it('answers 429 with Retry-After to an IP past its failures, yet lets valid credentials from that IP through', async () => {
    const session = await signIn(OWNER, '10.0.0.1');
    expect(session.status).toBe(200);
    const { apiKey } = await createUserKey(limited, { email: OWNER.email, role: 'admin', scopes: ['config:read'] });
    for (let i = 0; i < 3; i++) expect((await signIn({ email: `nobody${i}@example.com`, password: 'guess' }, '10.0.0.1')).status).toBe(401);
    const blocked = await signIn({ email: 'nobody9@example.com', password: 'guess' }, '10.0.0.1');
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe('RATE_LIMITED');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await postJson(`${limited.url}/graphql`, { query: '{ me { _id } }' }, { ...from('10.0.0.1'), authorization: 'Bearer trs_guess' })).status).toBe(429);
    // Someone else's failures from the same (proxy) address refuse no valid credential.
    expect((await signIn(other, '10.0.0.1')).status).toBe(200);
    const me = await postJson(`${limited.url}/graphql`, { query: '{ me { email } }' }, { ...from('10.0.0.1'), authorization: `Bearer ${session.body.token}` });
    expect(me.status).toBe(200);
    expect(me.body.data.me.email).toBe(OWNER.email);
    const tools = await fetch(`${limited.url}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_ACCEPT, ...from('10.0.0.1'), 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(tools.status).toBe(200);
  });

  it('locks an account out for the address that keeps guessing its password, and only for that address', async () => {
    for (let i = 0; i < 5; i++) expect([401, 429]).toContain((await signIn(wrongOwner, '10.0.0.2')).status);
    const locked = await signIn(OWNER, '10.0.0.2');
    expect(locked.status).toBe(429);
    expect(locked.body.error.message).toMatch(/^Too many failed attempts; retry in \d+ s$/);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await signIn(OWNER, '10.0.0.3')).status).toBe(200);
    expect((await signIn(other, '10.0.0.2')).status).toBe(200);
  });

  it('lets the owner in from that address again once the lockout has passed', async () => {
    for (let i = 0; i < 5; i++) await signIn(wrongOwner, '10.0.0.4');
    expect((await signIn(OWNER, '10.0.0.4')).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await signIn(OWNER, '10.0.0.4')).status).toBe(200);
  });
});
