import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserKey, mcpPost } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';

/** Accounts: a user changes their own password; an admin lists and revokes every MCP key of the application. */
let server: TestServer;
let owner: ReturnType<typeof graphqlClient>;

beforeAll(async () => {
  server = await startTestServer();
  owner = graphqlClient(server.url, await login(server.url));
  await gqlData(owner, 'mutation { createUser(email: "pat@example.com", password: "pat-password-1", role: "designer") { _id } }');
});
afterAll(async () => server?.close());

const CHANGE = 'mutation($c: String!, $n: String!) { changeMyPassword(currentPassword: $c, newPassword: $n) { token expiresIn } }';

describe('changeMyPassword', () => {
  it('refuses a wrong current password by its field, and a short new one', async () => {
    const pat = graphqlClient(server.url, await login(server.url, 'pat@example.com', 'pat-password-1'));
    const wrong = await pat(CHANGE, { c: 'not-it', n: 'pat-password-2' });
    expect(wrong.body.errors[0]).toMatchObject({ message: 'currentPassword: is not your current password', extensions: { code: 'BAD_INPUT', details: { field: 'currentPassword' } } });
    const short = await pat(CHANGE, { c: 'pat-password-1', n: 'short' });
    expect(short.body.errors[0].message).toContain('newPassword: must be at least 8 characters');
    expect((await postJson(`${server.url}/api/auth/login`, { email: 'pat@example.com', password: 'pat-password-1' })).status).toBe(200);
  });

  it('changes it, ends every session of the user and answers with a new one', async () => {
    const oldToken = await login(server.url, 'pat@example.com', 'pat-password-1');
    const other = await login(server.url, 'pat@example.com', 'pat-password-1');
    const changed = await gqlData(graphqlClient(server.url, oldToken), CHANGE, { c: 'pat-password-1', n: 'pat-password-2' });
    expect(changed.changeMyPassword.token).toMatch(/^trs_/);
    expect(changed.changeMyPassword.expiresIn).toBeGreaterThan(0);
    for (const ended of [oldToken, other]) expect((await graphqlClient(server.url, ended)('{ me { email } }')).status).toBe(401);
    expect((await gqlData(graphqlClient(server.url, changed.changeMyPassword.token), '{ me { email } }')).me.email).toBe('pat@example.com');
    expect((await postJson(`${server.url}/api/auth/login`, { email: 'pat@example.com', password: 'pat-password-1' })).status).toBe(401);
    expect((await postJson(`${server.url}/api/auth/login`, { email: 'pat@example.com', password: 'pat-password-2' })).status).toBe(200);
  });
});

describe('mcpApiKeys(all: true)', () => {
  it('lists every key of the application to an admin, with its user and what it may do now, and the admin revokes it', async () => {
    const { apiKey, keyId } = await createUserKey(server, { email: 'pat@example.com', role: 'designer', scopes: ['config:read', 'features:write'] });
    const all = (await gqlData(owner, '{ mcpApiKeys(all: true) { _id userEmail scopes effectiveScopes } }')).mcpApiKeys;
    expect(all).toContainEqual({ _id: keyId, userEmail: 'pat@example.com', scopes: ['config:read', 'features:write'], effectiveScopes: ['config:read', 'features:write'] });
    expect((await gqlData(owner, '{ mcpApiKeys { _id } }')).mcpApiKeys.map((key: { _id: string }) => key._id)).not.toContain(keyId);
    const pat = graphqlClient(server.url, await login(server.url, 'pat@example.com', 'pat-password-2'));
    expect((await pat('{ mcpApiKeys(all: true) { _id } }')).body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await pat('{ mcpApiKeys { _id } }')).body.data.mcpApiKeys.map((key: { _id: string }) => key._id)).toContain(keyId);
    await gqlData(owner, 'mutation($id: ID!) { revokeMcpApiKey(_id: $id) { revokedAt } }', { id: keyId });
    expect((await mcpPost(server, apiKey, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(401);
  });
});
