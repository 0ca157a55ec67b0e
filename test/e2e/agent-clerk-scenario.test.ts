import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcp, createUserKey, firstText, structuredData } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 19's scenario, all of it over MCP: an agent creates a table, a page, a menu entry, and grants
 * the page to `clerk`; the clerk then uses it at once, with exactly what the page needs.
 */
const ORDER_PAGE = [
  "import { useMutation, useQuery } from '@trellis/runtime';",
  "import { Button, Card, Form, Input, Table } from '@trellis/ui';",
  '',
  'const LIST = `query { listDeliveries { items { _id item qty } total } }`;',
  'const ADD = `mutation($data: DeliveriesInput!) { createDeliveries(data: $data) { _id } }`;',
  '',
  'export default function Deliveries() {',
  '  const { data, refetch } = useQuery(LIST);',
  '  const [add] = useMutation(ADD);',
  '  return (',
  '    <Card title="Deliveries">',
  "      <Table rows={data?.listDeliveries.items ?? []} columns={[{ key: 'item', header: 'Item' }, { key: 'qty', header: 'Qty' }]} />",
  '      <Form onSubmit={async (values) => { await add({ data: { item: values.item, qty: Number(values.qty) } }); await refetch(); }}>',
  '        <Input label="Item" name="item" required />',
  '        <Input label="Qty" name="qty" type="number" />',
  '        <Button type="submit">Add</Button>',
  '      </Form>',
  '    </Card>',
  '  );',
  '}',
  '',
].join('\n');

let server: TestServer;
let agent: Client;
let owner: ReturnType<typeof graphqlClient>;
let clerk: ReturnType<typeof graphqlClient>;

async function call(name: string, args: Record<string, unknown>) {
  const result = await agent.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${firstText(result)}`).toBeFalsy();
  return structuredData(result);
}

beforeAll(async () => {
  server = await startTestServer();
  owner = graphqlClient(server.url, await login(server.url));
  await gqlData(owner, 'mutation { createRole(name: "clerk") { _id } }');
  await gqlData(owner, 'mutation { createUser(email: "clerk@example.com", password: "clerk-pass-1", role: "clerk") { _id } }');
  clerk = graphqlClient(server.url, await login(server.url, 'clerk@example.com', 'clerk-pass-1'));
  const { apiKey } = await createUserKey(server, { email: 'agent@example.com', role: 'admin', scopes: ['config:read', 'tables:write', 'features:write', 'menus:write', 'roles:write'] });
  agent = await connectMcp(server, apiKey);
});

afterAll(async () => {
  await agent?.close();
  await server?.close();
});

describe('an agent builds a page for clerks over MCP alone', () => {
  let featureId: string;

  it('creates the table, which no other role reaches yet', async () => {
    await call('create_table', { name: 'Deliveries', fields: [{ name: 'item', type: 'text', required: true }, { name: 'qty', type: 'number' }] });
    const refused = await clerk('{ listDeliveries { total } }');
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(refused.body.errors?.[0]?.message).toMatch(/Deliveries[\s\S]*read[\s\S]*clerk|clerk[\s\S]*read[\s\S]*Deliveries/);
  });

  it('writes and publishes the page, puts it in a menu and grants it to clerk: read and create, nothing more', async () => {
    const created = await call('create_feature', { name: 'Deliveries', customCode: ORDER_PAGE, status: 'published' });
    featureId = created.feature._id;
    expect(created.warnings).toEqual([]);
    await call('upsert_menu', { name: 'Main', entries: [{ label: 'Deliveries', path: `/feature/${featureId}` }] });
    const { dataAccess } = await call('grant_feature_access', { featureId, roleIds: ['clerk'] });
    const granted = dataAccess.granted.map((rule: { role: string; table: string; action: string; level: string }) => `${rule.role} ${rule.action} ${rule.table} ${rule.level}`);
    expect(granted.sort()).toEqual(['clerk create Deliveries ALL', 'clerk read Deliveries ALL']);
    expect(dataAccess.leftNarrower).toEqual([]);
    const audit = await gqlData(owner, '{ mcpAuditLogs(tool: "grant_feature_access", limit: 5) { items { tool outcome } } }');
    expect(audit.mcpAuditLogs.items).toEqual([{ tool: 'grant_feature_access', outcome: 'ok' }]);
  });

  it('works for the clerk at once: the page in the menu, its list and its add, and no update or delete', async () => {
    const page = await gqlData(clerk, '{ appPage { menus { entries { label path } } features { _id } } }');
    expect(page.appPage.menus.flatMap((menu: { entries: unknown[] }) => menu.entries)).toEqual([{ label: 'Deliveries', path: `/feature/${featureId}` }]);
    expect(page.appPage.features).toEqual([{ _id: featureId }]);
    expect((await gqlData(clerk, 'query($id: ID!) { appFeature(_id: $id) { _id } }', { id: featureId })).appFeature._id).toBe(featureId);

    const added = await gqlData(clerk, 'mutation($data: DeliveriesInput!) { createDeliveries(data: $data) { _id } }', { data: { item: 'Pallet', qty: 3 } });
    const listed = await gqlData(clerk, '{ listDeliveries { items { _id item qty } total } }');
    expect(listed.listDeliveries).toEqual({ total: 1, items: [{ _id: added.createDeliveries._id, item: 'Pallet', qty: 3 }] });

    const update = await clerk('mutation($id: ID!) { updateDeliveries(Id: $id, data: { qty: 4 }) { _id } }', { id: added.createDeliveries._id });
    expect(update.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const remove = await clerk('mutation($id: ID!) { deleteDeliveries(Id: $id) }', { id: added.createDeliveries._id });
    expect(remove.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const after = await gqlData(owner, '{ listDeliveries { items { qty } total } }');
    expect(after.listDeliveries).toEqual({ total: 1, items: [{ qty: 3 }] });
  });
});
