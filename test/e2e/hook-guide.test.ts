import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/access/permissions.js';
import { hookAuthoringGuide } from '../../src/hooks/authoring-guide.js';
import { connectMcp, createUserKey, ownerPrincipal } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

const guide = hookAuthoringGuide({ cpuMs: 200, timeoutMs: 5000, memoryMb: 32 });
const example = (type: string) => guide.types.find((entry) => entry.type === type)!.example;

describe('hooks that agents can write without guessing', () => {
  let server: TestServer;
  let gql: ReturnType<typeof graphqlClient>;
  let owner: Principal;
  let ordersId: string;
  const validate = (code: string) => server.server.services.hooks.validateCode(owner, code);

  beforeAll(async () => {
    server = await startTestServer({ TRELLIS_WEBHOOK_RATE_LIMIT: '1000' });
    gql = graphqlClient(server.url, await login(server.url));
    owner = await ownerPrincipal(server);
    ordersId = (
      await gqlData(gql, 'mutation($f: [AppFieldInput!]) { createTable(name: "Orders", fields: $f) { _id } }', {
        f: [
          { name: 'title', type: 'text', required: true },
          { name: 'amount', type: 'number' },
          { name: 'paid', type: 'boolean' },
        ],
      })
    ).createTable._id;
    for (const name of ['PAY_SECRET', 'ERP_TOKEN']) {
      await gqlData(gql, 'mutation($n: String!, $v: String!) { setEnvironmentVariable(name: $n, value: $v) { name } }', { n: name, v: `${name.toLowerCase()}-value-1234` });
    }
  });

  afterAll(async () => {
    await server?.close();
  });

  it.each(['beforeSave', 'afterSave', 'webHook'])('has a %s example that validates with no error and no warning', async (type) => {
    expect(await validate(example(type))).toEqual({ valid: true, errors: [], warnings: [] });
  });

  it('documents every capability, each db method and the limits of this deployment', () => {
    expect(guide.globals.map((global) => global.name)).toEqual(['instance', 'headers', 'request', 'respond', 'env', 'fetch', 'crypto', 'console', 'db']);
    expect(guide.db.map((entry) => entry.method.split('(')[0])).toEqual(['db.find', 'db.get', 'db.create', 'db.update', 'db.delete']);
    expect(guide.limits[0]).toBe('200 ms of computation and 5000 ms in all per run (awaited fetch and db calls included); 32 MB of memory.');
  });

  it("runs the beforeSave example: a negative amount is refused with the hook's message", async () => {
    await gqlData(gql, 'mutation($c: String!, $t: ID!) { createHook(name: "checkOrder", type: "beforeSave", tableId: $t, content: $c) { _id } }', { c: example('beforeSave'), t: ordersId });
    const refused = await gql('mutation { createOrders(data: { title: "x", amount: -5 }) { _id } }');
    expect(refused.body.errors[0]).toMatchObject({ message: 'The amount must not be negative', extensions: { code: 'BAD_INPUT' } });
    const saved = await gqlData(gql, 'mutation { createOrders(data: { title: "  trimmed  ", amount: 5 }) { title } }');
    expect(saved.createOrders.title).toBe('trimmed');
  });

  describe('the webHook example: a Stripe-style signature over the raw body', () => {
    let order: string;
    const body = () => `{"orderId":"${order}","amount":12.50}`;
    /** Calls the example as Stripe would, signed at `t` (seconds) with `secret`. */
    const call = (t: number | string, secret = 'pay_secret-value-1234') => {
      const v1 = createHmac('sha256', secret).update(`${t}.${body()}`).digest('hex');
      return fetch(`${server.url}/api/webhook/pay-confirm`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${v1}` }, body: body() });
    };
    const paid = async () => (await gqlData(gql, 'query($id: ID!) { getOrders(Id: $id) { paid } }', { id: order })).getOrders.paid;
    const now = () => Math.floor(Date.now() / 1000);

    beforeAll(async () => {
      await gqlData(gql, 'mutation($c: String!) { createHook(name: "pay-confirm", type: "webHook", content: $c) { _id } }', { c: example('webHook') });
      order = (await gqlData(gql, 'mutation { createOrders(data: { title: "to pay", amount: 12.5 }) { _id } }')).createOrders._id;
    });

    it.each([
      ['a forged signature', () => call(now(), 'not-the-secret'), 'bad signature'],
      ['a signature of six minutes ago (a replay past the 5-minute tolerance)', () => call(now() - 360), 'signature too old'],
      ['a signature six minutes ahead', () => call(now() + 360), 'signature too old'],
      ['a signature without a time', () => call(''), 'signature too old'],
    ])('refuses %s with 401 and marks nothing paid', async (_label, send, error) => {
      const answer = await send();
      expect(answer.status).toBe(401);
      expect(await answer.json()).toEqual({ error });
      expect(await paid()).toBeNull();
    });

    it('accepts a fresh signature and marks the order paid', async () => {
      const answer = await call(now() - 30);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ ok: true });
      expect(await paid()).toBe(true);
    });
  });

  it.each([
    ['a db call on a table that does not exist', "async () => db.find('Order')", 'UNKNOWN_TABLE', "db.find('Order'): no table is named 'Order'; the tables are Orders", 1, 21],
    ['an env name that is not set', 'async () => env.PAY_SECRT', 'UNKNOWN_ENV', 'env.PAY_SECRT is not set, so it is undefined at run time: set it with set_environment_variable (the set ones are ERP_TOKEN, PAY_SECRET)', 1, 13],
    ['an env name read with brackets', "async () => env['MISSING']", 'UNKNOWN_ENV', 'env.MISSING is not set', 1, 13],
  ])('warns about %s', async (_label, code, warningCode, message, line, column) => {
    const result = await validate(code);
    expect(result.valid).toBe(true);
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]!.code).toBe(warningCode);
    expect(result.warnings[0]!.message.startsWith(message)).toBe(true);
    expect(result.warnings[0]).toMatchObject({ line, column });
  });

  it.each([
    ['the table by name in another letter case', "async () => db.get('orders', 'x')"],
    ['the table by _id', 'ID'],
    ['a local variable named db', "async () => { const db = { find: () => 1 }; return db.find('Nope'); }"],
    ['a table name computed at run time', 'async (instance) => db.find(instance.table)'],
  ])('does not warn for %s', async (_label, code) => {
    const source = code === 'ID' ? `async () => db.get('${ordersId}', 'x')` : code;
    expect((await validate(source)).warnings).toEqual([]);
  });

  it('gives an agent the hook guide with get_feature_authoring_guide and the warnings with validate_hook_code', async () => {
    const { apiKey } = await createUserKey(server, { email: 'agent@example.com', role: 'designer', scopes: ['config:read'] });
    const client = await connectMcp(server, apiKey);
    try {
      const guideAnswer = JSON.stringify(await client.callTool({ name: 'get_feature_authoring_guide', arguments: {} }));
      expect(guideAnswer).toContain('db.find(table, filter?, { sort?, limit?, offset? }?)');
      expect(guideAnswer).toContain('respond(status, body, headers)');
      const checked = JSON.stringify(await client.callTool({ name: 'validate_hook_code', arguments: { content: "async () => db.find('Order')" } }));
      expect(checked).toContain("no table is named 'Order'");
    } finally {
      await client.close();
    }
  });
});
