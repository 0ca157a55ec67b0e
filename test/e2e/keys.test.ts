import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ONLY_SCOPES, SCOPES } from '../../src/access/permissions.js';
import { sha256Hex } from '../../src/platform/crypto.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';
import { allStoredText } from '../helpers/stored-text.js';

type Gql = ReturnType<typeof graphqlClient>;

const KEY_FIELDS = '_id name keyPrefix scopes expiresAt lastUsedAt revokedAt createdAt';
const CREATE_KEY = `mutation($name: String!, $scopes: [Scope!]!, $days: Int!) {
  createMcpApiKey(name: $name, scopes: $scopes, expiresInDays: $days) { apiKey key { ${KEY_FIELDS} } }
}`;
const REVOKE_KEY = `mutation($id: ID!) { revokeMcpApiKey(_id: $id) { ${KEY_FIELDS} } }`;
const LIST_KEYS = `{ mcpApiKeys { ${KEY_FIELDS} } }`;
const DAY_MS = 24 * 60 * 60 * 1000;

let server: TestServer;
let ownerGql: Gql;
let designer: { id: string; gql: Gql };
let userCount = 0;

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
  designer = await newUser('designer');
});
afterAll(async () => server?.close());

const db = () => server.server.services.ctx.db;
const keys = () => server.server.services.keys;

/** Creates a user with `role` and signs them in. */
async function newUser(role: string): Promise<{ id: string; email: string; gql: Gql }> {
  const email = `user${++userCount}@example.com`;
  const created = await gqlData(ownerGql, 'mutation($e: String!, $r: String!) { createUser(email: $e, password: "user-password", role: $r) { _id } }', {
    e: email,
    r: role,
  });
  return { id: created.createUser._id, email, gql: graphqlClient(server.url, await login(server.url, email, 'user-password')) };
}

async function createKey(gql: Gql, scopes: string[], days = 30, name = 'agent') {
  return (await gqlData(gql, CREATE_KEY, { name, scopes, days })).createMcpApiKey;
}

async function keyCount(): Promise<number> {
  const row = await db().selectFrom('mcp_api_keys').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function effectivePermissions(apiKey: string): Promise<string[]> {
  const { principal } = await keys().resolveMcpKey(apiKey);
  return [...principal.permissions].sort();
}

describe('createMcpApiKey', () => {
  it('returns the raw key once beside a record whose prefix, scopes and expiry match', async () => {
    const before = Date.now();
    const created = await createKey(designer.gql, ['features:write', 'config:read'], 30, 'my agent');
    expect(created.apiKey).toMatch(/^trellis_[A-Za-z0-9_-]{43}$/);
    expect(created.key).toMatchObject({
      name: 'my agent',
      keyPrefix: created.apiKey.slice(0, 12),
      scopes: ['config:read', 'features:write'],
      lastUsedAt: null,
      revokedAt: null,
    });
    const expiresAt = Date.parse(created.key.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * DAY_MS - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * DAY_MS + 1000);
  });

  it('stores only the SHA-256 of the key, bound to its creator and to this application', async () => {
    const created = await createKey(designer.gql, ['config:read']);
    const row = await db().selectFrom('mcp_api_keys').selectAll().where('id', '=', created.key._id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      key_hash: sha256Hex(created.apiKey),
      key_prefix: created.apiKey.slice(0, 12),
      app_id: server.server.services.ctx.appId,
      user_id: designer.id,
      scopes: ['config:read'],
    });
  });

  it('records the creation in the audit trail with the creator as author and without the key', async () => {
    const created = await createKey(designer.gql, ['config:read'], 7, 'audited');
    const event = await db()
      .selectFrom('audit_events')
      .selectAll()
      .where('action', '=', 'mcp_key.create')
      .where('resource_id', '=', created.key._id)
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({ actor_id: designer.id, source: 'graphql', resource_type: 'mcp_api_key' });
    expect(event.details).toMatchObject({ name: 'audited', keyPrefix: created.key.keyPrefix, scopes: ['config:read'] });
    expect(JSON.stringify(event)).not.toContain(created.apiKey.slice(12));
  });

  it.each([
    ['an empty name', { name: '  ', scopes: ['config:read'], days: 30 }, 'name: must not be empty'],
    ['a name over 100 characters', { name: 'n'.repeat(101), scopes: ['config:read'], days: 30 }, 'name: must be at most 100 characters'],
    ['no scopes', { name: 'k', scopes: [], days: 30 }, 'scopes: must list at least one scope'],
    [
      'an unknown scope',
      { name: 'k', scopes: ['config:read', 'root'], days: 30 },
      `Variable "$scopes" got invalid value "root" at "scopes[1]"; Scope must be one of ${SCOPES.join(', ')}`,
    ],
    ['an expiry of 0 days', { name: 'k', scopes: ['config:read'], days: 0 }, 'expiresInDays: must be a whole number of days from 1 to 365'],
    ['an expiry over 365 days', { name: 'k', scopes: ['config:read'], days: 366 }, 'expiresInDays: must be at most 365 days'],
  ])('rejects %s with BAD_INPUT naming the field and writes nothing', async (_case, variables, message) => {
    const before = await keyCount();
    const result = await designer.gql(CREATE_KEY, variables);
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'BAD_INPUT', status: 400 });
    expect(result.body.errors[0].message).toBe(message);
    expect(await keyCount()).toBe(before);
  });

  it.each([
    ['a fractional number of days', { name: 'k', scopes: ['config:read'], days: 1.5 }],
    ['no expiry at all', { name: 'k', scopes: ['config:read'] }],
  ])('answers %s with a GraphQL 400, because the expiry is a mandatory Int', async (_case, variables) => {
    const result = await designer.gql(CREATE_KEY, variables);
    expect(result.status).toBe(400);
    expect(result.body.errors[0].message).toContain('$days');
  });

  it('requires a whole number of days when the service is called directly', async () => {
    const principal = await server.server.services.access.principalForUser(designer.id, 'graphql');
    await expect(keys().createMcpApiKey(principal, { name: 'k', scopes: ['config:read'], expiresInDays: 1.5 })).rejects.toMatchObject({
      code: 'BAD_INPUT',
      message: 'expiresInDays: must be a whole number of days from 1 to 365',
    });
  });

  it("refuses a user whose role lacks the 'ai_designer' permission", async () => {
    const viewer = await newUser('viewer');
    const result = await viewer.gql(CREATE_KEY, { name: 'k', scopes: ['config:read'], days: 30 });
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(result.body.errors[0].message).toContain("'ai_designer'");
  });

  it.each([...ADMIN_ONLY_SCOPES])('refuses the admin-only scope %s to a user who is not an admin', async (scope) => {
    const before = await keyCount();
    const result = await designer.gql(CREATE_KEY, { name: 'k', scopes: ['config:read', scope], days: 30 });
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(result.body.errors[0].message).toContain(`'${scope}'`);
    expect(await keyCount()).toBe(before);
  });

  it('lets an admin grant admin-only scopes', async () => {
    const created = await createKey(ownerGql, [...SCOPES]);
    expect(created.key.scopes).toEqual([...SCOPES]);
  });
});

describe('mcpApiKeys', () => {
  it("lists the caller's own keys, newest first, and nobody else's", async () => {
    const author = await newUser('designer');
    const first = await createKey(author.gql, ['config:read'], 30, 'first');
    const second = await createKey(author.gql, ['config:read'], 30, 'second');
    const own = (await gqlData(author.gql, LIST_KEYS)).mcpApiKeys;
    expect(own.map((k: { _id: string }) => k._id)).toEqual([second.key._id, first.key._id]);
    expect(own[0]).toEqual(second.key);
    const others = (await gqlData(designer.gql, LIST_KEYS)).mcpApiKeys.map((k: { _id: string }) => k._id);
    expect(others).not.toContain(first.key._id);
    expect(others).not.toContain(second.key._id);
  });

  it('never shows the raw key again', async () => {
    const created = await createKey(designer.gql, ['config:read']);
    const listed = await designer.gql(LIST_KEYS);
    expect(JSON.stringify(listed.body)).not.toContain(created.apiKey.slice(12));
    const asked = await designer.gql('{ mcpApiKeys { apiKey } }');
    expect(asked.status).toBe(400);
  });
});

describe('revokeMcpApiKey', () => {
  it('revokes the caller’s key, keeps the first revocation time when repeated, and the key stops working', async () => {
    const created = await createKey(designer.gql, ['config:read']);
    await keys().resolveMcpKey(created.apiKey);
    const revoked = (await gqlData(designer.gql, REVOKE_KEY, { id: created.key._id })).revokeMcpApiKey;
    expect(revoked).toMatchObject({ _id: created.key._id, revokedAt: expect.any(String) });
    const again = (await gqlData(designer.gql, REVOKE_KEY, { id: created.key._id })).revokeMcpApiKey;
    expect(again.revokedAt).toBe(revoked.revokedAt);
    await expect(keys().resolveMcpKey(created.apiKey)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const audits = await db().selectFrom('audit_events').select('actor_id').where('action', '=', 'mcp_key.revoke').where('resource_id', '=', created.key._id).execute();
    expect(audits).toEqual([{ actor_id: designer.id }]);
  });

  it.each([
    ['another user’s key', async () => (await createKey(ownerGql, ['config:read'])).key._id],
    ['an unknown id', async () => 'no-such-key'],
  ])('answers NOT_FOUND for %s and changes nothing', async (_case, keyId) => {
    const id = await keyId();
    const result = await designer.gql(REVOKE_KEY, { id });
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    const row = await db().selectFrom('mcp_api_keys').select('revoked_at').where('id', '=', id).executeTakeFirst();
    expect(row?.revoked_at ?? null).toBeNull();
  });

  it("lets an admin revoke another user's key", async () => {
    const created = await createKey(designer.gql, ['config:read']);
    const revoked = (await gqlData(ownerGql, REVOKE_KEY, { id: created.key._id })).revokeMcpApiKey;
    expect(revoked.revokedAt).not.toBeNull();
    await expect(keys().resolveMcpKey(created.apiKey)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});

describe('resolveMcpKey', () => {
  it('resolves a key to its user, acting through MCP with the key as credential', async () => {
    const created = await createKey(designer.gql, ['config:read', 'menus:write']);
    const resolved = await keys().resolveMcpKey(created.apiKey);
    expect(resolved.keyId).toBe(created.key._id);
    expect(resolved.principal).toMatchObject({
      kind: 'user',
      userId: designer.id,
      source: 'mcp',
      credentialId: created.key._id,
      isAdmin: false,
    });
    expect([...resolved.principal.permissions].sort()).toEqual(['config:read', 'menus:write']);
  });

  it("grants only the key's scopes that the user's role grants now", async () => {
    const role = await gqlData(ownerGql, 'mutation { createRole(name: "reader", permissions: ["config:read", "ai_designer"]) { _id } }');
    const reader = await newUser('reader');
    const created = await createKey(reader.gql, ['config:read', 'features:write', 'menus:write']);
    expect(await effectivePermissions(created.apiKey)).toEqual(['config:read']);
    await gqlData(ownerGql, 'mutation($id: ID!) { updateRole(_id: $id, permissions: ["config:read", "ai_designer", "features:write"]) { _id } }', {
      id: role.createRole._id,
    });
    expect(await effectivePermissions(created.apiKey)).toEqual(['config:read', 'features:write']);
  });

  it('drops admin-only scopes as soon as the user is no longer an admin, even when the new role lists them', async () => {
    await gqlData(ownerGql, 'mutation { createRole(name: "hooker", permissions: ["config:read", "hooks:write", "env:write"]) { _id } }');
    const admin = await newUser('admin');
    const mixed = await createKey(admin.gql, ['config:read', 'hooks:write', 'env:write']);
    const adminOnly = await createKey(admin.gql, ['hooks:write']);
    expect(await effectivePermissions(mixed.apiKey)).toEqual(['config:read', 'env:write', 'hooks:write']);
    await gqlData(ownerGql, 'mutation($id: ID!) { updateUser(_id: $id, role: "hooker") { _id } }', { id: admin.id });
    expect(await effectivePermissions(mixed.apiKey)).toEqual(['config:read']);
    await expect(keys().resolveMcpKey(adminOnly.apiKey)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it.each([
    [
      'the user is disabled',
      async (apiKey: string, _id: string, userId: string) => {
        await gqlData(ownerGql, 'mutation($id: ID!) { updateUser(_id: $id, disabled: true) { _id } }', { id: userId });
        return apiKey;
      },
    ],
    [
      'the key has expired',
      async (apiKey: string, id: string) => {
        await db().updateTable('mcp_api_keys').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', id).execute();
        await server.server.services.ctx.changes.publish('auth');
        return apiKey;
      },
    ],
    [
      'the key is revoked',
      async (apiKey: string, id: string, userId: string) => {
        await keys().revokeMcpApiKey(await server.server.services.access.principalForUser(userId, 'graphql'), id);
        return apiKey;
      },
    ],
    [
      'the key belongs to another application',
      async (apiKey: string, id: string) => {
        await db().updateTable('mcp_api_keys').set({ app_id: 'another-app' }).where('id', '=', id).execute();
        await server.server.services.ctx.changes.publish('auth');
        return apiKey;
      },
    ],
    ['the key is unknown', async () => `trellis_${'A'.repeat(43)}`],
    ['the key lacks the trellis_ prefix', async (apiKey: string) => apiKey.slice('trellis_'.length)],
  ])('refuses the key with the generic UNAUTHENTICATED when %s', async (_case, spoil) => {
    const user = await newUser('designer');
    const created = await createKey(user.gql, ['config:read']);
    await keys().resolveMcpKey(created.apiKey);
    const presented = await spoil(created.apiKey, created.key._id, user.id);
    await expect(keys().resolveMcpKey(presented)).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      message: 'Authentication required or invalid',
    });
  });

  it('records when a key was last used', async () => {
    const created = await createKey(designer.gql, ['config:read']);
    const before = Date.now();
    await keys().resolveMcpKey(created.apiKey);
    const listed = (await gqlData(designer.gql, LIST_KEYS)).mcpApiKeys.find((k: { _id: string }) => k._id === created.key._id);
    expect(Date.parse(listed.lastUsedAt)).toBeGreaterThanOrEqual(before - 1000);
  });
});

describe('the raw key', () => {
  it('is stored nowhere: no text or JSON column of any table holds it, only its hash', async () => {
    const created = await createKey(designer.gql, ['config:read', 'features:write']);
    await keys().resolveMcpKey(created.apiKey);
    const stored = await allStoredText(db());
    expect(stored.columns).toBeGreaterThan(20);
    expect(stored.text).toContain(sha256Hex(created.apiKey));
    expect(stored.text).not.toContain(created.apiKey.slice('trellis_'.length));
  });

  it('is never written to the audit trail', async () => {
    const created = await createKey(ownerGql, ['config:read']);
    await gqlData(ownerGql, REVOKE_KEY, { id: created.key._id });
    const events = await db().selectFrom('audit_events').selectAll().execute();
    expect(events.some((e) => e.resource_id === created.key._id)).toBe(true);
    expect(JSON.stringify(events)).not.toContain(created.apiKey.slice('trellis_'.length));
  });
});
