import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/platform/crypto.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';
import { allStoredText } from '../helpers/stored-text.js';

type Gql = ReturnType<typeof graphqlClient>;
type Created = { clientId: string; apiKey: string; integration: { _id: string } };

const CREATE = 'mutation($name: String!) { createIntegrationKey(name: $name) { clientId apiKey integration { _id name clientId roleId createdAt } } }';
const LIST = '{ integrationKeys { _id name clientId roleId createdAt } }';
const DELETE = 'mutation($clientId: String!) { deleteIntegrationKey(clientId: $clientId) }';

let server: TestServer;
let ownerGql: Gql;
let designerGql: Gql;

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
  await gqlData(ownerGql, 'mutation { createUser(email: "dora@example.com", password: "designer-pass", role: "designer") { _id } }');
  designerGql = graphqlClient(server.url, await login(server.url, 'dora@example.com', 'designer-pass'));
});
afterAll(async () => server?.close());

const db = () => server.server.services.ctx.db;
const integrations = () => server.server.services.integrations;

async function createIntegration(name: string) {
  return (await gqlData(ownerGql, CREATE, { name })).createIntegrationKey;
}

async function ensureIntegration(name: string): Promise<void> {
  const existing = await db().selectFrom('integration_keys').select('id').where('name', '=', name).executeTakeFirst();
  if (!existing) await createIntegration(name);
}

async function integrationCount(): Promise<number> {
  const row = await db().selectFrom('integration_keys').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function issueToken(clientId: string): Promise<string> {
  const token = `tok-${clientId}-${Math.random()}`;
  await db()
    .insertInto('access_tokens')
    .values({ token_hash: sha256Hex(token), client_id: clientId, expires_at: new Date(Date.now() + 3_600_000) })
    .execute();
  return sha256Hex(token);
}

describe('createIntegrationKey', () => {
  it('returns a clientId and an apiKey shown once, beside the integration record', async () => {
    const created = await createIntegration('Warehouse');
    expect(created.clientId).toMatch(/^trc_[A-Za-z0-9_-]{16}$/);
    expect(created.apiKey).toMatch(/^trik_[A-Za-z0-9_-]{43}$/);
    expect(created.integration).toEqual({ _id: expect.any(String), name: 'Warehouse', clientId: created.clientId, roleId: null, createdAt: expect.any(String) });
  });

  it('stores only the SHA-256 of the apiKey and records the creation in the audit trail', async () => {
    const created = await createIntegration('Billing');
    const row = await db().selectFrom('integration_keys').selectAll().where('client_id', '=', created.clientId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ key_hash: sha256Hex(created.apiKey), app_id: server.server.services.ctx.appId, name: 'Billing' });
    const event = await db()
      .selectFrom('audit_events')
      .selectAll()
      .where('action', '=', 'integration_key.create')
      .where('resource_id', '=', row.id)
      .executeTakeFirstOrThrow();
    expect(event.details).toEqual({ name: 'Billing', clientId: created.clientId, roleId: null });
  });

  it.each([['crm'], ['CRM'], ['  Crm ']])('refuses the name %j beside an existing "crm", ignoring case, with CONFLICT', async (name) => {
    await ensureIntegration('crm');
    const before = await integrationCount();
    const result = await ownerGql(CREATE, { name });
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', status: 409 });
    expect(result.body.errors[0].message).toContain("'crm'");
    expect(await integrationCount()).toBe(before);
  });

  it.each([
    ['an empty name', '   ', 'name: must not be empty'],
    ['a name over 100 characters', 'n'.repeat(101), 'name: must be at most 100 characters'],
  ])('rejects %s with BAD_INPUT naming the field', async (_case, name, message) => {
    const before = await integrationCount();
    const result = await ownerGql(CREATE, { name });
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'BAD_INPUT', status: 400 });
    expect(result.body.errors[0].message).toBe(message);
    expect(await integrationCount()).toBe(before);
  });
});

describe('admin only', () => {
  it.each([
    ['createIntegrationKey', CREATE, { name: 'Sneaky' }],
    ['integrationKeys', LIST, {}],
    ['deleteIntegrationKey', DELETE, { clientId: 'trc_whatever' }],
  ])('refuses %s to a user who is not an admin with FORBIDDEN', async (_case, query, variables) => {
    const result = await designerGql(query, variables);
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(result.body.errors[0].message).toContain("'admin'");
  });
});

describe('integrationKeys', () => {
  it('lists every integration newest first, without any apiKey', async () => {
    const older = await createIntegration('Listed one');
    const newer = await createIntegration('Listed two');
    const listed = await ownerGql(LIST);
    const ids = listed.body.data.integrationKeys.map((i: { _id: string }) => i._id);
    expect(ids.indexOf(newer.integration._id)).toBeLessThan(ids.indexOf(older.integration._id));
    expect(listed.body.data.integrationKeys).toContainEqual(newer.integration);
    const text = JSON.stringify(listed.body);
    expect(text).not.toContain(older.apiKey.slice(5));
    expect(text).not.toContain(newer.apiKey.slice(5));
    expect((await ownerGql('{ integrationKeys { apiKey } }')).status).toBe(400);
  });
});

describe('verifyIntegrationCredentials', () => {
  it('returns the integration for its clientId and apiKey', async () => {
    const created = await createIntegration('Verified');
    expect(await integrations().verifyIntegrationCredentials(created.clientId, created.apiKey)).toMatchObject({
      _id: created.integration._id,
      clientId: created.clientId,
    });
  });

  it.each([
    ['a wrong apiKey', (a: Created, _b: Created) => [a.clientId, `${a.apiKey}x`]],
    ['the apiKey of another integration', (a: Created, b: Created) => [a.clientId, b.apiKey]],
    ['an unknown clientId', (a: Created, _b: Created) => ['trc_unknown', a.apiKey]],
    ['an empty apiKey', (a: Created, _b: Created) => [a.clientId, '']],
  ])('refuses %s with the generic UNAUTHENTICATED', async (label, pick) => {
    const [clientId, apiKey] = pick(await createIntegration(`${label} a`), await createIntegration(`${label} b`));
    await expect(integrations().verifyIntegrationCredentials(clientId!, apiKey!)).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      message: 'Authentication required or invalid',
    });
  });
});

describe('deleteIntegrationKey', () => {
  it('deletes the integration and its access tokens at once, leaving other integrations’ tokens', async () => {
    const doomed = await createIntegration('Doomed');
    const kept = await createIntegration('Kept');
    await issueToken(doomed.clientId);
    await issueToken(doomed.clientId);
    const keptToken = await issueToken(kept.clientId);

    expect((await gqlData(ownerGql, DELETE, { clientId: doomed.clientId })).deleteIntegrationKey).toBe(true);

    const tokens = await db().selectFrom('access_tokens').select(['token_hash', 'client_id']).where('client_id', 'in', [doomed.clientId, kept.clientId]).execute();
    expect(tokens).toEqual([{ token_hash: keptToken, client_id: kept.clientId }]);
    const listed = (await gqlData(ownerGql, LIST)).integrationKeys.map((i: { clientId: string }) => i.clientId);
    expect(listed).not.toContain(doomed.clientId);
    expect(listed).toContain(kept.clientId);
    await expect(integrations().verifyIntegrationCredentials(doomed.clientId, doomed.apiKey)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const event = await db()
      .selectFrom('audit_events')
      .selectAll()
      .where('action', '=', 'integration_key.delete')
      .where('resource_id', '=', doomed.integration._id)
      .executeTakeFirstOrThrow();
    expect(event.details).toEqual({ name: 'Doomed', clientId: doomed.clientId, accessTokensRevoked: 2 });
  });

  it('answers NOT_FOUND for an unknown clientId', async () => {
    const result = await ownerGql(DELETE, { clientId: 'trc_nothing' });
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(result.body.errors[0].message).toContain('trc_nothing');
  });
});

describe('the raw apiKey', () => {
  it('is stored nowhere: no text or JSON column of any table holds it, only its hash', async () => {
    const created = await createIntegration('Secret keeper');
    const stored = await allStoredText(db());
    expect(stored.text).toContain(sha256Hex(created.apiKey));
    expect(stored.text).toContain(created.clientId);
    expect(stored.text).not.toContain(created.apiKey.slice('trik_'.length));
  });

  it('is never written to the audit trail', async () => {
    const created = await createIntegration('Audited secret');
    await gqlData(ownerGql, DELETE, { clientId: created.clientId });
    const events = await db().selectFrom('audit_events').selectAll().execute();
    expect(events.filter((e) => e.resource_id === created.integration._id)).toHaveLength(2);
    expect(JSON.stringify(events)).not.toContain(created.apiKey.slice('trik_'.length));
  });
});
