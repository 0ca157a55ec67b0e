import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptEnvironment } from '../../src/envvars/service.js';
import { gqlData, graphqlClient, login, type HttpResult, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let ownerGql: ReturnType<typeof graphqlClient>;
let designerGql: ReturnType<typeof graphqlClient>;
let viewerGql: ReturnType<typeof graphqlClient>;

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
  for (const [email, role] of [
    ['designer@example.com', 'designer'],
    ['viewer@example.com', 'viewer'],
  ] as const) {
    await gqlData(ownerGql, 'mutation($e: String!, $r: String!) { createUser(email: $e, password: "password-123", role: $r) { _id } }', {
      e: email,
      r: role,
    });
  }
  designerGql = graphqlClient(server.url, await login(server.url, 'designer@example.com', 'password-123'));
  viewerGql = graphqlClient(server.url, await login(server.url, 'viewer@example.com', 'password-123'));
  for (const id of ['home', 'orders', 'reports']) {
    await db()
      .insertInto('features')
      .values({ id, name: id, custom_code: 'export default () => null;', status: 'draft', version: 1, published_version: null, created_by: null, updated_by: null, updated_at: new Date() })
      .execute();
  }
});
afterAll(async () => server?.close());

function db() {
  return server.server.services.ctx.db;
}

function errorOf(result: HttpResult) {
  expect(result.body.errors, 'expected a GraphQL error').toBeDefined();
  return result.body.errors[0] as { message: string; extensions: { code: string; status: number } };
}

async function countOf(table: 'menus' | 'env_vars' | 'audit_events'): Promise<number> {
  return (await db().selectFrom(table).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;
}

describe('menus', () => {
  const MENU = '_id name entries { label path } position createdAt updatedAt';
  const UPSERT = `mutation($name: String!, $entries: [MenuEntryInput!]!, $position: Int) {
    upsertMenu(name: $name, entries: $entries, position: $position) { created menu { ${MENU} } } }`;
  const DELETE = 'mutation($id: ID!, $confirm: Boolean!) { deleteMenu(_id: $id, confirm: $confirm) }';

  async function snapshot() {
    return { menus: await db().selectFrom('menus').selectAll().orderBy('id').execute(), audits: await countOf('audit_events') };
  }

  it('creates a menu with entries pointing at features and says it was created', async () => {
    const entries = [
      { label: 'Home', path: '/feature/home' },
      { label: 'Orders', path: '/feature/orders' },
    ];
    const result = (await gqlData(designerGql, UPSERT, { name: 'Main', entries, position: 1 })).upsertMenu;
    expect(result.created).toBe(true);
    expect(result.menu).toMatchObject({ name: 'Main', entries, position: 1 });
    expect(new Date(result.menu.createdAt).toString()).not.toBe('Invalid Date');
    const row = await db().selectFrom('menus').selectAll().where('id', '=', result.menu._id).executeTakeFirstOrThrow();
    expect(row.entries).toEqual(entries);
    const audit = await db().selectFrom('audit_events').selectAll().where('resource_id', '=', result.menu._id).execute();
    expect(audit.map((a) => a.action)).toEqual(['menu.create']);
  });

  it('replaces the entries of the menu with the same name in any case, keeping its _id and position', async () => {
    const first = (await gqlData(ownerGql, UPSERT, { name: 'Sidebar', entries: [{ label: 'Home', path: '/feature/home' }], position: 5 }))
      .upsertMenu;
    const again = (await gqlData(ownerGql, UPSERT, { name: 'SIDEBAR', entries: [{ label: 'Reports', path: '/feature/reports' }] }))
      .upsertMenu;
    expect(again.created).toBe(false);
    expect(again.menu).toMatchObject({ _id: first.menu._id, name: 'Sidebar', position: 5, entries: [{ label: 'Reports', path: '/feature/reports' }] });
    expect(await db().selectFrom('menus').select('id').where(sql<boolean>`lower(name) = 'sidebar'`).execute()).toHaveLength(1);
  });

  it('moves a menu when a new position is given and accepts an empty entry list', async () => {
    const moved = (await gqlData(ownerGql, UPSERT, { name: 'Sidebar', entries: [], position: 0 })).upsertMenu;
    expect(moved.menu).toMatchObject({ position: 0, entries: [] });
  });

  it('lists menus by position, then name, for a viewer', async () => {
    await gqlData(ownerGql, UPSERT, { name: 'Alpha', entries: [], position: 1 });
    const menus = (await gqlData(viewerGql, `{ menus { name position } }`)).menus;
    expect(menus).toEqual([
      { name: 'Sidebar', position: 0 },
      { name: 'Alpha', position: 1 },
      { name: 'Main', position: 1 },
    ]);
  });

  it.each([
    ['an empty name', { name: '', entries: [] }, 'name: '],
    ['a 101-character name', { name: 'm'.repeat(101), entries: [] }, 'name: '],
    ['an empty label', { name: 'Bad', entries: [{ label: ' ', path: '/feature/home' }] }, 'entries.0.label: '],
    ['a 101-character label', { name: 'Bad', entries: [{ label: 'l'.repeat(101), path: '/feature/home' }] }, 'entries.0.label: '],
    ['a path outside /feature/', { name: 'Bad', entries: [{ label: 'X', path: '/features/home' }] }, 'entries.0.path: '],
    ['a path without a feature id', { name: 'Bad', entries: [{ label: 'X', path: '/feature/' }] }, 'entries.0.path: '],
    ['a path with a sub-path', { name: 'Bad', entries: [{ label: 'X', path: '/feature/home/extra' }] }, 'entries.0.path: '],
    ['a relative path', { name: 'Bad', entries: [{ label: 'X', path: 'feature/home' }] }, 'entries.0.path: '],
    [
      'a path to a feature that does not exist',
      { name: 'Bad', entries: [{ label: 'Home', path: '/feature/home' }, { label: 'X', path: '/feature/ghost' }] },
      "entries.1.path: feature 'ghost' does not exist",
    ],
    [
      '101 entries',
      { name: 'Bad', entries: Array.from({ length: 101 }, () => ({ label: 'Home', path: '/feature/home' })) },
      'entries: must have at most 100',
    ],
    ['a negative position', { name: 'Bad', entries: [], position: -1 }, 'position: '],
  ])('rejects %s with BAD_INPUT naming the field and writes nothing', async (_case, variables, message) => {
    const before = await snapshot();
    const result = await ownerGql(UPSERT, variables);
    expect(errorOf(result).extensions).toMatchObject({ code: 'BAD_INPUT', status: 400 });
    expect(errorOf(result).message).toContain(message);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses to replace a menu with an unknown feature and keeps its entries', async () => {
    const before = await snapshot();
    const result = await ownerGql(UPSERT, { name: 'main', entries: [{ label: 'X', path: '/feature/ghost' }] });
    expect(errorOf(result).extensions.code).toBe('BAD_INPUT');
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a viewer with FORBIDDEN and writes nothing', async () => {
    const before = await snapshot();
    const result = await viewerGql(UPSERT, { name: 'Viewer menu', entries: [] });
    expect(errorOf(result).extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(errorOf(result).message).toContain("'menus:write'");
    expect(await snapshot()).toEqual(before);
  });

  it('deletes a menu with confirm: true and audits it', async () => {
    const temp = (await gqlData(ownerGql, UPSERT, { name: 'Temporary', entries: [] })).upsertMenu.menu;
    expect((await gqlData(designerGql, DELETE, { id: temp._id, confirm: true })).deleteMenu).toBe(true);
    expect(await db().selectFrom('menus').select('id').where('id', '=', temp._id).execute()).toEqual([]);
    const audit = await db().selectFrom('audit_events').select('action').where('resource_id', '=', temp._id).orderBy('id').execute();
    expect(audit.map((a) => a.action)).toEqual(['menu.create', 'menu.delete']);
  });

  it.each([
    ['confirm: false', () => ownerGql, false, 'BAD_INPUT'],
    ['a viewer', () => viewerGql, true, 'FORBIDDEN'],
  ])('refuses a delete with %s and keeps the menu', async (_case, client, confirm, code) => {
    const menu = (await gqlData(ownerGql, `{ menus { _id name } }`)).menus.find((m: { name: string }) => m.name === 'Main');
    const before = await snapshot();
    const result = await client()(DELETE, { id: menu._id, confirm });
    expect(errorOf(result).extensions.code).toBe(code);
    expect(await snapshot()).toEqual(before);
  });

  it('answers NOT_FOUND when deleting an unknown menu', async () => {
    const result = await ownerGql(DELETE, { id: 'missing', confirm: true });
    expect(errorOf(result).extensions.code).toBe('NOT_FOUND');
  });
});

describe('environment variables', () => {
  const SECRET = 'sk_live_Very-Secret-Value-4242';
  const SECRET_2 = 'second-SECRET-value-9999';
  const ENV = '_id name createdAt updatedAt created';
  const SET = `mutation($name: String!, $value: String!) { setEnvironmentVariable(name: $name, value: $value) { ${ENV} } }`;
  const LIST = '{ environmentVariables { _id name createdAt updatedAt } }';
  const DELETE = 'mutation($name: String!, $confirm: Boolean!) { deleteEnvironmentVariable(name: $name, confirm: $confirm) }';
  const answers: unknown[] = [];

  async function recorded(gql: ReturnType<typeof graphqlClient>, query: string, variables: Record<string, unknown> = {}) {
    const result = await gql(query, variables);
    answers.push(result.body);
    return result;
  }

  async function snapshot() {
    return { envVars: await db().selectFrom('env_vars').selectAll().orderBy('id').execute(), audits: await countOf('audit_events') };
  }

  it('creates a variable and answers with its name and created: true, never its value', async () => {
    const result = await recorded(ownerGql, SET, { name: 'STRIPE_KEY', value: SECRET });
    const variable = result.body.data.setEnvironmentVariable;
    expect(variable).toEqual({ _id: expect.any(String), name: 'STRIPE_KEY', createdAt: expect.any(String), updatedAt: expect.any(String), created: true });
  });

  it('updates an existing variable and answers created: false with the same _id', async () => {
    const before = await db().selectFrom('env_vars').selectAll().where('name', '=', 'STRIPE_KEY').executeTakeFirstOrThrow();
    const result = await recorded(ownerGql, SET, { name: 'STRIPE_KEY', value: SECRET_2 });
    expect(result.body.data.setEnvironmentVariable).toMatchObject({ _id: before.id, name: 'STRIPE_KEY', created: false });
    const after = await db().selectFrom('env_vars').selectAll().where('name', '=', 'STRIPE_KEY').executeTakeFirstOrThrow();
    expect(after.value_ciphertext).not.toBe(before.value_ciphertext);
    expect(server.server.services.ctx.secretBox.decrypt(after.value_ciphertext)).toBe(SECRET_2);
  });

  it('stores only AES-GCM ciphertext that differs from the value and decrypts back to it', async () => {
    await recorded(ownerGql, SET, { name: 'API_TOKEN', value: SECRET });
    const row = await db().selectFrom('env_vars').selectAll().where('name', '=', 'API_TOKEN').executeTakeFirstOrThrow();
    expect(row.value_ciphertext).toMatch(/^v1:/);
    expect(row.value_ciphertext).not.toContain(SECRET);
    expect(JSON.stringify(row)).not.toContain(SECRET);
    expect(server.server.services.ctx.secretBox.decrypt(row.value_ciphertext)).toBe(SECRET);
  });

  it('lists names and timestamps only, to a viewer', async () => {
    const result = await recorded(viewerGql, LIST);
    expect(result.body.data.environmentVariables.map((v: { name: string }) => v.name)).toEqual(['API_TOKEN', 'STRIPE_KEY']);
  });

  it('has no value field in the GraphQL schema at all', async () => {
    const type = await recorded(ownerGql, '{ __type(name: "EnvironmentVariable") { fields { name } } }');
    expect(type.body.data.__type.fields.map((f: { name: string }) => f.name).sort()).toEqual(['_id', 'created', 'createdAt', 'name', 'updatedAt']);
    const asked = await recorded(ownerGql, '{ environmentVariables { name value } }');
    expect(asked.status).toBe(400);
    expect(asked.body.errors[0].message).toContain('Cannot query field "value"');
  });

  it('gives the hook runtime the decrypted values through decryptEnvironment', async () => {
    expect(await decryptEnvironment(server.server.services.ctx)).toEqual({ STRIPE_KEY: SECRET_2, API_TOKEN: SECRET });
  });

  it('audits every write by name without the value', async () => {
    const audit = await db().selectFrom('audit_events').selectAll().where('resource_type', '=', 'env_var').orderBy('id').execute();
    expect(audit.map((a) => [a.action, a.details.name])).toEqual([
      ['env.create', 'STRIPE_KEY'],
      ['env.update', 'STRIPE_KEY'],
      ['env.create', 'API_TOKEN'],
    ]);
    const everything = JSON.stringify(await db().selectFrom('audit_events').selectAll().execute());
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(SECRET_2);
  });

  it.each([
    ['a designer (env:write is admin-only)', () => designerGql],
    ['a viewer', () => viewerGql],
  ])('refuses %s with FORBIDDEN and writes nothing', async (_case, client) => {
    const before = await snapshot();
    const result = await recorded(client(), SET, { name: 'STRIPE_KEY', value: 'overwritten-by-designer' });
    expect(errorOf(result).extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(errorOf(result).message).toContain("'env:write'");
    expect(await snapshot()).toEqual(before);
  });

  it.each([
    ['an empty name', ''],
    ['a name starting with a digit', '1KEY'],
    ['a name with a hyphen', 'MY-KEY'],
    ['a name with a space', 'MY KEY'],
    ['a 129-character name', 'K'.repeat(129)],
  ])('rejects %s with BAD_INPUT naming `name` and writes nothing', async (_case, name) => {
    const before = await snapshot();
    const result = await recorded(ownerGql, SET, { name, value: SECRET });
    expect(errorOf(result).extensions.code).toBe('BAD_INPUT');
    expect(errorOf(result).message).toMatch(/^name: /);
    expect(await snapshot()).toEqual(before);
  });

  it('accepts names with _ first and 128 characters', async () => {
    const name = `_${'A'.repeat(127)}`;
    expect((await recorded(ownerGql, SET, { name, value: '' })).body.data.setEnvironmentVariable.name).toBe(name);
    await recorded(ownerGql, DELETE, { name, confirm: true });
  });

  it('refuses a value over 64 KB with PAYLOAD_TOO_LARGE and writes nothing', async () => {
    const before = await snapshot();
    const result = await recorded(ownerGql, SET, { name: 'BIG', value: 'x'.repeat(65_537) });
    expect(errorOf(result).extensions).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    expect(await snapshot()).toEqual(before);
    expect((await recorded(ownerGql, SET, { name: 'BIG', value: 'x'.repeat(65_536) })).body.data.setEnvironmentVariable.created).toBe(true);
  });

  it.each([
    ['confirm: false', () => ownerGql, false, 'BAD_INPUT'],
    ['a designer', () => designerGql, true, 'FORBIDDEN'],
  ])('refuses a delete with %s and keeps the variable', async (_case, client, confirm, code) => {
    const before = await snapshot();
    const result = await recorded(client(), DELETE, { name: 'API_TOKEN', confirm });
    expect(errorOf(result).extensions.code).toBe(code);
    expect(await snapshot()).toEqual(before);
  });

  it('deletes a variable with confirm: true, and then answers NOT_FOUND for it', async () => {
    expect((await recorded(ownerGql, DELETE, { name: 'API_TOKEN', confirm: true })).body.data.deleteEnvironmentVariable).toBe(true);
    expect(await db().selectFrom('env_vars').select('id').where('name', '=', 'API_TOKEN').execute()).toEqual([]);
    expect(errorOf(await recorded(ownerGql, DELETE, { name: 'API_TOKEN', confirm: true })).extensions.code).toBe('NOT_FOUND');
  });

  it('never put a secret value in any GraphQL answer of this suite', () => {
    expect(answers.length).toBeGreaterThan(10);
    const text = JSON.stringify(answers);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(SECRET_2);
    expect(text).not.toContain('overwritten-by-designer');
  });
});
