import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reaches, rules, type Action, type Level, type Region, signInMatrixPeople, type Who } from '../helpers/access-matrix.js';
import { connectMcp, createUserKey, firstText, structuredData } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Data access by role (issue 19, D32) beyond data-access.test.ts: the DATA_ACCESS_MISSING warnings
 * of the feature tools, `user.via` in hook code, pagination under a rule, and update_table's
 * `access` without roles:write. A real server over HTTP, as clients see it.
 */

type Gql = ReturnType<typeof graphqlClient>;
interface Finding {
  code: string;
  message: string;
}

const SET_ACCESS = 'mutation($t: ID!, $r: ID!, $a: TableAccessInput!) { setTableAccess(tableId: $t, roleId: $r, access: $a) { roleId } }';

let server: TestServer;
let admin: Gql;
let agent: Client;
let userIds: Record<Who, string>;
let sessions: Record<Who, Gql>;

async function setAccess(table: string, levels: Partial<Record<Action, Level>>, extra: Record<string, unknown> = {}) {
  await gqlData(admin, SET_ACCESS, { t: table, r: 'clerk', a: { ...rules(levels), ...extra } });
}

async function createTable(name: string, fields: { name: string; type: string }[]) {
  await gqlData(admin, 'mutation($n: String!, $f: [AppFieldInput!]) { createTable(name: $n, fields: $f) { _id } }', { n: name, f: fields });
}

async function integrationToken(name: string, roleId?: string): Promise<string> {
  const created = await gqlData(admin, 'mutation($n: String!, $r: ID) { createIntegrationKey(name: $n, roleId: $r) { clientId apiKey } }', { n: name, r: roleId ?? null });
  const token = await postJson(`${server.url}/api/auth/token`, { clientId: created.createIntegrationKey.clientId, apiKey: created.createIntegrationKey.apiKey });
  return token.body.access_token;
}

function integrationClient(token: string, actingUser?: string): Gql {
  return (query, variables = {}) =>
    postJson(`${server.url}/graphql`, { query, variables }, { authorization: `Bearer ${token}`, ...(actingUser ? { 'x-userid': actingUser } : {}) });
}

/** Calls an MCP tool that must succeed and answers its data. */
async function callOk(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, firstText(result)).toBeFalsy();
  return structuredData(result);
}

function dataWarnings(warnings: Finding[]): string[] {
  return warnings.filter((w) => w.code === 'DATA_ACCESS_MISSING').map((w) => w.message);
}

beforeAll(async () => {
  server = await startTestServer();
  admin = graphqlClient(server.url, await login(server.url));
  ({ userIds, sessions } = await signInMatrixPeople(server.url, admin));
  const { apiKey } = await createUserKey(server, { email: 'agent@example.com', role: 'admin', scopes: ['config:read', 'features:write', 'roles:write', 'tables:write'] });
  agent = await connectMcp(server, apiKey);
});

afterAll(async () => {
  await agent?.close();
  await server?.close();
});

describe('DATA_ACCESS_MISSING: feature tools warn for a role that sees the feature and lacks a rule its documents need', () => {
  const page = (documents: string[], uses: string) => `import { useQuery, useMutation } from '@trellis/runtime';
import { Stack, Text } from '@trellis/ui';

${documents.join('\n')}

export default function Books() {
${uses}
  return (
    <Stack>
      {(data?.listBook.items ?? []).map((row) => <Text key={row._id}>{row.title}</Text>)}
    </Stack>
  );
}
`;
  const BOOK = 'const BOOK = `query { listBook { items { _id title } } }`;';
  const PAYROLL = 'const PAYROLL = `query { listPayroll { items { _id employee } } }`;';
  const BOOK_ONLY = page([BOOK], '  const { data } = useQuery(BOOK);');
  const WITH_PAYROLL = page([BOOK, PAYROLL], '  const { data } = useQuery(BOOK);\n  const payroll = useQuery(PAYROLL);');
  const readPayroll = "Role 'clerk' sees this feature but may not read Payroll records";
  const createPayroll = "Role 'clerk' sees this feature but may not create Payroll records";
  let featureId: string;

  beforeAll(async () => {
    await createTable('Book', [{ name: 'title', type: 'text' }]);
    await createTable('Payroll', [{ name: 'employee', type: 'text' }, { name: 'amount', type: 'number' }]);
  });

  it('create_feature: an admin\'s new feature is seen by admins only, so no warning', async () => {
    const created = await callOk(agent, 'create_feature', { name: 'Books', customCode: WITH_PAYROLL, status: 'published' });
    featureId = created.feature._id;
    expect(created.feature.roleIds).toEqual([expect.any(String)]);
    expect(dataWarnings(created.warnings)).toEqual([]);
    // Back to the code that needs Book only, then granted to clerk: the grant gives clerk read on Book.
    await callOk(agent, 'update_feature', { _id: featureId, customCode: BOOK_ONLY });
    const granted = await callOk(agent, 'grant_feature_access', { featureId, roleIds: ['clerk'] });
    expect(granted.dataAccess.granted).toEqual([expect.objectContaining({ role: 'clerk', table: 'Book', action: 'read', level: 'ALL' })]);
  });

  it('create_feature: a designer\'s new feature is seen by the designer role, which is warned about a table it may not read', async () => {
    const { apiKey } = await createUserKey(server, { email: 'designer@example.com', role: 'designer', scopes: ['config:read', 'features:write'] });
    const designer = await connectMcp(server, apiKey);
    const created = await callOk(designer, 'create_feature', { name: 'Designer books', customCode: WITH_PAYROLL, status: 'draft' });
    expect(created.feature.roleIds).toHaveLength(2);
    const warnings = dataWarnings(created.warnings);
    expect(warnings).toHaveLength(2);
    expect(warnings).toEqual(expect.arrayContaining([
      expect.stringContaining("Role 'designer' sees this feature but may not read Book records"),
      expect.stringContaining("Role 'designer' sees this feature but may not read Payroll records"),
    ]));
    await designer.close();
  });

  it('validate_feature_code warns with the featureId, names role, table and action, and not without it', async () => {
    const validated = await callOk(agent, 'validate_feature_code', { customCode: WITH_PAYROLL, featureId });
    expect(validated.valid).toBe(true);
    expect(dataWarnings(validated.warnings)).toEqual([expect.stringContaining(readPayroll)]);
    expect(dataWarnings(validated.warnings)[0]).toContain('grant_feature_access');
    const byName = await callOk(agent, 'validate_feature_code', { customCode: WITH_PAYROLL, featureId: 'Books' });
    expect(dataWarnings(byName.warnings)).toEqual([expect.stringContaining(readPayroll)]);
    const withoutFeature = await callOk(agent, 'validate_feature_code', { customCode: WITH_PAYROLL });
    expect(dataWarnings(withoutFeature.warnings)).toEqual([]);
    const bookOnly = await callOk(agent, 'validate_feature_code', { customCode: BOOK_ONLY, featureId });
    expect(dataWarnings(bookOnly.warnings)).toEqual([]);
  });

  it('update_feature warns about the code it saved, as a draft and published', async () => {
    const draft = await callOk(agent, 'update_feature', { _id: featureId, customCode: WITH_PAYROLL, status: 'draft' });
    expect(draft.feature.status).toBe('draft');
    expect(draft.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'DATA_ACCESS_MISSING', message: expect.stringContaining(readPayroll) })]));
    expect(dataWarnings(draft.warnings)).toHaveLength(1);
    const published = await callOk(agent, 'update_feature', { _id: featureId, status: 'published' });
    expect(dataWarnings(published.warnings)).toEqual([expect.stringContaining(readPayroll)]);
  });

  it('edit_feature_code warns for every action the patched documents need, update and delete needing read too', async () => {
    const patches = [
      {
        old_str: PAYROLL,
        new_str: `${PAYROLL}\nconst ADD = \`mutation($d: PayrollInput!) { createPayroll(data: $d) { _id } }\`;\nconst DROP = \`mutation($id: ID!) { deletePayroll(Id: $id) }\`;`,
      },
      { old_str: '  const payroll = useQuery(PAYROLL);', new_str: '  const payroll = useQuery(PAYROLL);\n  const [add] = useMutation(ADD);\n  const [drop] = useMutation(DROP);' },
    ];
    const edited = await callOk(agent, 'edit_feature_code', { _id: featureId, patches });
    const said = dataWarnings(edited.warnings).map((message) => message.split(',')[0]);
    expect(said.sort()).toEqual([createPayroll, "Role 'clerk' sees this feature but may not delete Payroll records", readPayroll]);
  });

  it('no longer warns once the role has the rules: OWN and FILTER count as granted, only NONE is missing', async () => {
    const mine = { level: 'FILTER', filter: { employee: { eq: '$user.email' } } };
    await setAccess('Payroll', { read: 'OWN', create: 'ALL', update: 'NONE' }, { delete: mine });
    const current = (await callOk(agent, 'get_feature_details', { _id: featureId })).feature.customCode;
    expect(dataWarnings((await callOk(agent, 'validate_feature_code', { customCode: current, featureId })).warnings)).toEqual([]);
    expect(dataWarnings((await callOk(agent, 'update_feature', { _id: featureId, customCode: `${current}\n// granted` })).warnings)).toEqual([]);
    const edited = await callOk(agent, 'edit_feature_code', { _id: featureId, patches: [{ old_str: '// granted', new_str: '// granted, checked' }] });
    expect(dataWarnings(edited.warnings)).toEqual([]);
    // Taking one rule back brings its warning back.
    await setAccess('Payroll', { read: 'OWN', create: 'NONE', update: 'NONE' }, { delete: mine });
    expect(dataWarnings((await callOk(agent, 'validate_feature_code', { customCode: current, featureId })).warnings)).toEqual([expect.stringContaining(createPayroll)]);
  });
});

describe('user.via in hook code', () => {
  const HOOK = `async function stamp(instance) {
  instance.author = JSON.stringify(user);
}`;
  const AFTER = `async function stampAfter(instance) {
  await db.update('Stamped', instance._id, { after: JSON.stringify(user) });
}`;
  const KEY = 'Warehouse sync';
  const RECORD = 'mutation($t: String!) { createStamped(data: { title: $t }) { _id author } }';
  const author = (record: { author: string }) => JSON.parse(record.author);

  beforeAll(async () => {
    await createTable('Stamped', [{ name: 'title', type: 'text' }, { name: 'author', type: 'text' }, { name: 'after', type: 'text' }]);
    await setAccess('Stamped', {});
    const validated = await callOk(agent, 'validate_hook_code', { content: HOOK });
    expect(validated.errors).toEqual([]);
    await gqlData(admin, 'mutation($c: String!) { createHook(name: "Stamp author", type: beforeSave, tableId: "Stamped", content: $c) { _id } }', { c: HOOK });
    await gqlData(admin, 'mutation($c: String!) { createHook(name: "Stamp after", type: afterSave, tableId: "Stamped", content: $c) { _id } }', { c: AFTER });
  });

  /** What the afterSave hook saw as `user` for the record `id`, once it has run. */
  async function seenAfter(id: string): Promise<unknown> {
    const stored = await waitFor('the afterSave hook', async () => (await gqlData(admin, 'query($id: ID!) { getStamped(Id: $id) { after } }', { id })).getStamped.after as string | undefined);
    return JSON.parse(stored);
  }

  it('shows an integration acting for a user (x-userid) as that user, with via the integration key\'s name, on create and update', async () => {
    const client = integrationClient(await integrationToken(KEY), userIds.clerk1);
    const created = (await gqlData(client, RECORD, { t: 'by integration for clerk1' })).createStamped;
    expect(author(created)).toEqual({ _id: userIds.clerk1, email: 'clerk1@example.com', role: 'clerk', via: KEY });
    expect(await seenAfter(created._id)).toEqual({ _id: userIds.clerk1, email: 'clerk1@example.com', role: 'clerk', via: KEY });
    const updated = await gqlData(client, 'mutation($id: ID!) { updateStamped(Id: $id, data: { title: "changed" }) { author } }', { id: created._id });
    expect(author(updated.updateStamped)).toEqual({ _id: userIds.clerk1, email: 'clerk1@example.com', role: 'clerk', via: KEY });
  });

  it('names the key with a role that acts for an admin, keeping the admin as the user', async () => {
    const client = integrationClient(await integrationToken(`${KEY} (clerk)`, 'clerk'), userIds.owner);
    const created = (await gqlData(client, RECORD, { t: 'by role-bound integration for the owner' })).createStamped;
    expect(author(created)).toEqual({ _id: userIds.owner, email: 'owner@example.com', role: 'admin', via: `${KEY} (clerk)` });
  });

  it('shows a person signed in without via', async () => {
    const created = (await gqlData(sessions.clerk2, RECORD, { t: 'by clerk2' })).createStamped;
    expect(author(created)).toEqual({ _id: userIds.clerk2, email: 'clerk2@example.com', role: 'clerk' });
    expect(await seenAfter(created._id)).toEqual({ _id: userIds.clerk2, email: 'clerk2@example.com', role: 'clerk' });
  });

  it('shows the acting user\'s role as it is now, after it changed', async () => {
    await gqlData(admin, 'mutation { createRole(name: "stocker") { _id } }');
    await gqlData(admin, SET_ACCESS, { t: 'Stamped', r: 'stocker', a: rules({}) });
    const { _id } = (await gqlData(admin, 'mutation { createUser(email: "mover@example.com", password: "mover-password", role: "clerk") { _id } }')).createUser;
    const client = integrationClient(await integrationToken(`${KEY} for mover`), _id);
    expect(author((await gqlData(client, RECORD, { t: 'mover as clerk' })).createStamped)).toMatchObject({ role: 'clerk', via: `${KEY} for mover` });
    await gqlData(admin, 'mutation($id: ID!) { updateUser(_id: $id, role: "stocker") { _id } }', { id: _id });
    expect(author((await gqlData(client, RECORD, { t: 'mover as stocker' })).createStamped)).toEqual({ _id, email: 'mover@example.com', role: 'stocker', via: `${KEY} for mover` });
  });

  it('gives a hook no user for an integration acting for nobody', async () => {
    for (const roleId of [undefined, 'clerk']) {
      const client = integrationClient(await integrationToken(`Anonymous ${roleId ?? 'unbound'}`, roleId));
      const created = (await gqlData(client, RECORD, { t: `anonymous ${roleId}` })).createStamped;
      expect(created.author).toBe('null');
      expect(await seenAfter(created._id)).toBeNull();
    }
  });
});

describe('pagination under a rule', () => {
  interface Row {
    id: string;
    by: Who;
    region: Region;
  }
  const rows: Row[] = [];

  beforeAll(async () => {
    await createTable('Entry', [{ name: 'title', type: 'text' }, { name: 'region', type: 'text' }]);
    await setAccess('Entry', {});
    let n = 0;
    for (const who of ['clerk1', 'clerk2', 'owner'] as const) {
      for (const region of ['EU', 'US', 'EU', 'US', 'US'] as const) {
        const made = await gqlData(sessions[who], 'mutation($t: String!, $r: String) { createEntry(data: { title: $t, region: $r }) { _id } }', { t: `e${String(++n).padStart(2, '0')}`, r: region });
        rows.push({ id: made.createEntry._id, by: who, region });
      }
    }
  });

  const callers: { name: string; user: Who; client: () => Promise<Gql> }[] = [
    { name: 'a session of clerk1', user: 'clerk1', client: async () => sessions.clerk1 },
    { name: 'an integration acting for clerk1', user: 'clerk1', client: async () => integrationClient(await integrationToken(`Pager ${Math.random()}`), userIds.clerk1) },
  ];

  describe.each(callers)('through $name', (caller) => {
    it.each([
      ['OWN', 1, ''],
      ['OWN', 2, ''],
      ['FILTER', 1, ''],
      ['FILTER', 2, ''],
      ['FILTER', 2, 'sort: [{ field: title, direction: DESC }]'],
      ['OWN', 1, 'sort: [{ field: region }]'],
      ['FILTER', 2, 'sort: [{ field: region, direction: DESC }]'],
      ['FILTER', 2, 'filter: { region: { eq: "US" } }'],
    ] as const)('read %s, limit %i %s: pages hold each permitted record once, and every total counts only those', async (level, limit, extra) => {
      await setAccess('Entry', { read: level }, {});
      const client = await caller.client();
      const ids = new Set(rows.map((r) => r.id));
      const readable = rows.filter((r) => reaches(level, r, caller.user));
      const permitted = readable.filter((r) => !extra.startsWith('filter') || r.region === 'US').map((r) => r.id);
      expect(permitted.length).toBeGreaterThan(limit);
      expect(permitted.length).toBeLessThan(rows.length);
      const seen: string[] = [];
      for (let offset = 0; ; offset += limit) {
        const page = await gqlData(client, `query($l: Int, $o: Int) { listEntry(${extra} limit: $l, offset: $o) { total items { _id } } }`, { l: limit, o: offset });
        expect(page.listEntry.total, `offset ${offset}`).toBe(permitted.length);
        const items = page.listEntry.items.map((item: { _id: string }) => item._id).filter((id: string) => ids.has(id));
        expect(items.length).toBe(page.listEntry.items.length);
        if (!items.length) break;
        expect(items.length).toBeLessThanOrEqual(limit);
        seen.push(...items);
        expect(offset).toBeLessThan(rows.length);
      }
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort()).toEqual([...permitted].sort());
      const beyond = await gqlData(client, 'query($o: Int) { listEntry(limit: 5, offset: $o) { total items { _id } } }', { o: rows.length });
      expect(beyond.listEntry).toEqual({ total: readable.length, items: [] });
    });
  });
});

describe('MCP update_table with access needs roles:write', () => {
  const DETAILS = '{ table(_id: "Ledger") { name description access { roleName read { level } create { level } update { level } delete { level } hiddenFields } } }';

  beforeAll(async () => {
    await createTable('Ledger', [{ name: 'title', type: 'text' }, { name: 'salary', type: 'number' }]);
    await gqlData(admin, 'mutation { updateTable(_id: "Ledger", description: "Before") { _id } }');
    await setAccess('Ledger', { read: 'OWN', delete: 'NONE' });
  });

  it.each([
    ['a designer', 'designer@example.com', 'designer'],
    ['an admin whose key lacks the scope', 'admin-agent@example.com', 'admin'],
  ])('refuses %s naming the missing scope, and applies none of the call\'s changes', async (_who, email, role) => {
    const { apiKey } = await createUserKey(server, { email, role, scopes: ['config:read', 'tables:write'] });
    const client = await connectMcp(server, apiKey);
    const before = await gqlData(admin, DETAILS);
    const audits = () => server.server.services.ctx.db.selectFrom('audit_events').select('id').where('action', 'in', ['table.update', 'table.access.set']).execute();
    const auditsBefore = (await audits()).length;
    const refused = await client.callTool({
      name: 'update_table',
      arguments: { _id: 'Ledger', name: 'Journal', description: 'After', access: [{ roleId: 'clerk', read: 'all', create: 'all', update: 'all', delete: 'all', hiddenFields: ['salary'] }] },
    });
    expect(refused.isError).toBe(true);
    expect(firstText(refused)).toContain("needs the 'roles:write' permission");
    expect(await gqlData(admin, DETAILS)).toEqual(before);
    expect(before.table.access.find((a: { roleName: string }) => a.roleName === 'clerk')).toEqual({
      roleName: 'clerk', read: { level: 'OWN' }, create: { level: 'ALL' }, update: { level: 'ALL' }, delete: { level: 'NONE' }, hiddenFields: [],
    });
    const renamed = await admin('{ table(_id: "Journal") { _id } }');
    expect(renamed.body.errors?.[0]?.extensions.code, JSON.stringify(renamed.body)).toBe('NOT_FOUND');
    const details = await callOk(client, 'get_entity_details', { _id: 'Ledger' });
    expect(details.entity).toMatchObject({ name: 'Ledger', description: 'Before' });
    expect(details.entity.access.find((a: { roleName: string }) => a.roleName === 'clerk')).toMatchObject({ read: { level: 'OWN' }, delete: { level: 'NONE' }, hiddenFields: [] });
    expect((await audits()).length).toBe(auditsBefore);
    // The same key may make the same changes without access.
    const changed = await callOk(client, 'update_table', { _id: 'Ledger', description: 'Changed by tables:write' });
    expect(changed.entity.description).toBe('Changed by tables:write');
    await callOk(client, 'update_table', { _id: 'Ledger', description: 'Before' });
    await client.close();
  });
});
