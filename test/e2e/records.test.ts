import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/access/permissions.js';
import { MAX_QUERY_DEPTH } from '../../src/graphql/query-limits.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type HttpResult, type TestServer } from '../helpers/server.js';

type Gql = ReturnType<typeof graphqlClient>;

const ORDER_FIELDS = [
  { name: 'title', type: 'text', required: true },
  { name: 'amount', type: 'number', required: true },
  { name: 'paid', type: 'boolean' },
  { name: 'due', type: 'date' },
  { name: 'placedAt', type: 'datetime' },
  { name: 'meta', type: 'json' },
  { name: 'code', type: 'text', unique: true },
  { name: 'customer', type: 'reference', referenceTableId: 'Customer' },
  { name: 'tags', type: 'multi-reference', referenceTableId: 'Tag' },
];
const ORDER = '_id title amount paid due placedAt meta code customer tags _createdAt _updatedAt _createdBy _updatedBy';
const CREATE_ORDER = `mutation($data: OrderInput!) { createOrder(data: $data) { ${ORDER} } }`;
const UPDATE_ORDER = `mutation($Id: ID!, $data: OrderInput) { updateOrder(Id: $Id, data: $data) { ${ORDER} } }`;
const GET_ORDER = `query($Id: ID!) { getOrder(Id: $Id) { ${ORDER} } }`;
const LIST_ORDERS = `query($filter: OrderFilter, $sort: [OrderSort!], $limit: Int, $offset: Int) {
  listOrder(filter: $filter, sort: $sort, limit: $limit, offset: $offset) { total items { _id title amount } }
}`;
const DELETE_ORDER = 'mutation($Id: ID!) { deleteOrder(Id: $Id) }';

let server: TestServer;
let gql: Gql;
let ownerId: string;
const tagIds: string[] = [];
let customerId: string;

const db = () => server.server.services.ctx.db;

async function createTable(name: string, fields: unknown[]) {
  const data = await gqlData(gql, 'mutation($name: String!, $fields: [AppFieldInput!]) { createTable(name: $name, fields: $fields) { _id } }', {
    name,
    fields,
  });
  return data.createTable._id as string;
}

async function rowCount(tableName: string): Promise<number> {
  const table = await db().selectFrom('app_tables').select('sql_name').where('name', '=', tableName).executeTakeFirstOrThrow();
  const result = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table.sql_name)}`.execute(db());
  return result.rows[0]!.n;
}

async function createOrder(data: Record<string, unknown>) {
  return (await gqlData(gql, CREATE_ORDER, { data })).createOrder;
}

function expectFieldError(result: HttpResult, code: string, fragment: string) {
  expect(result.body.errors, JSON.stringify(result.body)).toHaveLength(1);
  const [error] = result.body.errors;
  expect(error.extensions.code).toBe(code);
  expect(error.message).toContain(fragment);
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  server = await startTestServer();
  gql = graphqlClient(server.url, await login(server.url));
  ownerId = (await gqlData(gql, '{ me { _id } }')).me._id;
  await createTable('Tag', [{ name: 'label', type: 'text', required: true, unique: true }]);
  await createTable('Customer', [{ name: 'name', type: 'text', required: true }]);
  await createTable('Order', ORDER_FIELDS);
  for (const label of ['red', 'green', 'blue']) {
    tagIds.push((await gqlData(gql, 'mutation($l: String!) { createTag(data: { label: $l }) { _id } }', { l: label })).createTag._id);
  }
  customerId = (await gqlData(gql, 'mutation { createCustomer(data: { name: "Ada" }) { _id } }')).createCustomer._id;
});
afterAll(async () => server?.close());

describe('generated schema', () => {
  it('serves types and operations for a table with every field type, in the SDL get_graphql_schema returns', async () => {
    const sdl = await server.server.services.graphql.sdl();
    for (const fragment of [
      'type Order {',
      '  amount: Float!',
      '  paid: Boolean',
      '  due: Date',
      '  placedAt: DateTime',
      '  meta: JSON',
      '  customer: ID',
      '  tags: [ID!]',
      '  _createdBy: ID',
      'input OrderInput {',
      'input OrderFilter {',
      'enum OrderSortField {',
      'type OrderPage {',
      'listOrder(filter: OrderFilter, sort: [OrderSort!], limit: Int = 50, offset: Int = 0): OrderPage!',
      'getOrder(Id: ID!): Order',
      'createOrder(data: OrderInput!): Order!',
      'updateOrder(Id: ID!, data: OrderInput): Order!',
      'deleteOrder(Id: ID!): Boolean!',
      'type Query {',
      'createTable(',
    ]) {
      expect(sdl).toContain(fragment);
    }
  });

  it('follows a new table and a new field at once', async () => {
    const tableId = await createTable('Note', [{ name: 'text', type: 'text' }]);
    await gqlData(gql, 'mutation { createNote(data: { text: "hello" }) { _id } }');
    await gqlData(gql, 'mutation($t: ID!) { addTableField(tableId: $t, field: { name: "stars", type: "number" }) { _id } }', { t: tableId });
    const created = await gqlData(gql, 'mutation { createNote(data: { text: "rated", stars: 4 }) { text stars } }');
    expect(created.createNote).toEqual({ text: 'rated', stars: 4 });
    const listed = await gqlData(gql, '{ listNote(sort: [{ field: stars, direction: DESC }]) { total items { text stars } } }');
    expect(listed.listNote).toEqual({ total: 2, items: [{ text: 'rated', stars: 4 }, { text: 'hello', stars: null }] });
    expect(await server.server.services.graphql.sdl()).toContain('  stars: Float');
  });

  it('names a table whose operations a builder operation already uses <Table>Record', async () => {
    await createTable('User', [{ name: 'nickname', type: 'text' }]);
    const created = await gqlData(gql, 'mutation { createUserRecord(data: { nickname: "zed" }) { nickname } }');
    expect(created.createUserRecord).toEqual({ nickname: 'zed' });
    expect((await gqlData(gql, '{ me { _id } }')).me._id).toBe(ownerId);
  });

  it(`refuses a query nested deeper than ${MAX_QUERY_DEPTH} levels`, async () => {
    const deep = `{ ${'a { '.repeat(MAX_QUERY_DEPTH + 1)}b${' }'.repeat(MAX_QUERY_DEPTH + 1)} }`;
    const result = await gql(deep);
    expect(result.status).toBe(400);
    expect(result.body.errors.map((e: { message: string }) => e.message)).toContain(
      `Query is nested ${MAX_QUERY_DEPTH + 2} levels deep; the limit is ${MAX_QUERY_DEPTH}`,
    );
  });

  it('refuses a query whose estimated cost is over the limit', async () => {
    const aliases = Array.from({ length: 12 }, (_, i) => `l${i}: listOrder(limit: 500) { items { ${ORDER} } }`).join(' ');
    const result = await gql(`{ ${aliases} }`);
    expect(result.status).toBe(400);
    expect(result.body.errors[0].message).toMatch(/^Query may resolve about \d+ fields; the limit is 50000/);
  });
});

describe('record CRUD through generated GraphQL', () => {
  it('creates a record with every field type and reads it back by Id', async () => {
    const data = {
      title: 'First',
      amount: 12.5,
      paid: false,
      due: '2024-02-29',
      placedAt: '2024-03-01T10:15:30+02:00',
      meta: { lines: [1, 2], note: 'x' },
      code: 'A-1',
      customer: customerId,
      tags: [tagIds[0], tagIds[2]],
    };
    const created = await createOrder(data);
    expect(created).toEqual({
      ...data,
      _id: expect.any(String),
      placedAt: '2024-03-01T08:15:30.000Z',
      _createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      _updatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      _createdBy: ownerId,
      _updatedBy: ownerId,
    });
    expect((await gqlData(gql, GET_ORDER, { Id: created._id })).getOrder).toEqual(created);
  });

  it('answers null for an unknown Id', async () => {
    expect((await gqlData(gql, GET_ORDER, { Id: 'no-such-order' })).getOrder).toBeNull();
  });

  it('updates only the fields given with update<Table>(Id, data), and null clears an optional field', async () => {
    const created = await createOrder({ title: 'Partial', amount: 1, paid: false, code: 'P-1', tags: [tagIds[1]] });
    const result = await gql(UPDATE_ORDER, { Id: created._id, data: { amount: 2, paid: null } });
    expect(result.body.errors).toBeUndefined();
    const updated = result.body.data.updateOrder;
    expect(updated).toEqual({ ...created, amount: 2, paid: null, _updatedAt: expect.any(String) });
    expect(Date.parse(updated._updatedAt)).toBeGreaterThanOrEqual(Date.parse(created._updatedAt));
    expect((await gqlData(gql, GET_ORDER, { Id: created._id })).getOrder).toEqual(updated);
  });

  it('lists with a filter, a sort, a limit, an offset and the total', async () => {
    for (const [index, amount] of [5, 50, 500, 5000].entries()) {
      await createOrder({ title: `List ${index}`, amount, code: `L-${index}`, paid: index % 2 === 0, due: `2030-01-0${index + 1}` });
    }
    const filter = { title: { contains: 'list ' }, amount: { gte: 50 } };
    const page = await gqlData(gql, LIST_ORDERS, { filter, sort: [{ field: 'amount', direction: 'DESC' }], limit: 2, offset: 1 });
    expect(page.listOrder).toEqual({
      total: 3,
      items: [
        { _id: expect.any(String), title: 'List 1', amount: 50 },
        { _id: expect.any(String), title: 'List 2', amount: 500 },
      ].reverse(),
    });
    const either = { _or: [{ amount: { in: [5, 5000] } }, { due: { eq: '2030-01-02' } }], title: { contains: 'List' } };
    const both = await gqlData(gql, LIST_ORDERS, { filter: either, sort: [{ field: 'amount' }] });
    expect(both.listOrder.items.map((o: { amount: number }) => o.amount)).toEqual([5, 50, 5000]);
    const unpaid = await gqlData(gql, LIST_ORDERS, { filter: { paid: { eq: false }, title: { contains: 'List' } } });
    expect(unpaid.listOrder.total).toBe(2);
  });

  it('filters a multi-reference field by an _id it contains', async () => {
    const tagged = await createOrder({ title: 'Tagged', amount: 3, code: 'T-1', tags: [tagIds[1], tagIds[2]] });
    const page = await gqlData(gql, LIST_ORDERS, { filter: { tags: { contains: tagIds[2] }, title: { eq: 'Tagged' } } });
    expect(page.listOrder.items.map((o: { _id: string }) => o._id)).toEqual([tagged._id]);
  });

  it('deletes a record; a second delete is NOT_FOUND', async () => {
    const created = await createOrder({ title: 'Doomed', amount: 1, code: 'D-1' });
    const before = await rowCount('Order');
    expect((await gqlData(gql, DELETE_ORDER, { Id: created._id })).deleteOrder).toBe(true);
    expect(await rowCount('Order')).toBe(before - 1);
    expect((await gqlData(gql, GET_ORDER, { Id: created._id })).getOrder).toBeNull();
    expectFieldError(await gql(DELETE_ORDER, { Id: created._id }), 'NOT_FOUND', `Order '${created._id}' does not exist`);
  });

  it('refuses to delete a record another record references', async () => {
    const customer = (await gqlData(gql, 'mutation { createCustomer(data: { name: "Bob" }) { _id } }')).createCustomer;
    await createOrder({ title: 'Bob order', amount: 1, code: 'B-1', customer: customer._id });
    expectFieldError(await gql('mutation($Id: ID!) { deleteCustomer(Id: $Id) }', { Id: customer._id }), 'CONFLICT', 'referenced');
  });
});

describe('bad record input', () => {
  it.each([
    ['a date that does not exist', () => ({ title: 'Bad', amount: 1, due: '2023-02-29' }), 'data.due: must be a date like 2024-05-31'],
    ['a date-time without a time zone', () => ({ title: 'Bad', amount: 1, placedAt: '2024-03-01T10:15:30' }), 'data.placedAt: must be an ISO 8601 date-time'],
    ['a missing required field', () => ({ title: 'No amount' }), 'data.amount: is required'],
    ['null for a required field', () => ({ title: null, amount: 1 }), 'data.title: is required'],
    ['empty text for a required field', () => ({ title: '', amount: 1 }), 'data.title: is required: must not be empty or only spaces'],
    ['only spaces for a required field', () => ({ title: ' \t\n ', amount: 1 }), 'data.title: is required: must not be empty or only spaces'],
    ['an unknown customer', () => ({ title: 'Bad', amount: 1, customer: 'no-such-customer' }), "data.customer: no Customer record has _id 'no-such-customer'"],
    ['unknown tags', () => ({ title: 'Bad', amount: 1, tags: ['nope-1', tagIds[0], 'nope-2'] }), "data.tags: no Tag record has _id 'nope-1', 'nope-2'"],
  ])('refuses %s with BAD_INPUT naming the field and writes nothing', async (_case, data, message) => {
    const before = await rowCount('Order');
    expectFieldError(await gql(CREATE_ORDER, { data: data() }), 'BAD_INPUT', message);
    expect(await rowCount('Order')).toBe(before);
  });

  it.each([
    ['a string for a number', { title: 'x', amount: 'lots' }, 'data.amount'],
    ['an unknown field', { title: 'x', amount: 1, colour: 'red' }, 'colour'],
    ['an object for the tags array', { title: 'x', amount: 1, tags: { id: 'x' } }, 'data.tags'],
  ])('refuses %s before any write, naming the field', async (_case, data, fragment) => {
    const before = await rowCount('Order');
    const result = await gql(CREATE_ORDER, { data });
    expect(result.status).toBe(400);
    expect(result.body.errors[0].message).toContain(fragment);
    expect(await rowCount('Order')).toBe(before);
  });

  it('refuses a duplicate unique value with CONFLICT naming the field, on create and on update', async () => {
    await createOrder({ title: 'Unique', amount: 1, code: 'U-1' });
    const other = await createOrder({ title: 'Other', amount: 1, code: 'U-2' });
    const before = await rowCount('Order');
    const duplicate = await gql(CREATE_ORDER, { data: { title: 'Dup', amount: 1, code: 'U-1' } });
    expectFieldError(duplicate, 'CONFLICT', 'data.code: another Order record already has this code');
    expect(duplicate.body.errors[0].extensions.details).toEqual({ field: 'data.code' });
    expectFieldError(await gql(UPDATE_ORDER, { Id: other._id, data: { code: 'U-1' } }), 'CONFLICT', 'data.code');
    expect(await rowCount('Order')).toBe(before);
    expect((await gqlData(gql, GET_ORDER, { Id: other._id })).getOrder.code).toBe('U-2');
  });

  it('refuses an update of an unknown Id with NOT_FOUND', async () => {
    expectFieldError(await gql(UPDATE_ORDER, { Id: 'missing', data: { amount: 1 } }), 'NOT_FOUND', "Order 'missing' does not exist");
  });

  it('names the filter part that is wrong', async () => {
    expectFieldError(await gql(LIST_ORDERS, { filter: { due: { lt: 'soon' } } }), 'BAD_INPUT', 'filter.due.lt: must be a date');
  });

  it.each([
    ['a string for a number', { title: 'x', amount: '5' }, 'data.amount: must be a number'],
    ['an unknown field', { title: 'x', amount: 1, colour: 'red' }, "data.colour: is not a field of table 'Order'"],
    ['a system field', { title: 'x', amount: 1, _id: 'mine' }, 'data._id: is not a field'],
    ['an array of numbers for tags', { title: 'x', amount: 1, tags: [1] }, 'data.tags: must be an array of record _ids'],
  ])('checks %s in the record service itself (hook code calls it directly)', async (_case, data, message) => {
    await expect(server.server.services.records.create(ownerPrincipal(), 'Order', data)).rejects.toThrow(message);
  });
});

function ownerPrincipal(source: Principal['source'] = 'graphql'): Principal {
  return { kind: 'user', userId: ownerId, label: 'owner', isAdmin: true, permissions: new Set(), source };
}

describe('who may use records', () => {
  it('refuses MCP principals', async () => {
    await expect(server.server.services.records.list(ownerPrincipal('mcp'), 'Order')).rejects.toThrow('MCP keys');
  });

  it('lets an integration token read and write records, with x-userid recorded as the author', async () => {
    const key = (await gqlData(gql, 'mutation { createIntegrationKey(name: "records") { clientId apiKey } }')).createIntegrationKey;
    const token = (await postJson(`${server.url}/api/auth/token`, key)).body.access_token;
    const asIntegration = (headers: Record<string, string>) => (query: string, variables: Record<string, unknown>) =>
      postJson(`${server.url}/graphql`, { query, variables }, { authorization: `Bearer ${token}`, ...headers });
    const created = await asIntegration({})(CREATE_ORDER, { data: { title: 'From integration', amount: 1, code: 'I-1' } });
    expect(created.body.data.createOrder).toMatchObject({ title: 'From integration', _createdBy: null, _updatedBy: null });
    const Id = created.body.data.createOrder._id;
    const updated = await asIntegration({ 'x-userid': ownerId })(UPDATE_ORDER, { Id, data: { amount: 2 } });
    expect(updated.body.data.updateOrder).toMatchObject({ amount: 2, _createdBy: null, _updatedBy: ownerId });
    const read = await asIntegration({})(GET_ORDER, { Id });
    expect(read.body.data.getOrder.amount).toBe(2);
  });

  it('refuses GraphQL without a session with 401', async () => {
    const result = await postJson(`${server.url}/graphql`, { query: '{ listOrder { total } }' });
    expect(result.status).toBe(401);
  });
});

describe('save hooks', () => {
  const HOOK = 'mutation($n: String!, $t: HookType!, $table: ID, $c: String!) { createHook(name: $n, type: $t, tableId: $table, content: $c) { _id } }';
  let paymentTable: string;

  beforeAll(async () => {
    paymentTable = await createTable('Payment', [
      { name: 'amount', type: 'number', required: true },
      { name: 'note', type: 'text' },
    ]);
    const logTable = await createTable('PaymentLog', [{ name: 'paymentId', type: 'text', required: true }]);
    const hooks = [
      ['a-reject-negative', 'beforeSave', paymentTable, "async function (instance) { if (instance.amount < 0) throw new Error('amount must not be negative'); return instance; }"],
      [
        'b-rewrite-note',
        'beforeSave',
        paymentTable,
        "async function (instance) { const page = await db.find('Payment', {}, { limit: 0 }); instance.note = String(instance.note || '').toUpperCase() + ' #' + page.total; return instance; }",
      ],
      ['c-log-payment', 'afterSave', paymentTable, "async function (instance) { await db.create('PaymentLog', { paymentId: instance._id }); }"],
      ['d-never-log', 'beforeSave', logTable, "async function (instance) { throw new Error('hooks ran for a hook write'); }"],
    ];
    for (const [n, t, table, c] of hooks) await gqlData(gql, HOOK, { n, t, table, c });
  });

  it('rejects a save with the beforeSave hook message and writes nothing', async () => {
    const result = await gql('mutation { createPayment(data: { amount: -5, note: "refund" }) { _id } }');
    expectFieldError(result, 'BAD_INPUT', 'amount must not be negative');
    expect(await rowCount('Payment')).toBe(0);
  });

  it('saves what a beforeSave hook rewrote, with db reads inside the save', async () => {
    const created = await gqlData(gql, 'mutation { createPayment(data: { amount: 10, note: "first" }) { _id amount note } }');
    expect(created.createPayment).toEqual({ _id: expect.any(String), amount: 10, note: 'FIRST #0' });
    const updated = await gqlData(gql, 'mutation($Id: ID!) { updatePayment(Id: $Id, data: { note: "again" }) { amount note } }', {
      Id: created.createPayment._id,
    });
    expect(updated.updatePayment).toEqual({ amount: 10, note: 'AGAIN #1' });
  });

  it('refuses a rejection on update and keeps the stored record', async () => {
    const created = await gqlData(gql, 'mutation { createPayment(data: { amount: 1 }) { _id note } }');
    const result = await gql('mutation($Id: ID!) { updatePayment(Id: $Id, data: { amount: -1 }) { _id } }', { Id: created.createPayment._id });
    expectFieldError(result, 'BAD_INPUT', 'amount must not be negative');
    expect((await gqlData(gql, 'query($Id: ID!) { getPayment(Id: $Id) { amount } }', { Id: created.createPayment._id })).getPayment).toEqual({ amount: 1 });
  });

  it('shows the author and their role to beforeSave hooks as user, which may refuse a save to a role', async () => {
    const signed = await createTable('Signed', [{ name: 'by', type: 'text' }]);
    // A new table starts at NONE for roles other than its creator's (D32): open it to both.
    const all = { level: 'ALL' };
    for (const role of ['designer', 'viewer']) {
      await gqlData(gql, 'mutation($t: ID!, $r: ID!, $a: TableAccessInput!) { setTableAccess(tableId: $t, roleId: $r, access: $a) { roleId } }', {
        t: signed,
        r: role,
        a: { read: all, create: all, update: all, delete: all },
      });
    }
    const content = "async function (instance) { if (user && user.role === 'viewer') throw new Error('Viewers may not sign'); instance.by = user ? `${user.email} (${user.role})` : 'nobody'; return instance; }";
    await gqlData(gql, HOOK, { n: 'sign', t: 'beforeSave', table: signed, c: content });
    expect((await gqlData(gql, 'mutation { createSigned(data: {}) { by } }')).createSigned).toEqual({ by: 'owner@example.com (admin)' });
    const asUser = async (email: string, role: string) => {
      await gqlData(gql, 'mutation($e: String!, $r: String!) { createUser(email: $e, password: "user-password", role: $r) { _id } }', { e: email, r: role });
      return graphqlClient(server.url, await login(server.url, email, 'user-password'));
    };
    const designer = await asUser('signer@example.com', 'designer');
    expect((await gqlData(designer, 'mutation { createSigned(data: {}) { by } }')).createSigned).toEqual({ by: 'signer@example.com (designer)' });
    const viewer = await asUser('reader@example.com', 'viewer');
    expectFieldError(await viewer('mutation { createSigned(data: {}) { by } }'), 'BAD_INPUT', 'Viewers may not sign');
  });

  it('runs the afterSave hooks of one record in the order of its saves', async () => {
    const ledger = await createTable('Ledger', [{ name: 'amount', type: 'number' }]);
    await createTable('LedgerLog', [{ name: 'amount', type: 'number' }]);
    // The first save's hook computes for ~80 ms before it writes: run side by side, the second's would write first.
    const content = "async function (instance) { if (instance.amount === 1) { const until = Date.now() + 80; while (Date.now() < until) {} } await db.create('LedgerLog', { amount: instance.amount }); }";
    await gqlData(gql, HOOK, { n: 'ledger-log', t: 'afterSave', table: ledger, c: content });
    const created = await gqlData(gql, 'mutation { createLedger(data: { amount: 1 }) { _id } }');
    await gqlData(gql, 'mutation($Id: ID!) { updateLedger(Id: $Id, data: { amount: 2 }) { _id } }', { Id: created.createLedger._id });
    const logs = await until(
      () => gqlData(gql, '{ listLedgerLog(sort: [{ field: _createdAt }]) { items { amount } } }'),
      (data) => data.listLedgerLog.items.length >= 2,
    );
    expect(logs.listLedgerLog.items.map((item: { amount: number }) => item.amount)).toEqual([1, 2]);
  });

  it('runs afterSave after the commit, whose db writes run no hooks, and records the run in hook_runs', async () => {
    const created = await gqlData(gql, 'mutation { createPayment(data: { amount: 7 }) { _id } }');
    const paymentId = created.createPayment._id;
    const logs = await until(
      () => gqlData(gql, 'query($p: String!) { listPaymentLog(filter: { paymentId: { eq: $p } }) { items { paymentId _createdBy } } }', { p: paymentId }),
      (data) => data.listPaymentLog.items.length > 0,
    );
    expect(logs.listPaymentLog.items).toEqual([{ paymentId, _createdBy: ownerId }]);
    await server.server.services.hookRuntime.flushRunLog();
    const runs = await db().selectFrom('hook_runs').select(['hook_name', 'trigger', 'outcome']).where('hook_name', '=', 'c-log-payment').execute();
    expect(runs).toContainEqual({ hook_name: 'c-log-payment', trigger: 'afterSave', outcome: 'ok' });
    const nested = await db().selectFrom('hook_runs').select('hook_name').where('hook_name', '=', 'd-never-log').execute();
    expect(nested).toEqual([]);
  });
});
