import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/access/permissions.js';
import { connectMcp, createUserKey, fencedData, structuredData } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

const PAGE = 'export default function Page() {\n  return <p>Orders</p>;\n}\n';

describe('one rule for arguments that name a record: its _id or its name', () => {
  let server: TestServer;
  let client: Client;
  let gql: ReturnType<typeof graphqlClient>;
  let ordersId: string;

  beforeAll(async () => {
    server = await startTestServer();
    gql = graphqlClient(server.url, await login(server.url));
    const { apiKey } = await createUserKey(server, { email: 'owner@example.com', role: 'admin', scopes: [...SCOPES] });
    client = await connectMcp(server, apiKey);
    ordersId = (await gqlData(gql, 'mutation { createTable(name: "Orders", fields: [{ name: "amount", type: "number" }]) { _id } }')).createTable._id;
    await gqlData(gql, 'mutation($c: String!) { createFeature(_id: "order-list", name: "Order list", customCode: $c) { _id } }', { c: PAGE });
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('accepts a table by name (any letter case) wherever a tableId is taken', async () => {
    const hook = await client.callTool({ name: 'create_hook', arguments: { name: 'check-amount', type: 'beforeSave', tableId: 'orders', content: 'async () => {}' } });
    expect(hook.isError, JSON.stringify(hook.content)).toBeFalsy();
    expect(structuredData(hook).hook.tableId).toBe(ordersId);
    const field = await client.callTool({ name: 'add_table_field', arguments: { tableId: 'Orders', field: { name: 'note', type: 'text' } } });
    expect(field.isError).toBeFalsy();
    const viaGraphql = await gqlData(gql, 'mutation { createHook(name: "after-order", type: "afterSave", tableId: "Orders", content: "async () => {}") { tableId } }');
    expect(viaGraphql.createHook.tableId).toBe(ordersId);
  });

  it('accepts roles and features by name in grant_feature_access, and a feature by name in reads and writes', async () => {
    const granted = await client.callTool({ name: 'grant_feature_access', arguments: { featureId: 'Order list', roleIds: ['designer', 'Viewer'] } });
    expect(granted.isError, JSON.stringify(granted.content)).toBeFalsy();
    const details = structuredData(await client.callTool({ name: 'get_feature_details', arguments: { _id: 'order list' } }));
    expect(details.feature._id).toBe('order-list');
    expect(details.feature.roleIds.length).toBeGreaterThanOrEqual(3);
    const edited = await client.callTool({ name: 'edit_feature_code', arguments: { _id: 'Order list', patches: [{ old_str: 'Orders', new_str: 'All orders' }] } });
    expect(edited.isError).toBeFalsy();
  });

  it.each([
    ['create_hook', { name: 'x-hook', type: 'beforeSave', tableId: 'Order', content: 'async () => {}' }, /^NOT_FOUND: Table 'Order' does not exist \(looked up by _id and by name\); did you mean 'Orders' \(_id [^)]+\)\?/],
    ['grant_feature_access', { featureId: 'order-list', roleIds: ['designers'] }, /^NOT_FOUND: Role 'designers' does not exist \(looked up by _id and by name\); did you mean 'designer' \(_id [^)]+\)\?/],
    ['get_feature_details', { _id: 'order-lst' }, /^NOT_FOUND: Feature 'order-lst' does not exist \(looked up by _id and by name\); did you mean 'Order list' \(_id order-list\)\?/],
    ['get_hook_details', { _id: 'nothing-like-it' }, /^NOT_FOUND: Hook 'nothing-like-it' does not exist \(looked up by _id and by name\); the hooks are 'after-order' \(_id [^)]+\), 'check-amount'/],
  ])('%s names what it looked up and the closest records when nothing matches', async (tool, args, message) => {
    const result = await client.callTool({ name: tool, arguments: args });
    expect(result.isError).toBe(true);
    expect((fencedData(result).data as { error: string }).error).toMatch(message);
  });

  it('gives the candidates to GraphQL clients in the error details', async () => {
    const result = await gql('mutation { createHook(name: "y-hook", type: "beforeSave", tableId: "Ordrs", content: "async () => {}") { _id } }');
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', details: { candidates: [{ _id: ordersId, name: 'Orders' }] } });
  });
});
