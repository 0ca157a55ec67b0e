import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcp, createUserKey, firstText, structuredData } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type HttpResult, type TestServer } from '../helpers/server.js';

/**
 * Scenario 9 (docs/scenarios.md): clerks, a manager and payroll. The owner keeps Orders and Salaries;
 * clerks see only the orders they entered and never the margin; the manager sees and changes
 * every order but deletes none; nobody but admins reads Salaries. An agent builds the clerks'
 * page and grants it: the grant gives exactly what the page needs. Clerks posting GraphQL by hand
 * learn nothing more.
 */

type Gql = ReturnType<typeof graphqlClient>;

const CLERK_PAGE = `import { useQuery, useMutation } from '@trellis/runtime';
import { Button, Stack, Text } from '@trellis/ui';

const LIST = \`query { listOrders { items { _id title amount } } }\`;
const ADD = \`mutation($data: OrdersInput!) { createOrders(data: $data) { _id } }\`;

export default function ClerkOrders() {
  const { data } = useQuery(LIST);
  const [add] = useMutation(ADD);
  return (
    <Stack>
      {(data?.listOrders.items ?? []).map((order) => <Text key={order._id}>{order.title}</Text>)}
      <Button onClick={() => add({ data: { title: 'New order', amount: 1 } })}>Add</Button>
    </Stack>
  );
}
`;

let server: TestServer;
let owner: Gql;
const users: Record<string, { id: string; gql: Gql }> = {};
let agent: Client;

function expectRefused(result: HttpResult, codes: string[], secrets: string[] = []) {
  expect(result.body.errors, JSON.stringify(result.body)).toHaveLength(1);
  expect(codes).toContain(result.body.errors[0].extensions.code);
  for (const secret of secrets) expect(JSON.stringify(result.body)).not.toContain(secret);
}

async function setAccess(table: string, role: string, access: Record<string, unknown>) {
  await gqlData(owner, 'mutation($t: ID!, $r: ID!, $a: TableAccessInput!) { setTableAccess(tableId: $t, roleId: $r, access: $a) { roleId } }', { t: table, r: role, a: access });
}

beforeAll(async () => {
  server = await startTestServer();
  owner = graphqlClient(server.url, await login(server.url));
  await gqlData(owner, 'mutation { createTable(name: "Orders", fields: [{ name: "title", type: "text", required: true }, { name: "amount", type: "number" }, { name: "margin", type: "number" }]) { _id } }');
  await gqlData(owner, 'mutation { createTable(name: "Salaries", fields: [{ name: "employee", type: "text" }, { name: "amount", type: "number" }]) { _id } }');
  for (const role of ['clerk', 'manager']) await gqlData(owner, 'mutation($n: String!) { createRole(name: $n) { _id } }', { n: role });
  for (const [name, role] of [['clerk1', 'clerk'], ['clerk2', 'clerk'], ['boss', 'manager']] as const) {
    const created = await gqlData(owner, 'mutation($e: String!, $r: String!) { createUser(email: $e, password: "scenario-pass", role: $r) { _id } }', { e: `${name}@example.com`, r: role });
    users[name] = { id: created.createUser._id, gql: graphqlClient(server.url, await login(server.url, `${name}@example.com`, 'scenario-pass')) };
  }
  const none = { level: 'NONE' };
  await setAccess('Orders', 'clerk', { read: { level: 'OWN' }, create: none, update: none, delete: none, hiddenFields: ['margin'] });
  await setAccess('Orders', 'manager', { read: { level: 'ALL' }, create: { level: 'ALL' }, update: { level: 'ALL' }, delete: none });
  await gqlData(owner, 'mutation { createSalaries(data: { employee: "clerk1", amount: 4200 }) { _id } }');
  await gqlData(owner, 'mutation { createOrders(data: { title: "Owner order", amount: 90, margin: 31 }) { _id } }');
  const { apiKey } = await createUserKey(server, { email: 'agent@example.com', role: 'admin', scopes: ['config:read', 'features:write', 'roles:write', 'menus:write'] });
  agent = await connectMcp(server, apiKey);
});

afterAll(async () => {
  await agent?.close();
  await server?.close();
});

describe('scenario 9: clerks, a manager and payroll', () => {
  it('builds the clerks\' page and grants it: read and create on Orders, nothing else, and the clerks\' read stays their own', async () => {
    const created = await agent.callTool({ name: 'create_feature', arguments: { name: 'Clerk orders', customCode: CLERK_PAGE, status: 'published' } });
    expect(created.isError, firstText(created)).toBeFalsy();
    const featureId = structuredData(created).feature._id;
    const validation = structuredData(await agent.callTool({ name: 'validate_feature_code', arguments: { customCode: CLERK_PAGE, featureId } }));
    expect(validation.warnings).toEqual([]);
    const granted = await agent.callTool({ name: 'grant_feature_access', arguments: { featureId, roleIds: ['clerk'] } });
    expect(granted.isError, firstText(granted)).toBeFalsy();
    const { dataAccess } = structuredData(granted);
    expect(dataAccess.granted).toEqual([{ roleId: expect.any(String), role: 'clerk', table: 'Orders', action: 'create', level: 'ALL' }]);
    expect(dataAccess.leftNarrower).toEqual([{ roleId: expect.any(String), role: 'clerk', table: 'Orders', action: 'read', level: 'OWN' }]);
    const access = await gqlData(owner, '{ table(_id: "Salaries") { access { roleName read { level } } } }');
    expect(access.table.access.every((a: { read: { level: string } }) => a.read.level === 'NONE')).toBe(true);
  });

  it('works for a clerk at once: each clerk lists the orders they entered, without the margin', async () => {
    await gqlData(users.clerk1!.gql, 'mutation { createOrders(data: { title: "Clerk 1 order", amount: 10 }) { _id } }');
    await gqlData(users.clerk2!.gql, 'mutation { createOrders(data: { title: "Clerk 2 order", amount: 20 }) { _id } }');
    const mine = await gqlData(users.clerk1!.gql, '{ listOrders { total items { title margin } } }');
    expect(mine.listOrders).toEqual({ total: 1, items: [{ title: 'Clerk 1 order', margin: null }] });
  });

  it('refuses a clerk posting GraphQL by hand, and no answer reveals what is hidden', async () => {
    const clerk = users.clerk1!.gql;
    const others = await gqlData(owner, '{ listOrders(filter: { title: { eq: "Clerk 2 order" } }) { items { _id } } }');
    const otherId = others.listOrders.items[0]._id;
    expectRefused(await clerk('{ listSalaries { total items { amount } } }'), ['FORBIDDEN'], ['4200']);
    expect((await gqlData(clerk, 'query($id: ID!) { getOrders(Id: $id) { title } }', { id: otherId })).getOrders).toBeNull();
    expectRefused(await clerk('mutation($id: ID!) { deleteOrders(Id: $id) }', { id: otherId }), ['FORBIDDEN', 'NOT_FOUND'], ['Clerk 2 order']);
    expectRefused(await clerk('mutation($id: ID!) { updateOrders(Id: $id, data: { amount: 1 }) { _id } }', { id: otherId }), ['FORBIDDEN', 'NOT_FOUND'], ['Clerk 2 order']);
    expectRefused(await clerk('{ listOrders(filter: { margin: { gt: 30 } }) { total } }'), ['FORBIDDEN'], ['31']);
    expectRefused(await clerk('{ listOrders(sort: [{ field: margin, direction: DESC }]) { total } }'), ['FORBIDDEN'], ['31']);
    const counted = await gqlData(clerk, '{ listOrders(filter: { amount: { gt: 50 } }) { total } }');
    expect(counted.listOrders.total).toBe(0);
  });

  it('lets the manager see and change every order but delete none, and read no salary', async () => {
    const boss = users.boss!.gql;
    const all = await gqlData(boss, '{ listOrders { total items { _id margin } } }');
    expect(all.listOrders.total).toBe(3);
    expect(all.listOrders.items.some((item: { margin: number | null }) => item.margin === 31)).toBe(true);
    const target = all.listOrders.items[0]._id;
    expect((await gqlData(boss, 'mutation($id: ID!) { updateOrders(Id: $id, data: { amount: 99 }) { amount } }', { id: target })).updateOrders.amount).toBe(99);
    expectRefused(await boss('mutation($id: ID!) { deleteOrders(Id: $id) }', { id: target }), ['FORBIDDEN']);
    expectRefused(await boss('{ listSalaries { total } }'), ['FORBIDDEN']);
  });

  it('gives the ERP integration created with the manager role every order, and naming the owner in x-userid nothing more', async () => {
    const key = await gqlData(owner, 'mutation { createIntegrationKey(name: "erp", roleId: "manager") { clientId apiKey } }');
    const token = (await postJson(`${server.url}/api/auth/token`, key.createIntegrationKey)).body.access_token;
    const erp = (query: string, headers: Record<string, string> = {}) => postJson(`${server.url}/graphql`, { query }, { authorization: `Bearer ${token}`, ...headers });
    expect((await erp('{ listOrders { total } }')).body.data.listOrders.total).toBe(3);
    const asOwner = { 'x-userid': (await gqlData(owner, '{ me { _id } }')).me._id };
    expectRefused(await erp('{ listSalaries { total } }', asOwner), ['FORBIDDEN']);
    const first = (await erp('{ listOrders(limit: 1) { items { _id } } }', asOwner)).body.data.listOrders.items[0]._id;
    expectRefused(await erp(`mutation { deleteOrders(Id: "${first}") }`, asOwner), ['FORBIDDEN']);
    expect((await gqlData(owner, `{ getOrders(Id: "${first}") { _id } }`)).getOrders).toEqual({ _id: first });
  });
});
