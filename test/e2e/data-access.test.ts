import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEVELS, reaches, refusal, rule, rules, type Action, type Level, type Region, signInMatrixPeople, type Who } from '../helpers/access-matrix.js';
import { connectMcp, createUserKey, firstText, structuredData } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type HttpResult, type TestServer } from '../helpers/server.js';

/**
 * Data access by role (issue 19, D32), as clients see it over GraphQL: a session, an integration
 * acting with a role, an integration acting for a user (x-userid), and both at once. Every answer
 * is checked against the reference model of test/helpers/access-matrix.ts, which
 * data-access-bridge.test.ts walks through the application page.
 */

type Gql = ReturnType<typeof graphqlClient>;

interface Fixture {
  id: string;
  by: Who;
  region: Region;
}

const RECORD = '_id title region salary _createdBy';
const SET_ACCESS = 'mutation($t: ID!, $r: ID!, $a: TableAccessInput!) { setTableAccess(tableId: $t, roleId: $r, access: $a) { roleId read { level filter } } }';

let server: TestServer;
let admin: Gql;
let tableId: string;
let userIds: Record<Who, string>;
let sessions: Record<Who, Gql>;
let fixtures: Fixture[] = [];
let counter = 0;

/** A path in: how the request authenticates, and whom `$user` and OWN mean then (null: no user). */
interface Path {
  name: string;
  user: Who | null;
  client: () => Gql;
}
const clients = {} as Record<string, Gql>;
const PATHS: Path[] = [
  { name: 'a session of a clerk', user: 'clerk1', client: () => sessions.clerk1 },
  { name: 'an integration with the clerk role', user: null, client: () => clients.integrationRole! },
  { name: 'an integration without a role acting for a clerk (x-userid)', user: 'clerk1', client: () => clients.integrationUser! },
  { name: 'an integration with the clerk role acting for an admin (x-userid)', user: 'owner', client: () => clients.integrationBoth! },
];

async function setClerkAccess(levels: Partial<Record<Action, Level>>, extra: { hiddenFields?: string[]; readOnlyFields?: string[] } = {}) {
  await gqlData(admin, SET_ACCESS, { t: tableId, r: 'clerk', a: { ...rules(levels), ...extra } });
}

async function createAs(who: Who, region: Region): Promise<Fixture> {
  const data = await gqlData(sessions[who], `mutation($d: LedgerInput!) { createLedger(data: $d) { ${RECORD} } }`, {
    d: { title: `r${++counter}`, region, salary: 1000 },
  });
  return { id: data.createLedger._id, by: who, region };
}

/** Six records: each creator × each region, made while the clerks may do everything. */
async function makeFixtures(): Promise<Fixture[]> {
  await setClerkAccess({});
  const made: Fixture[] = [];
  for (const who of ['clerk1', 'clerk2', 'owner'] as const) {
    for (const region of ['EU', 'US'] as const) made.push(await createAs(who, region));
  }
  return made;
}

function expectError(result: HttpResult, code: string, fragment?: string) {
  expect(result.body.errors, JSON.stringify(result.body)).toHaveLength(1);
  expect(result.body.errors[0].extensions.code).toBe(code);
  if (fragment) expect(result.body.errors[0].message).toContain(fragment);
}

async function integrationToken(name: string, roleId?: string): Promise<string> {
  const created = await gqlData(admin, 'mutation($n: String!, $r: ID) { createIntegrationKey(name: $n, roleId: $r) { clientId apiKey integration { roleId } } }', { n: name, r: roleId ?? null });
  const token = await postJson(`${server.url}/api/auth/token`, { clientId: created.createIntegrationKey.clientId, apiKey: created.createIntegrationKey.apiKey });
  return token.body.access_token;
}

function integrationClient(token: string, actingUser?: string): Gql {
  return (query, variables = {}) =>
    postJson(`${server.url}/graphql`, { query, variables }, { authorization: `Bearer ${token}`, ...(actingUser ? { 'x-userid': actingUser } : {}) });
}

beforeAll(async () => {
  server = await startTestServer();
  admin = graphqlClient(server.url, await login(server.url));
  ({ userIds, sessions } = await signInMatrixPeople(server.url, admin));
  const table = await gqlData(admin, 'mutation($f: [AppFieldInput!]) { createTable(name: "Ledger", fields: $f) { _id } }', {
    f: [
      { name: 'title', type: 'text', required: true },
      { name: 'region', type: 'text' },
      { name: 'salary', type: 'number' },
    ],
  });
  tableId = table.createTable._id;
  clients.integrationRole = integrationClient(await integrationToken('Role bound', 'clerk'));
  clients.integrationUser = integrationClient(await integrationToken('Unbound'), userIds.clerk1);
  clients.integrationBoth = integrationClient(await integrationToken('Role bound for admin', 'clerk'), userIds.owner);
  fixtures = await makeFixtures();
});

afterAll(async () => {
  await server?.close();
});

describe.each(PATHS)('through $name', (path) => {
  const user = path.user;

  it.each(LEVELS)('read %s: lists, totals and gets exactly the records inside the rule', async (level) => {
    await setClerkAccess({ read: level });
    const ids = fixtures.map((f) => f.id);
    const list = await path.client()('query($ids: [ID!]) { listLedger(filter: { _id: { in: $ids } }, limit: 500) { total items { _id } } }', { ids });
    if (level === 'NONE') {
      expectError(list, 'FORBIDDEN', refusal('read', level, 'Ledger', 'clerk'));
      expectError(await path.client()('query($id: ID!) { getLedger(Id: $id) { _id } }', { id: ids[0] }), 'FORBIDDEN');
      return;
    }
    const expected = fixtures.filter((f) => reaches(level, f, user)).map((f) => f.id);
    expect(list.body.data.listLedger.items.map((item: { _id: string }) => item._id).sort()).toEqual([...expected].sort());
    expect(list.body.data.listLedger.total).toBe(expected.length);
    for (const fixture of fixtures) {
      const got = await path.client()('query($id: ID!) { getLedger(Id: $id) { _id } }', { id: fixture.id });
      expect(got.body.data.getLedger, `${fixture.by}/${fixture.region}`).toEqual(expected.includes(fixture.id) ? { _id: fixture.id } : null);
    }
  });

  it.each(LEVELS)('create %s: writes only records that satisfy the rule, and nothing else', async (level) => {
    await setClerkAccess({ create: level });
    for (const region of ['EU', 'US'] as const) {
      const title = `new${++counter}`;
      const result = await path.client()(`mutation($d: LedgerInput!) { createLedger(data: $d) { ${RECORD} } }`, { d: { title, region } });
      const allowed = reaches(level, { by: user, region }, user);
      if (allowed) {
        expect(result.body.errors, JSON.stringify(result.body)).toBeUndefined();
        expect(result.body.data.createLedger).toMatchObject({ title, region, _createdBy: user ? userIds[user] : null });
      } else {
        expectError(result, 'FORBIDDEN', refusal('create', level, 'Ledger', 'clerk'));
        const stored = await gqlData(admin, 'query($t: String!) { listLedger(filter: { title: { eq: $t } }) { total } }', { t: title });
        expect(stored.listLedger.total).toBe(0);
      }
    }
  });

  it.each(LEVELS)('update %s: changes only records inside the rule; the others stay as they were', async (level) => {
    await setClerkAccess({ update: level });
    for (const fixture of fixtures) {
      const title = `changed${++counter}`;
      const result = await path.client()('mutation($id: ID!, $d: LedgerInput) { updateLedger(Id: $id, data: $d) { _id title } }', { id: fixture.id, d: { title } });
      const stored = (await gqlData(admin, 'query($id: ID!) { getLedger(Id: $id) { title } }', { id: fixture.id })).getLedger;
      if (level !== 'NONE' && reaches(level, fixture, user)) {
        expect(result.body.data.updateLedger, JSON.stringify(result.body)).toEqual({ _id: fixture.id, title });
        expect(stored.title).toBe(title);
      } else {
        expectError(result, 'FORBIDDEN', refusal('update', level, 'Ledger', 'clerk'));
        expect(stored.title).not.toBe(title);
      }
    }
  });

  it.each(LEVELS)('delete %s: deletes only records inside the rule', async (level) => {
    const fresh = await makeFixtures();
    await setClerkAccess({ delete: level });
    for (const fixture of fresh) {
      const result = await path.client()('mutation($id: ID!) { deleteLedger(Id: $id) }', { id: fixture.id });
      const stored = (await gqlData(admin, 'query($id: ID!) { getLedger(Id: $id) { _id } }', { id: fixture.id })).getLedger;
      if (level !== 'NONE' && reaches(level, fixture, user)) {
        expect(result.body.data, JSON.stringify(result.body)).toEqual({ deleteLedger: true });
        expect(stored).toBeNull();
      } else {
        expectError(result, 'FORBIDDEN', refusal('delete', level, 'Ledger', 'clerk'));
        expect(stored).toEqual({ _id: fixture.id });
      }
    }
  });
});

describe('semantics beyond the matrix', () => {
  it('answers NOT_FOUND, not FORBIDDEN, for an update or delete of a record the role cannot read', async () => {
    await setClerkAccess({ read: 'OWN' });
    const others = fixtures.find((f) => f.by === 'clerk2')!;
    expectError(await sessions.clerk1('mutation($id: ID!) { updateLedger(Id: $id, data: { title: "x" }) { _id } }', { id: others.id }), 'NOT_FOUND');
    expectError(await sessions.clerk1('mutation($id: ID!) { deleteLedger(Id: $id) }', { id: others.id }), 'NOT_FOUND');
    expectError(await sessions.clerk1('mutation($id: ID!) { deleteLedger(Id: $id) }', { id: 'no-such-record' }), 'NOT_FOUND');
  });

  it('refuses an update that would move a record outside the rule (WITH CHECK), and keeps it', async () => {
    await setClerkAccess({ update: 'FILTER' });
    await gqlData(admin, SET_ACCESS, { t: tableId, r: 'clerk', a: { read: rule('ALL'), create: rule('ALL'), delete: rule('ALL'), update: { level: 'FILTER', filter: { region: { eq: 'EU' } } } } });
    const eu = fixtures.find((f) => f.by === 'clerk2' && f.region === 'EU')!;
    expectError(await sessions.clerk1('mutation($id: ID!) { updateLedger(Id: $id, data: { region: "US" }) { _id } }', { id: eu.id }), 'FORBIDDEN', 'outside what your role may update');
    expect((await gqlData(admin, 'query($id: ID!) { getLedger(Id: $id) { region } }', { id: eu.id })).getLedger.region).toBe('EU');
  });

  it('reads hidden fields as null, refuses them in filters and sorts, and never counts by them', async () => {
    await setClerkAccess({}, { hiddenFields: ['salary'] });
    const list = await gqlData(sessions.clerk1, 'query($ids: [ID!]) { listLedger(filter: { _id: { in: $ids } }) { items { salary } } }', { ids: fixtures.map((f) => f.id) });
    expect(list.listLedger.items.every((item: { salary: unknown }) => item.salary === null)).toBe(true);
    expectError(await sessions.clerk1('{ listLedger(filter: { salary: { gt: 500 } }) { total } }'), 'FORBIDDEN', 'filter.salary: is hidden from your role');
    expectError(await sessions.clerk1('{ listLedger(sort: [{ field: salary }]) { total } }'), 'FORBIDDEN', "'salary' is hidden from your role");
    const created = await gqlData(sessions.clerk1, 'mutation { createLedger(data: { title: "with salary", salary: 5 }) { salary } }');
    expect(created.createLedger.salary).toBeNull();
    expect((await gqlData(admin, '{ listLedger(filter: { title: { eq: "with salary" } }) { items { salary } } }')).listLedger.items).toEqual([{ salary: 5 }]);
  });

  it('refuses read-only fields in create and update data with BAD_INPUT naming the field, and writes nothing', async () => {
    await setClerkAccess({}, { readOnlyFields: ['region'] });
    expectError(await sessions.clerk1('mutation { createLedger(data: { title: "ro", region: "EU" }) { _id } }'), 'BAD_INPUT', 'data.region: is read-only for your role');
    const own = fixtures.find((f) => f.by === 'clerk1')!;
    expectError(await sessions.clerk1('mutation($id: ID!) { updateLedger(Id: $id, data: { region: "US" }) { _id } }', { id: own.id }), 'BAD_INPUT', 'data.region');
    expect((await gqlData(admin, '{ listLedger(filter: { title: { eq: "ro" } }) { total } }')).listLedger.total).toBe(0);
    expect((await gqlData(sessions.clerk1, 'mutation { createLedger(data: { title: "ro ok" }) { title } }')).createLedger.title).toBe('ro ok');
  });

  it('matches $user.email and $user.role in a FILTER rule', async () => {
    await setClerkAccess({});
    const mine = (await gqlData(sessions.clerk2, 'mutation { createLedger(data: { title: "clerk2@example.com", region: "clerk" }) { _id } }')).createLedger._id;
    await gqlData(admin, SET_ACCESS, {
      t: tableId,
      r: 'clerk',
      a: { read: { level: 'FILTER', filter: { title: { eq: '$user.email' }, region: { eq: '$user.role' } } }, create: rule('ALL'), update: rule('ALL'), delete: rule('ALL') },
    });
    expect((await gqlData(sessions.clerk2, '{ listLedger { items { _id } } }')).listLedger.items).toEqual([{ _id: mine }]);
    expect((await gqlData(sessions.clerk1, '{ listLedger { items { _id } } }')).listLedger.items).toEqual([]);
  });

  it('leaves admins every record whatever the rules', async () => {
    await setClerkAccess({ read: 'NONE', create: 'NONE', update: 'NONE', delete: 'NONE' });
    const all = await gqlData(admin, 'query($ids: [ID!]) { listLedger(filter: { _id: { in: $ids } }) { total } }', { ids: fixtures.map((f) => f.id) });
    expect(all.listLedger.total).toBe(fixtures.length);
  });

  it('checks a rule against the table when it is saved: unknown fields, wrong types and levels are BAD_INPUT naming the part', async () => {
    const base = { read: rule('ALL'), create: rule('ALL'), update: rule('ALL'), delete: rule('ALL') };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, read: { level: 'FILTER', filter: { nope: { eq: 1 } } } }, "access.read.filter.nope: is not a field of table 'Ledger'"],
      [{ ...base, read: { level: 'FILTER', filter: { salary: { gt: '$user._id' } } } }, 'access.read.filter.salary.gt: must be a number'],
      [{ ...base, read: { level: 'FILTER' } }, 'filter: is required with level FILTER'],
      [{ ...base, read: { level: 'ALL', filter: { region: { eq: 'EU' } } } }, 'is only allowed with level FILTER'],
      [{ ...base, hiddenFields: ['ghost'] }, "access.hiddenFields.0: 'ghost' is not a field of table 'Ledger'"],
      [{ ...base, read: { level: 'FILTER', filter: {} } }, 'access.read.filter: is empty: it would match every record'],
      [{ ...base, read: { level: 'FILTER', filter: { region: { eq: null } } } }, 'access.read.filter.region.eq: is null'],
      [{ ...base, update: { level: 'FILTER', filter: { _or: [] } } }, 'access.update.filter._or: is an empty list'],
      [{ ...base, readOnlyFields: ['_createdBy'] }, "'_createdBy' is a system field"],
    ];
    for (const [access, message] of cases) {
      expectError(await admin(SET_ACCESS, { t: tableId, r: 'clerk', a: access }), 'BAD_INPUT', message);
    }
    expectError(await admin(SET_ACCESS, { t: tableId, r: 'admin', a: base }), 'BAD_INPUT', "'admin' is an admin role");
    expectError(await sessions.clerk1(SET_ACCESS, { t: tableId, r: 'clerk', a: base }), 'FORBIDDEN', 'roles:write');
  });

  it('records every change of rules in the audit', async () => {
    await setClerkAccess({ delete: 'OWN' });
    const event = await server.server.services.ctx.db
      .selectFrom('audit_events')
      .select(['action', 'details'])
      .where('action', '=', 'table.access.set')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    expect(event.details).toMatchObject({ name: 'Ledger', role: 'clerk', read: 'ALL', delete: 'OWN' });
  });
});

describe('tables and roles over time', () => {
  it('opens a new table to its creator\'s role only: ALL for it, NONE for the other non-admin roles', async () => {
    const designer = await createUserKey(server, { email: 'maker@example.com', role: 'designer', scopes: ['config:read'] });
    const makerSession = graphqlClient(server.url, await login(server.url, 'maker@example.com', 'password-123'));
    const made = await gqlData(makerSession, 'mutation { createTable(name: "Notes", fields: [{ name: "text", type: "text" }]) { _id access { roleName read { level } delete { level } } } }');
    const levels = Object.fromEntries(made.createTable.access.map((a: { roleName: string; read: { level: string } }) => [a.roleName, a.read.level]));
    expect(levels).toMatchObject({ designer: 'ALL', viewer: 'NONE', clerk: 'NONE' });
    expect((await gqlData(makerSession, 'mutation { createNotes(data: { text: "hi" }) { text } }')).createNotes.text).toBe('hi');
    expectError(await sessions.clerk1('{ listNotes { total } }'), 'FORBIDDEN', "Role 'clerk' may not read Notes records");
    expect(designer.userId).toBeTruthy();
  });

  it('answers the signed-in user\'s effective access in me.tableAccess', async () => {
    await setClerkAccess({ delete: 'NONE', update: 'OWN' });
    const me = await gqlData(sessions.clerk1, '{ me { tableAccess { table read create update delete hiddenFields } } }');
    expect(me.me.tableAccess.find((t: { table: string }) => t.table === 'Ledger')).toEqual({ table: 'Ledger', read: 'ALL', create: 'ALL', update: 'OWN', delete: 'NONE', hiddenFields: [] });
    const adminAccess = await gqlData(admin, '{ me { tableAccess { table delete } } }');
    expect(adminAccess.me.tableAccess.find((t: { table: string }) => t.table === 'Ledger')).toEqual({ table: 'Ledger', delete: 'ALL' });
    expectError(await sessions.clerk1('{ users { _id tableAccess { table } } }'), 'FORBIDDEN');
  });

  it('refuses to delete a role an integration key acts with, naming the key', async () => {
    const role = await gqlData(admin, 'mutation { createRole(name: "auditor") { _id } }');
    await gqlData(admin, 'mutation { createIntegrationKey(name: "Audit feed", roleId: "auditor") { clientId } }');
    expectError(await admin('mutation($id: ID!) { deleteRole(_id: $id) }', { id: role.createRole._id }), 'CONFLICT', "integration key 'Audit feed'");
  });

  it('shows a key\'s role, and a key without one reaches every record', async () => {
    const keys = await gqlData(admin, '{ integrationKeys { name roleId } }');
    const byName = Object.fromEntries(keys.integrationKeys.map((k: { name: string; roleId: string | null }) => [k.name, k.roleId]));
    expect(byName.Unbound).toBeNull();
    expect(byName['Role bound']).toEqual(expect.any(String));
    await setClerkAccess({ read: 'NONE' });
    const unbound = integrationClient(await integrationToken('Unbound reader'));
    const list = await unbound('query($ids: [ID!]) { listLedger(filter: { _id: { in: $ids } }) { total } }', { ids: fixtures.map((f) => f.id) });
    expect(list.body.data.listLedger.total).toBe(fixtures.length);
  });
});

describe('MCP: access in create_table, update_table and get_entity_details', () => {
  it('needs roles:write besides tables:write to set access, names the missing scope, and changes nothing', async () => {
    const { apiKey } = await createUserKey(server, { email: 'builder@example.com', role: 'designer', scopes: ['config:read', 'tables:write'] });
    const client = await connectMcp(server, apiKey);
    const access = [{ roleId: 'clerk', read: 'own', create: 'all', update: 'none', delete: 'none' }];
    const refused = await client.callTool({ name: 'create_table', arguments: { name: 'Refused', fields: [], access } });
    expect(refused.isError).toBe(true);
    expect(firstText(refused)).toContain("needs the 'roles:write' permission");
    expect(await server.server.services.ctx.db.selectFrom('app_tables').select('id').where('name', '=', 'Refused').executeTakeFirst()).toBeUndefined();
    await client.close();
  });

  it('sets rules with lower-case levels and { filter }, and shows them in get_entity_details', async () => {
    const { apiKey } = await createUserKey(server, { email: 'root-agent@example.com', role: 'admin', scopes: ['config:read', 'tables:write', 'roles:write'] });
    const client = await connectMcp(server, apiKey);
    const access = [{ roleId: 'clerk', read: { filter: { owner: { eq: '$user.email' } } }, create: 'all', update: 'own', delete: 'none', hiddenFields: ['cost'] }];
    const created = await client.callTool({ name: 'create_table', arguments: { name: 'Expense', fields: [{ name: 'owner', type: 'text' }, { name: 'cost', type: 'number' }], access } });
    expect(created.isError, firstText(created)).toBeFalsy();
    const details = await client.callTool({ name: 'get_entity_details', arguments: { _id: 'Expense' } });
    const clerk = structuredData(details).entity.access.find((a: { roleName: string }) => a.roleName === 'clerk');
    expect(clerk).toMatchObject({ read: { level: 'FILTER', filter: { owner: { eq: '$user.email' } } }, update: { level: 'OWN' }, delete: { level: 'NONE' }, hiddenFields: ['cost'] });
    await client.callTool({ name: 'update_table', arguments: { _id: 'Expense', access: [{ roleId: 'clerk', read: 'all', create: 'all', update: 'all', delete: 'all' }] } });
    const after = await gqlData(admin, '{ table(_id: "Expense") { access { roleName read { level } hiddenFields } } }');
    expect(after.table.access.find((a: { roleName: string }) => a.roleName === 'clerk')).toEqual({ roleName: 'clerk', read: { level: 'ALL' }, hiddenFields: [] });
    await client.close();
  });
});
