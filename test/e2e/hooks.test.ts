import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER } from '../helpers/env.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type HttpResult, type TestServer } from '../helpers/server.js';

type Gql = ReturnType<typeof graphqlClient>;

const HOOK = '_id name type tableId content contentSha256 version createdBy updatedBy createdAt updatedAt';
const CREATE = `mutation($name: String!, $type: HookType!, $tableId: ID, $content: String!) {
  createHook(name: $name, type: $type, tableId: $tableId, content: $content) { ${HOOK} }
}`;
const UPDATE = `mutation($_id: ID!, $name: String, $tableId: ID, $content: String) {
  updateHook(_id: $_id, name: $name, tableId: $tableId, content: $content) { ${HOOK} }
}`;
const DELETE = 'mutation($_id: ID!, $confirm: Boolean!) { deleteHook(_id: $_id, confirm: $confirm) }';
const GET = `query($_id: ID!) { hook(_id: $_id) { ${HOOK} } }`;
const LIST = 'query($type: HookType, $tableId: ID) { hooks(type: $type, tableId: $tableId) { _id name type tableId } }';
const CODE = 'async function hook(instance) { return instance; }';
const TABLE_ID = 'tbl-orders';
const OTHER_TABLE_ID = 'tbl-customers';
const HOOK_LIMIT = 204_800;

/** Valid hook code that returns `value`. */
const returning = (value: string) => `async function hook(instance) { return ${JSON.stringify(value)}; }`;
/** Valid hook code of exactly `bytes` bytes of UTF-8, padded with a comment that ends in `last`. */
function paddedHook(bytes: number, last = 'a'): string {
  const head = `${CODE}\n// `;
  return head + 'a'.repeat(bytes - head.length - Buffer.byteLength(last)) + last;
}

let server: TestServer;
let ownerGql: Gql;
let designerGql: Gql;
let viewerGql: Gql;
let ownerId: string;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const db = () => server.server.services.ctx.db;

async function createUser(email: string, role: string): Promise<string> {
  const created = await gqlData(ownerGql, 'mutation($e: String!, $r: String!) { createUser(email: $e, password: "password-123", role: $r) { _id } }', {
    e: email,
    r: role,
  });
  return created.createUser._id;
}

async function signInAs(email: string, role: string): Promise<Gql> {
  await createUser(email, role);
  const session = await postJson(`${server.url}/api/auth/login`, { email, password: 'password-123' });
  return graphqlClient(server.url, session.body.token);
}

async function createHook(gql: Gql, variables: Record<string, unknown>) {
  return (await gqlData(gql, CREATE, { type: 'webHook', content: CODE, ...variables })).createHook;
}

async function rowCounts() {
  const count = async (table: 'hooks' | 'hook_versions' | 'mail_outbox' | 'audit_events') =>
    Number((await db().selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return {
    hooks: await count('hooks'),
    hookVersions: await count('hook_versions'),
    mails: await count('mail_outbox'),
    auditEvents: await count('audit_events'),
  };
}

async function mailsWithSubject(subject: string) {
  return db().selectFrom('mail_outbox').selectAll().where('subject', '=', subject).orderBy('to_address').execute();
}

function expectError(result: HttpResult, code: string, status: number, fragment: string) {
  expect(result.body.errors?.[0]?.extensions).toMatchObject({ code, status });
  expect(result.body.errors[0].message).toContain(fragment);
}

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
  ownerId = (await gqlData(ownerGql, '{ me { _id } }')).me._id;
  await db()
    .insertInto('app_tables')
    .values([
      { id: TABLE_ID, name: 'Orders', sql_name: 'hooks_test_orders', updated_at: new Date() },
      { id: OTHER_TABLE_ID, name: 'Customers', sql_name: 'hooks_test_customers', updated_at: new Date() },
    ])
    .execute();
  const coOwnerId = await createUser('co-owner@example.com', 'admin');
  const retiredOwnerId = await createUser('retired-owner@example.com', 'admin');
  await db().updateTable('users').set({ is_owner: true }).where('id', 'in', [coOwnerId, retiredOwnerId]).execute();
  await db().updateTable('users').set({ disabled: true }).where('id', '=', retiredOwnerId).execute();
  designerGql = await signInAs('designer@example.com', 'designer');
  viewerGql = await signInAs('viewer@example.com', 'viewer');
  await createHook(ownerGql, { name: 'Existing_hook' });
});
afterAll(async () => server?.close());

describe('createHook', () => {
  it('creates a beforeSave hook as version 1 with the sha256 of its code and a version row', async () => {
    const created = await createHook(ownerGql, { name: 'Check order total', type: 'beforeSave', tableId: TABLE_ID });
    expect(created).toMatchObject({
      name: 'Check order total',
      type: 'beforeSave',
      tableId: TABLE_ID,
      content: CODE,
      contentSha256: sha256(CODE),
      version: 1,
      createdBy: ownerId,
      updatedBy: ownerId,
    });
    expect((await gqlData(viewerGql, GET, { _id: created._id })).hook).toEqual(created);
    const versions = await db().selectFrom('hook_versions').selectAll().where('hook_id', '=', created._id).execute();
    expect(versions).toEqual([expect.objectContaining({ version: 1, content: CODE, content_sha256: sha256(CODE), author_id: ownerId })]);
  });

  it('e-mails every owner, a disabled one too, naming the hook, type, author, source and code hash but not the code', async () => {
    const content = 'async function hook(instance) { return "secret-marker"; }';
    await createHook(ownerGql, { name: 'Mail me', type: 'afterSave', tableId: TABLE_ID, content });
    const mails = await mailsWithSubject('Hook "Mail me" created');
    expect(mails.map((m) => m.to_address)).toEqual(['co-owner@example.com', OWNER.email, 'retired-owner@example.com']);
    for (const mail of mails) {
      expect(mail.body).toContain('"Mail me"');
      expect(mail.body).toContain('Type: afterSave');
      expect(mail.body).toContain(`Author: ${OWNER.email}`);
      expect(mail.body).toContain('Source: graphql');
      expect(mail.body).toContain(sha256(content));
      expect(mail.body).not.toContain('secret-marker');
      expect(mail.sent_at).toBeNull();
    }
  });

  it('audits the write with the sha256 of the persisted code', async () => {
    const created = await createHook(ownerGql, { name: 'Audited', content: returning('one') });
    const event = await db().selectFrom('audit_events').selectAll().where('resource_id', '=', created._id).executeTakeFirstOrThrow();
    expect(event).toMatchObject({ action: 'hook.create', resource_type: 'hook', actor_id: ownerId, source: 'graphql' });
    expect(event.details).toMatchObject({ name: 'Audited', type: 'webHook', version: 1, codeSha256: sha256(returning('one')) });
  });

  it.each([
    ['without a table', 'web-no-table', {}, null],
    ['with an existing table', 'web-known-table', { tableId: TABLE_ID }, TABLE_ID],
    ['with an unknown table', 'web-unknown-table', { tableId: 'tbl-nowhere' }, null],
  ])('creates a webhook %s, keeping only a table that exists', async (_case, name, variables, expected) => {
    const created = await createHook(ownerGql, { name, ...variables });
    expect(created).toMatchObject({ type: 'webHook', tableId: expected });
  });

  it.each([
    ['a', false],
    ['has space', false],
    ['ü-nope', false],
    ['x'.repeat(65), false],
    ['ok_name-2', true],
    ['AB', true],
  ])('webhook name %j accepted: %s', async (name, accepted) => {
    const before = await rowCounts();
    const result = await ownerGql(CREATE, { name, type: 'webHook', content: CODE });
    if (accepted) {
      expect(result.body.data.createHook.name).toBe(name);
      return;
    }
    expectError(result, 'BAD_INPUT', 400, 'name: must be 2 to 64 characters: letters, digits, _ and - only');
    expect(await rowCounts()).toEqual(before);
  });

  it.each([
    ['Validate order 1', true],
    ['x', true],
    ['bad/name', false],
    ['n'.repeat(101), false],
  ])('table hook name %j accepted: %s', async (name, accepted) => {
    const result = await ownerGql(CREATE, { name, type: 'beforeSave', tableId: TABLE_ID, content: CODE });
    if (accepted) expect(result.body.data.createHook.name).toBe(name);
    else expectError(result, 'BAD_INPUT', 400, 'name: must be 1 to 100 characters');
  });

  it('accepts code of exactly 200 KB', async () => {
    const created = await createHook(ownerGql, { name: 'Big-enough', content: paddedHook(HOOK_LIMIT) });
    expect(created.content).toHaveLength(HOOK_LIMIT);
  });

  it.each([
    ['a beforeSave hook without tableId', { type: 'beforeSave' }, 'BAD_INPUT', 400, 'tableId: is required for beforeSave hooks'],
    ['an afterSave hook on an unknown table', { type: 'afterSave', tableId: 'tbl-nowhere' }, 'NOT_FOUND', 404, "Table 'tbl-nowhere'"],
    ['a name taken in another case', { name: 'EXISTING_HOOK' }, 'CONFLICT', 409, 'name: a hook named'],
    ['empty content', { content: '  ' }, 'BAD_INPUT', 400, 'content: must not be empty'],
    ['an unknown type', { type: 'onDelete' }, 'BAD_INPUT', 400, 'HookType must be one of beforeSave, afterSave, webHook'],
    ['code of 200 KB + 1 byte', { content: paddedHook(HOOK_LIMIT + 1) }, 'PAYLOAD_TOO_LARGE', 413, 'content: must be at most 200 KB (204800 bytes'],
    ['code over 200 KB in UTF-8 bytes only', { content: paddedHook(HOOK_LIMIT + 1, 'é') }, 'PAYLOAD_TOO_LARGE', 413, 'content:'],
  ])('refuses %s and writes nothing: no hook, version, mail or audit row', async (_case, variables, code, status, fragment) => {
    const before = await rowCounts();
    const result = await ownerGql(CREATE, { name: 'Refused_hook', type: 'webHook', content: CODE, ...variables });
    expectError(result, code, status, fragment);
    expect(await rowCounts()).toEqual(before);
  });

  it.each([
    ['a designer', () => designerGql],
    ['a viewer', () => viewerGql],
  ])("refuses %s with FORBIDDEN naming 'hooks:write' and writes nothing", async (_who, client) => {
    const before = await rowCounts();
    expectError(await client()(CREATE, { name: 'Sneaky', type: 'webHook', content: CODE }), 'FORBIDDEN', 403, "'hooks:write'");
    expect(await rowCounts()).toEqual(before);
  });
});

describe('updateHook', () => {
  it('saves new code as the next version, e-mails the owners and audits the new hash', async () => {
    const { _id } = await createHook(ownerGql, { name: 'Evolving', type: 'beforeSave', tableId: TABLE_ID });
    const content = 'async function hook(instance) { if (!instance.total) throw new Error("total"); }';
    const updated = (await gqlData(ownerGql, UPDATE, { _id, content })).updateHook;
    expect(updated).toMatchObject({ content, contentSha256: sha256(content), version: 2, type: 'beforeSave' });
    const versions = await db().selectFrom('hook_versions').select(['version', 'content_sha256']).where('hook_id', '=', _id).orderBy('version').execute();
    expect(versions).toEqual([
      { version: 1, content_sha256: sha256(CODE) },
      { version: 2, content_sha256: sha256(content) },
    ]);
    const mails = await mailsWithSubject('Hook "Evolving" modified');
    expect(mails.map((m) => m.to_address)).toEqual(['co-owner@example.com', OWNER.email, 'retired-owner@example.com']);
    expect(mails[0]!.body).toContain(sha256(content));
    const event = await db().selectFrom('audit_events').selectAll().where('resource_id', '=', _id).where('action', '=', 'hook.update').executeTakeFirstOrThrow();
    expect(event.details).toMatchObject({ version: 2, codeSha256: sha256(content) });
  });

  it('renames a hook and moves it to another table, writing a version for the save', async () => {
    const { _id } = await createHook(ownerGql, { name: 'Mover', type: 'afterSave', tableId: TABLE_ID });
    const updated = (await gqlData(ownerGql, UPDATE, { _id, name: 'Moved hook', tableId: OTHER_TABLE_ID })).updateHook;
    expect(updated).toMatchObject({ name: 'Moved hook', tableId: OTHER_TABLE_ID, content: CODE, version: 2 });
    expect((await mailsWithSubject('Hook "Moved hook" modified')).length).toBe(3);
  });

  it('returns the previous content to the service caller', async () => {
    const { _id } = await createHook(ownerGql, { name: 'Diffable', content: returning('old') });
    const owner = await server.server.services.access.principalForUser(ownerId, 'system');
    const result = await server.server.services.hooks.updateHook(owner, { _id, content: returning('new') });
    expect(result.previousCode).toBe(returning('old'));
    expect(result.hook.content).toBe(returning('new'));
  });

  it.each([
    ['a webhook name with a space', 'guarded-1', { name: 'has space' }, 'BAD_INPUT', 400, 'name: must be 2 to 64'],
    ['a name another hook has', 'guarded-2', { name: 'existing_HOOK' }, 'CONFLICT', 409, 'name:'],
    ['code of 200 KB + 1 byte', 'guarded-3', { content: paddedHook(HOOK_LIMIT + 1) }, 'PAYLOAD_TOO_LARGE', 413, 'content:'],
    ['empty content', 'guarded-4', { content: '' }, 'BAD_INPUT', 400, 'content: must not be empty'],
  ])('refuses %s and keeps the stored hook', async (_case, name, change, code, status, fragment) => {
    const { _id } = await createHook(ownerGql, { name });
    const before = await rowCounts();
    expectError(await ownerGql(UPDATE, { _id, ...change }), code, status, fragment);
    expect(await rowCounts()).toEqual(before);
    expect((await gqlData(ownerGql, GET, { _id })).hook).toMatchObject({ content: CODE, version: 1 });
  });

  it('refuses to move a table hook to an unknown table', async () => {
    const { _id } = await createHook(ownerGql, { name: 'Anchored', type: 'beforeSave', tableId: TABLE_ID });
    const before = await rowCounts();
    expectError(await ownerGql(UPDATE, { _id, tableId: 'tbl-nowhere' }), 'NOT_FOUND', 404, "Table 'tbl-nowhere'");
    expect(await rowCounts()).toEqual(before);
  });

  it("refuses a designer with FORBIDDEN naming 'hooks:write'", async () => {
    const { _id } = await createHook(ownerGql, { name: 'Untouchable' });
    expectError(await designerGql(UPDATE, { _id, content: returning('two') }), 'FORBIDDEN', 403, "'hooks:write'");
    expect((await gqlData(ownerGql, GET, { _id })).hook.content).toBe(CODE);
  });

  it('answers NOT_FOUND for an unknown hook', async () => {
    expectError(await ownerGql(UPDATE, { _id: 'no-such-hook', content: returning('x') }), 'NOT_FOUND', 404, "Hook 'no-such-hook'");
  });
});

describe('listing hooks', () => {
  it('filters by type and by table, ordered by name', async () => {
    await createHook(ownerGql, { name: 'zz list before', type: 'beforeSave', tableId: OTHER_TABLE_ID });
    await createHook(ownerGql, { name: 'aa list after', type: 'afterSave', tableId: OTHER_TABLE_ID });
    const onTable = (await gqlData(viewerGql, LIST, { tableId: OTHER_TABLE_ID })).hooks.map((h: { name: string }) => h.name);
    expect(onTable).toEqual(expect.arrayContaining(['aa list after', 'zz list before']));
    expect(onTable.indexOf('aa list after')).toBeLessThan(onTable.indexOf('zz list before'));
    const before = (await gqlData(viewerGql, LIST, { type: 'beforeSave', tableId: OTHER_TABLE_ID })).hooks;
    expect(before.map((h: { name: string }) => h.name)).toEqual(['zz list before']);
    const webhooks = (await gqlData(viewerGql, LIST, { type: 'webHook' })).hooks;
    expect(webhooks.length).toBeGreaterThan(0);
    expect(webhooks.every((h: { type: string }) => h.type === 'webHook')).toBe(true);
  });

  it('refuses an unknown type filter with BAD_INPUT', async () => {
    expectError(await viewerGql(LIST, { type: 'never' }), 'BAD_INPUT', 400, 'HookType must be one of beforeSave, afterSave, webHook');
  });
});

describe('deleteHook', () => {
  it('deletes the hook with its versions and audits it', async () => {
    const { _id } = await createHook(ownerGql, { name: 'Short-lived' });
    await gqlData(ownerGql, UPDATE, { _id, content: returning('three') });
    expect((await gqlData(ownerGql, DELETE, { _id, confirm: true })).deleteHook).toBe(true);
    expectError(await ownerGql(GET, { _id }), 'NOT_FOUND', 404, _id);
    expect(await db().selectFrom('hook_versions').select('version').where('hook_id', '=', _id).execute()).toEqual([]);
    const event = await db().selectFrom('audit_events').selectAll().where('action', '=', 'hook.delete').where('resource_id', '=', _id).executeTakeFirstOrThrow();
    expect(event).toMatchObject({ actor_id: ownerId, details: { name: 'Short-lived', type: 'webHook' } });
  });

  it('refuses confirm: false with BAD_INPUT and deletes nothing', async () => {
    const { _id } = await createHook(ownerGql, { name: 'Kept-hook' });
    const before = await rowCounts();
    expectError(await ownerGql(DELETE, { _id, confirm: false }), 'BAD_INPUT', 400, 'confirm: must be true to delete');
    expect(await rowCounts()).toEqual(before);
    expect((await gqlData(ownerGql, GET, { _id })).hook.name).toBe('Kept-hook');
  });

  it("refuses a designer with FORBIDDEN naming 'config:delete' and deletes nothing", async () => {
    const { _id } = await createHook(ownerGql, { name: 'Guarded-delete' });
    const before = await rowCounts();
    expectError(await designerGql(DELETE, { _id, confirm: true }), 'FORBIDDEN', 403, "'config:delete'");
    expect(await rowCounts()).toEqual(before);
  });

  it('answers NOT_FOUND for an unknown hook', async () => {
    expectError(await ownerGql(DELETE, { _id: 'never-was', confirm: true }), 'NOT_FOUND', 404, "Hook 'never-was'");
  });
});
