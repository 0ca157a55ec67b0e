import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTableSchema } from '../../src/tables/service.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let ownerGql: ReturnType<typeof graphqlClient>;
let designerGql: ReturnType<typeof graphqlClient>;
let viewerGql: ReturnType<typeof graphqlClient>;

const TABLE = '_id name description fields { _id name type required unique referenceTableId description } createdAt updatedAt';
const CREATE = `mutation($name: String!, $description: String, $fields: [AppFieldInput!]) {
  createTable(name: $name, description: $description, fields: $fields) { ${TABLE} } }`;
const UPDATE = `mutation($id: ID!, $name: String, $description: String) {
  updateTable(_id: $id, name: $name, description: $description) { ${TABLE} } }`;
const ADD_FIELD = `mutation($tableId: ID!, $field: AppFieldInput!) { addTableField(tableId: $tableId, field: $field) { ${TABLE} } }`;
const DELETE = 'mutation($id: ID!, $confirm: Boolean!) { deleteTable(_id: $id, confirm: $confirm) }';

type Gql = ReturnType<typeof graphqlClient>;
interface FieldSpec {
  name: string;
  type: string;
  required?: boolean;
  unique?: boolean;
  referenceTableId?: string;
  description?: string;
}

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
});
afterAll(async () => server?.close());

function db() {
  return server.server.services.ctx.db;
}

async function createTable(name: string, fields: FieldSpec[] = [], gql: Gql = ownerGql) {
  return (await gqlData(gql, CREATE, { name, fields })).createTable;
}

async function sqlNameOf(tableId: string): Promise<string> {
  return (await db().selectFrom('app_tables').select('sql_name').where('id', '=', tableId).executeTakeFirstOrThrow()).sql_name;
}

async function insertRow(sqlName: string, values: Record<string, unknown>): Promise<void> {
  const columns = Object.keys(values).map((column) => sql.id(column));
  const params = Object.values(values).map((value) => (Array.isArray(value) ? sql`${`{${value.join(',')}}`}::text[]` : sql`${value}`));
  await sql`insert into ${sql.table(sqlName)} (${sql.join(columns)}) values (${sql.join(params)})`.execute(db());
}

async function columnsOf(sqlName: string) {
  const result = await sql<{ column_name: string; data_type: string; udt_name: string; is_nullable: string }>`
    select column_name, data_type, udt_name, is_nullable from information_schema.columns
    where table_schema = current_schema() and table_name = ${sqlName} order by ordinal_position`.execute(db());
  return result.rows;
}

async function sqlTableExists(sqlName: string): Promise<boolean> {
  const result = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables
    where table_schema = current_schema() and table_name = ${sqlName}`.execute(db());
  return result.rows[0]!.n === 1;
}

/** Everything a table write may leave behind: metadata rows, audit entries, SQL tables and columns. */
async function snapshot() {
  const count = async (query: Promise<{ n: number }>) => (await query).n;
  const tables = await sql<{ name: string; columns: number }>`
    select t.table_name as name, (select count(*)::int from information_schema.columns c
      where c.table_schema = t.table_schema and c.table_name = t.table_name) as columns
    from information_schema.tables t where t.table_schema = current_schema() and t.table_name like 'data\\_%'
    order by 1`.execute(db());
  return {
    appTables: await count(db().selectFrom('app_tables').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()),
    appFields: await count(db().selectFrom('app_fields').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()),
    audits: await count(
      db().selectFrom('audit_events').select(sql<number>`count(*)::int`.as('n')).where('resource_type', '=', 'table').executeTakeFirstOrThrow(),
    ),
    sqlTables: tables.rows,
  };
}

function errorOf(result: { body: { errors?: Array<{ message: string; extensions: { code: string } }> } }) {
  expect(result.body.errors, 'expected a GraphQL error').toBeDefined();
  return result.body.errors![0]!;
}

const ALL_TYPES = [
  { type: 'text', dataType: 'text' },
  { type: 'number', dataType: 'double precision' },
  { type: 'boolean', dataType: 'boolean' },
  { type: 'date', dataType: 'date' },
  { type: 'datetime', dataType: 'timestamp with time zone' },
  { type: 'json', dataType: 'jsonb' },
  { type: 'reference', dataType: 'text' },
  { type: 'multi-reference', dataType: 'ARRAY' },
] as const;

describe('createTable', () => {
  let customers: { _id: string };
  let everything: { _id: string; name: string; fields: Array<Record<string, unknown>> };
  let everythingSql: string;

  beforeAll(async () => {
    customers = await createTable('Customers', [{ name: 'email', type: 'text', required: true, unique: true }]);
    everything = await createTable(
      'Everything',
      ALL_TYPES.map(({ type }) => ({
        name: `f_${type.replace('-', '_')}`,
        type,
        ...(type.includes('reference') ? { referenceTableId: customers._id } : {}),
      })),
    );
    everythingSql = await sqlNameOf(everything._id);
  });

  it('returns the table with one field of every type in the given order', () => {
    expect(everything.name).toBe('Everything');
    expect(everything.fields.map((f) => f.type)).toEqual(ALL_TYPES.map((t) => t.type));
    expect(everything.fields[6]).toMatchObject({ name: 'f_reference', referenceTableId: customers._id, required: false, unique: false });
    expect(everything.fields[0]).toMatchObject({ referenceTableId: null, description: '' });
  });

  it('creates a real SQL table with the system columns and one typed column per field', async () => {
    expect(everythingSql).toMatch(/^data_everything_[a-z0-9]{6}$/);
    const columns = await columnsOf(everythingSql);
    expect(columns.map((c) => [c.column_name, c.data_type])).toEqual([
      ['_id', 'text'],
      ['_created_at', 'timestamp with time zone'],
      ['_updated_at', 'timestamp with time zone'],
      ['_created_by', 'text'],
      ['_updated_by', 'text'],
      ...ALL_TYPES.map(({ type, dataType }) => [`f_${type.replace('-', '_')}`, dataType]),
    ]);
    expect(columns.find((c) => c.column_name === 'f_multi_reference')!.udt_name).toBe('_text');
  });

  it('stores and reads back a value of every type', async () => {
    await insertRow(await sqlNameOf(customers._id), { _id: 'c1', email: 'a@example.com' });
    await insertRow(everythingSql, {
      _id: 'e1',
      f_text: 'hello',
      f_number: 2.5,
      f_boolean: true,
      f_date: '2024-02-29',
      f_datetime: '2024-02-29T10:00:00Z',
      f_json: JSON.stringify({ a: [1, 2] }),
      f_reference: 'c1',
      f_multi_reference: ['c1', 'c2'],
    });
    const result = await sql<Record<string, unknown>>`select * from ${sql.table(everythingSql)} where _id = 'e1'`.execute(db());
    expect(result.rows[0]).toMatchObject({
      f_text: 'hello',
      f_number: 2.5,
      f_boolean: true,
      f_json: { a: [1, 2] },
      f_reference: 'c1',
      f_multi_reference: ['c1', 'c2'],
    });
    expect((result.rows[0]!._created_at as Date).getTime()).toBeGreaterThan(Date.now() - 60_000);
  });

  it('enforces a required field with NOT NULL', async () => {
    await expect(insertRow(await sqlNameOf(customers._id), { _id: 'c-null' })).rejects.toMatchObject({ code: '23502' });
  });

  it('enforces a unique field with a UNIQUE constraint', async () => {
    const customersSql = await sqlNameOf(customers._id);
    await insertRow(customersSql, { _id: 'c-first', email: 'same@example.com' });
    await expect(insertRow(customersSql, { _id: 'c-second', email: 'same@example.com' })).rejects.toMatchObject({ code: '23505' });
  });

  it('enforces a reference field with a foreign key that restricts deleting the target', async () => {
    await expect(insertRow(everythingSql, { _id: 'e-bad', f_reference: 'no-such-customer' })).rejects.toMatchObject({ code: '23503' });
    const customersSql = await sqlNameOf(customers._id);
    await insertRow(customersSql, { _id: 'c-kept', email: 'kept@example.com' });
    await insertRow(everythingSql, { _id: 'e-ref', f_reference: 'c-kept' });
    const refused = await sql`delete from ${sql.table(customersSql)} where _id = 'c-kept'`.execute(db()).catch((error: { code: string }) => error);
    // PostgreSQL 18 (PGlite) reports RESTRICT as restrict_violation; older servers as foreign_key_violation.
    expect(['23001', '23503']).toContain((refused as { code?: string }).code);
    const rules = await sql<{ delete_rule: string }>`select r.delete_rule from information_schema.referential_constraints r
      join information_schema.table_constraints t on t.constraint_name = r.constraint_name and t.constraint_schema = r.constraint_schema
      where t.table_name = ${everythingSql}`.execute(db());
    expect(rules.rows).toEqual([{ delete_rule: 'RESTRICT' }]);
  });

  it('lets a table reference itself by its own name', async () => {
    const people = await createTable('People', [{ name: 'manager', type: 'reference', referenceTableId: 'People' }]);
    expect(people.fields[0].referenceTableId).toBe(people._id);
    const peopleSql = await sqlNameOf(people._id);
    await insertRow(peopleSql, { _id: 'boss' });
    await insertRow(peopleSql, { _id: 'worker', manager: 'boss' });
    await expect(insertRow(peopleSql, { _id: 'orphan', manager: 'ghost' })).rejects.toMatchObject({ code: '23503' });
  });

  it('creates a table without fields, with only the system columns', async () => {
    const empty = await createTable('Empty');
    expect(empty.fields).toEqual([]);
    expect((await columnsOf(await sqlNameOf(empty._id))).map((c) => c.column_name)).toEqual([
      '_id',
      '_created_at',
      '_updated_at',
      '_created_by',
      '_updated_by',
    ]);
  });

  it('keeps the SQL name of a 63-character table name within PostgreSQL identifiers', async () => {
    const long = await createTable(`L${'o'.repeat(61)}g`);
    const sqlName = await sqlNameOf(long._id);
    expect(sqlName.length).toBeLessThanOrEqual(63);
    expect(await sqlTableExists(sqlName)).toBe(true);
  });

  it('lets a designer create a table and records who did it in the audit trail', async () => {
    const notes = await createTable('Notes', [{ name: 'body', type: 'text' }], designerGql);
    const audit = await db().selectFrom('audit_events').selectAll().where('resource_id', '=', notes._id).execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'table.create', resource_type: 'table' });
    expect(audit[0]!.actor_id).toBeTruthy();
    expect(audit[0]!.details).toMatchObject({ name: 'Notes', fields: [{ name: 'body', type: 'text', required: false }] });
  });

  it('lists the tables and reads one by _id with fields in position order', async () => {
    const list = await gqlData(viewerGql, `{ tables { ${TABLE} } }`);
    expect(list.tables.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['Customers', 'Everything']));
    const one = await gqlData(viewerGql, `query($id: ID!) { table(_id: $id) { ${TABLE} } }`, { id: everything._id });
    expect(one.table).toEqual(everything);
  });

  it('answers NOT_FOUND for an unknown table _id', async () => {
    const result = await ownerGql(`query { table(_id: "nope") { _id } }`);
    expect(errorOf(result).extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('loads a table schema internally by _id or case-insensitive name', async () => {
    const byName = await loadTableSchema(db(), 'everything');
    const byId = await loadTableSchema(db(), everything._id);
    expect(byName?.table.id).toBe(everything._id);
    expect(byId?.table.sql_name).toBe(everythingSql);
    expect(byId?.fields.map((f) => f.position)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(await loadTableSchema(db(), 'Nothing')).toBeUndefined();
  });
});

describe('createTable refusals leave nothing behind', () => {
  let existing: { _id: string };

  beforeAll(async () => {
    existing = await createTable('Orders', [{ name: 'total', type: 'number' }]);
  });

  it.each([
    ['an empty name', ''],
    ['a name starting with a digit', '1orders'],
    ['a name starting with _', '_orders'],
    ['a name with a hyphen', 'order-lines'],
    ['a name with a space', 'order lines'],
    ['a name with SQL in it', 'x"; drop table app_tables; --'],
    ['a non-ASCII name', 'Bestellüng'],
    ['a 64-character name', 'a'.repeat(64)],
  ])('rejects %s with BAD_INPUT naming `name`', async (_case, name) => {
    const before = await snapshot();
    const result = await ownerGql(CREATE, { name, fields: [{ name: 'x', type: 'text' }] });
    expect(errorOf(result).extensions.code).toBe('BAD_INPUT');
    expect(errorOf(result).message).toMatch(/^name: /);
    expect(await snapshot()).toEqual(before);
  });

  it.each([
    ['_id', 'a system column name'],
    ['_secret', 'a name starting with _'],
    ['9lives', 'a name starting with a digit'],
    ['first-name', 'a name with a hyphen'],
    ['', 'an empty name'],
    ['a'.repeat(64), 'a 64-character name'],
    ['x"y', 'a name with a quote'],
  ])('rejects the field name %j (%s) with BAD_INPUT naming fields.1.name', async (fieldName) => {
    const before = await snapshot();
    const result = await ownerGql(CREATE, { name: 'Invoices', fields: [{ name: 'ok', type: 'text' }, { name: fieldName, type: 'text' }] });
    expect(errorOf(result).extensions.code).toBe('BAD_INPUT');
    expect(errorOf(result).message).toContain('fields.1.name: ');
    expect(await snapshot()).toEqual(before);
  });

  it.each([
    ['an unknown field type', [{ name: 'a', type: 'money' }], '"money" at "fields[0].type"; FieldType must be one of text, number'],
    ['a reference without referenceTableId', [{ name: 'a', type: 'reference' }], 'fields.0.referenceTableId: is required'],
    ['a multi-reference without referenceTableId', [{ name: 'a', type: 'multi-reference' }], 'fields.0.referenceTableId: is required'],
    ['a referenceTableId on a text field', [{ name: 'a', type: 'text', referenceTableId: 'x' }], 'fields.0.referenceTableId: is only'],
    ['the same field name twice (any case)', [{ name: 'amount', type: 'number' }, { name: 'Amount', type: 'text' }], 'fields.1.name: '],
    ['201 fields', Array.from({ length: 201 }, (_, i) => ({ name: `f${i}`, type: 'text' })), 'fields: must have at most 200'],
  ])('rejects %s with BAD_INPUT naming the field', async (_case, fields, message) => {
    const before = await snapshot();
    const result = await ownerGql(CREATE, { name: 'Invoices', fields });
    expect(errorOf(result).extensions.code).toBe('BAD_INPUT');
    expect(errorOf(result).message).toContain(message);
    expect(await snapshot()).toEqual(before);
  });

  it.each(['reference', 'multi-reference'])('rejects a %s to an unknown table, even as the last field, and creates no SQL table', async (type) => {
    const before = await snapshot();
    const fields = [{ name: 'a', type: 'text' }, { name: 'link', type, referenceTableId: 'no-such-table' }];
    const result = await ownerGql(CREATE, { name: 'Invoices', fields });
    expect(errorOf(result).extensions.code).toBe('BAD_INPUT');
    expect(errorOf(result).message).toContain("fields.1.referenceTableId: no table with _id or name 'no-such-table'");
    expect(await snapshot()).toEqual(before);
  });

  it.each(['Orders', 'ORDERS', 'orders'])('refuses the taken name %s with CONFLICT', async (name) => {
    const before = await snapshot();
    const result = await ownerGql(CREATE, { name, fields: [] });
    expect(errorOf(result).extensions).toMatchObject({ code: 'CONFLICT', status: 409 });
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a viewer with FORBIDDEN', async () => {
    const before = await snapshot();
    const result = await viewerGql(CREATE, { name: 'Invoices', fields: [{ name: 'a', type: 'text' }] });
    expect(errorOf(result).extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(errorOf(result).message).toContain("'tables:write'");
    expect(await snapshot()).toEqual(before);
  });

  it('still has the existing table intact after every refusal', async () => {
    const one = await gqlData(ownerGql, `query($id: ID!) { table(_id: $id) { name fields { name } } }`, { id: existing._id });
    expect(one.table).toEqual({ name: 'Orders', fields: [{ name: 'total' }] });
  });
});

describe('updateTable', () => {
  it('renames a table, keeps its SQL name and its records, and frees the old name', async () => {
    const clients = await createTable('Clients', [{ name: 'label', type: 'text' }]);
    const sqlName = await sqlNameOf(clients._id);
    await insertRow(sqlName, { _id: 'r1', label: 'kept' });

    const renamed = (await gqlData(ownerGql, UPDATE, { id: clients._id, name: 'Accounts', description: 'Paying clients' })).updateTable;
    expect(renamed).toMatchObject({ _id: clients._id, name: 'Accounts', description: 'Paying clients', fields: [{ name: 'label' }] });
    expect(new Date(renamed.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(clients.updatedAt).getTime());
    expect(await sqlNameOf(clients._id)).toBe(sqlName);
    const rows = await sql<{ label: string }>`select label from ${sql.table(sqlName)}`.execute(db());
    expect(rows.rows).toEqual([{ label: 'kept' }]);
    expect((await createTable('Clients'))._id).not.toBe(clients._id);
  });

  it('changes only the description when no name is given', async () => {
    const tags = await createTable('Tags');
    const updated = (await gqlData(ownerGql, UPDATE, { id: tags._id, description: 'Labels' })).updateTable;
    expect(updated).toMatchObject({ name: 'Tags', description: 'Labels' });
  });

  it('lets a table change the case of its own name', async () => {
    const items = await createTable('items');
    expect((await gqlData(ownerGql, UPDATE, { id: items._id, name: 'Items' })).updateTable.name).toBe('Items');
  });

  it.each([
    ['the name of another table (any case)', 'ACCOUNTS', 'CONFLICT'],
    ['an invalid name', 'bad name', 'BAD_INPUT'],
  ])('refuses a rename to %s and keeps the table as it was', async (_case, name, code) => {
    const units = await createTable('Units');
    const before = await snapshot();
    const result = await ownerGql(UPDATE, { id: units._id, name });
    expect(errorOf(result).extensions.code).toBe(code);
    expect(await snapshot()).toEqual(before);
    expect((await gqlData(ownerGql, `query($id: ID!) { table(_id: $id) { name } }`, { id: units._id })).table.name).toBe('Units');
    await gqlData(ownerGql, DELETE, { id: units._id, confirm: true });
  });

  it('answers NOT_FOUND for an unknown table', async () => {
    const result = await ownerGql(UPDATE, { id: 'missing', name: 'Whatever' });
    expect(errorOf(result).extensions.code).toBe('NOT_FOUND');
  });

  it('refuses a viewer with FORBIDDEN', async () => {
    const colors = await createTable('Colors');
    const before = await snapshot();
    const result = await viewerGql(UPDATE, { id: colors._id, name: 'Hues' });
    expect(errorOf(result).extensions.code).toBe('FORBIDDEN');
    expect(await snapshot()).toEqual(before);
  });
});

describe('addTableField', () => {
  let products: { _id: string };
  let productsSql: string;

  beforeAll(async () => {
    products = await createTable('Products', [{ name: 'title', type: 'text' }]);
    productsSql = await sqlNameOf(products._id);
    await insertRow(productsSql, { _id: 'p1', title: 'Lamp' });
  });

  it('adds an optional field of every type to a table with rows, leaving existing rows empty', async () => {
    const target = await createTable('Suppliers');
    for (const { type, dataType } of ALL_TYPES) {
      const name = `extra_${type.replace('-', '_')}`;
      const field = { name, type, ...(type.includes('reference') ? { referenceTableId: target._id } : {}) };
      const table = (await gqlData(ownerGql, ADD_FIELD, { tableId: products._id, field })).addTableField;
      expect(table.fields.at(-1)).toMatchObject({ name, type, required: false });
      const column = (await columnsOf(productsSql)).find((c) => c.column_name === name);
      expect(column).toMatchObject({ data_type: dataType, is_nullable: 'YES' });
    }
    const row = await sql<Record<string, unknown>>`select * from ${sql.table(productsSql)}`.execute(db());
    expect(row.rows[0]).toMatchObject({ title: 'Lamp', extra_text: null, extra_reference: null });
  });

  it('refuses a required field on a table with rows with CONFLICT and leaves nothing behind', async () => {
    const before = await snapshot();
    const result = await ownerGql(ADD_FIELD, { tableId: products._id, field: { name: 'sku', type: 'text', required: true } });
    expect(errorOf(result).extensions).toMatchObject({ code: 'CONFLICT', status: 409 });
    expect(errorOf(result).message).toContain('table has rows; add it as optional');
    expect(await snapshot()).toEqual(before);
  });

  it('adds a required unique field to an empty table as NOT NULL UNIQUE', async () => {
    const codes = await createTable('Codes');
    const table = (await gqlData(ownerGql, ADD_FIELD, { tableId: codes._id, field: { name: 'code', type: 'text', required: true, unique: true } }))
      .addTableField;
    expect(table.fields).toEqual([expect.objectContaining({ name: 'code', required: true, unique: true })]);
    const codesSql = await sqlNameOf(codes._id);
    expect((await columnsOf(codesSql)).find((c) => c.column_name === 'code')!.is_nullable).toBe('NO');
    await insertRow(codesSql, { _id: 'k1', code: 'A' });
    await expect(insertRow(codesSql, { _id: 'k2', code: 'A' })).rejects.toMatchObject({ code: '23505' });
    await expect(insertRow(codesSql, { _id: 'k3' })).rejects.toMatchObject({ code: '23502' });
  });

  it('adds a self-reference by the table _id with a real foreign key', async () => {
    const categories = await createTable('Categories');
    const table = (await gqlData(ownerGql, ADD_FIELD, { tableId: categories._id, field: { name: 'parent', type: 'reference', referenceTableId: categories._id } }))
      .addTableField;
    expect(table.fields[0].referenceTableId).toBe(categories._id);
    const categoriesSql = await sqlNameOf(categories._id);
    await insertRow(categoriesSql, { _id: 'root' });
    await insertRow(categoriesSql, { _id: 'leaf', parent: 'root' });
    await expect(insertRow(categoriesSql, { _id: 'lost', parent: 'nowhere' })).rejects.toMatchObject({ code: '23503' });
  });

  it.each([
    ['a name already used (any case)', { name: 'TITLE', type: 'text' }, 'CONFLICT', 'field.name: '],
    ['a reference to an unknown table', { name: 'maker', type: 'reference', referenceTableId: 'ghost' }, 'BAD_INPUT', 'field.referenceTableId: '],
    ['a name starting with _', { name: '_hidden', type: 'text' }, 'BAD_INPUT', 'field.name: '],
    ['an unknown type', { name: 'price', type: 'currency' }, 'BAD_INPUT', '"currency" at "field.type"; FieldType must be one of text, number'],
  ])('refuses %s and leaves nothing behind', async (_case, field, code, message) => {
    const before = await snapshot();
    const result = await ownerGql(ADD_FIELD, { tableId: products._id, field });
    expect(errorOf(result).extensions.code).toBe(code);
    expect(errorOf(result).message).toContain(message);
    expect(await snapshot()).toEqual(before);
  });

  it('answers NOT_FOUND for an unknown table', async () => {
    const result = await ownerGql(ADD_FIELD, { tableId: 'missing', field: { name: 'a', type: 'text' } });
    expect(errorOf(result).extensions.code).toBe('NOT_FOUND');
  });

  it('refuses a viewer with FORBIDDEN and leaves nothing behind', async () => {
    const before = await snapshot();
    const result = await viewerGql(ADD_FIELD, { tableId: products._id, field: { name: 'color', type: 'text' } });
    expect(errorOf(result).extensions.code).toBe('FORBIDDEN');
    expect(await snapshot()).toEqual(before);
  });
});

describe('deleteTable', () => {
  it('drops the SQL table, its records and its metadata, and audits it', async () => {
    const temp = await createTable('Temporary', [{ name: 'a', type: 'text' }, { name: 'b', type: 'number' }]);
    const sqlName = await sqlNameOf(temp._id);
    await insertRow(sqlName, { _id: 't1', a: 'x' });
    expect((await gqlData(ownerGql, DELETE, { id: temp._id, confirm: true })).deleteTable).toBe(true);
    expect(await sqlTableExists(sqlName)).toBe(false);
    expect(await db().selectFrom('app_fields').select('id').where('table_id', '=', temp._id).execute()).toEqual([]);
    expect(errorOf(await ownerGql(`query($id: ID!) { table(_id: $id) { _id } }`, { id: temp._id })).extensions.code).toBe('NOT_FOUND');
    const audit = await db().selectFrom('audit_events').select('action').where('resource_id', '=', temp._id).orderBy('id').execute();
    expect(audit.map((a) => a.action)).toEqual(['table.create', 'table.delete']);
  });

  it('deletes a table that references itself', async () => {
    const tree = await createTable('Tree', [{ name: 'parent', type: 'reference', referenceTableId: 'Tree' }]);
    const sqlName = await sqlNameOf(tree._id);
    await insertRow(sqlName, { _id: 'n1' });
    await insertRow(sqlName, { _id: 'n2', parent: 'n1' });
    expect((await gqlData(ownerGql, DELETE, { id: tree._id, confirm: true })).deleteTable).toBe(true);
    expect(await sqlTableExists(sqlName)).toBe(false);
  });

  it.each(['reference', 'multi-reference'])('refuses while another table holds a %s to it, then allows it once that is gone', async (type) => {
    const authors = await createTable(`Authors_${type.replace('-', '_')}`);
    const books = await createTable(`Books_${type.replace('-', '_')}`, [{ name: 'author', type, referenceTableId: authors._id }]);
    const before = await snapshot();
    const result = await ownerGql(DELETE, { id: authors._id, confirm: true });
    expect(errorOf(result).extensions).toMatchObject({ code: 'CONFLICT', status: 409 });
    expect(errorOf(result).message).toContain(`field 'author' of table 'Books_${type.replace('-', '_')}'`);
    expect(await snapshot()).toEqual(before);

    await gqlData(ownerGql, DELETE, { id: books._id, confirm: true });
    expect((await gqlData(ownerGql, DELETE, { id: authors._id, confirm: true })).deleteTable).toBe(true);
  });

  it('refuses while a hook is attached to the table', async () => {
    const audited = await createTable('Audited');
    await db()
      .insertInto('hooks')
      .values({
        id: 'hook-1',
        name: 'checkAudited',
        type: 'beforeSave',
        table_id: audited._id,
        content: 'async function run(instance) { return instance; }',
        content_sha256: 'x',
        version: 1,
        created_by: null,
        updated_by: null,
        updated_at: new Date(),
      })
      .execute();
    const before = await snapshot();
    const result = await ownerGql(DELETE, { id: audited._id, confirm: true });
    expect(errorOf(result).extensions.code).toBe('CONFLICT');
    expect(errorOf(result).message).toContain("'checkAudited'");
    expect(await snapshot()).toEqual(before);
    await db().deleteFrom('hooks').where('id', '=', 'hook-1').execute();
  });

  it('refuses confirm: false with BAD_INPUT and keeps the table', async () => {
    const kept = await createTable('KeptOnNo');
    const before = await snapshot();
    const result = await ownerGql(DELETE, { id: kept._id, confirm: false });
    expect(errorOf(result).extensions.code).toBe('BAD_INPUT');
    expect(errorOf(result).message).toContain('confirm: must be true');
    expect(await snapshot()).toEqual(before);
  });

  it.each([
    ['a viewer', () => viewerGql],
    ['a designer (config:delete is admin-only)', () => designerGql],
  ])('refuses %s with FORBIDDEN and keeps the table', async (_case, client) => {
    const kept = await createTable(`Kept${Math.random().toString(36).slice(2, 8)}`);
    const before = await snapshot();
    const result = await client()(DELETE, { id: kept._id, confirm: true });
    expect(errorOf(result).extensions.code).toBe('FORBIDDEN');
    expect(errorOf(result).message).toContain("'config:delete'");
    expect(await snapshot()).toEqual(before);
  });

  it('answers NOT_FOUND for an unknown table', async () => {
    const result = await ownerGql(DELETE, { id: 'missing', confirm: true });
    expect(errorOf(result).extensions.code).toBe('NOT_FOUND');
  });
});

const UPDATE_FIELD = `mutation($tableId: ID!, $field: String!, $name: String, $label: String, $description: String, $type: FieldType, $referenceTableId: ID, $required: Boolean, $unique: Boolean) {
  updateTableField(tableId: $tableId, field: $field, name: $name, label: $label, description: $description, type: $type, referenceTableId: $referenceTableId, required: $required, unique: $unique) {
    ${TABLE} fields { name label } } }`;
const DELETE_FIELD = `mutation($tableId: ID!, $field: String!, $confirm: Boolean!) { deleteTableField(tableId: $tableId, field: $field, confirm: $confirm) { ${TABLE} } }`;
const SET_ACCESS = 'mutation($t: ID!, $r: ID!, $a: TableAccessInput!) { setTableAccess(tableId: $t, roleId: $r, access: $a) { roleName } }';

/** Creates records through the table's generated GraphQL, one per value of field `field` (null: none given). */
async function addRecords(table: string, values: unknown[], field = 'v'): Promise<string[]> {
  const ids: string[] = [];
  for (const value of values) {
    const data = value === null ? {} : { [field]: value };
    ids.push((await gqlData(ownerGql, `mutation($d: ${table}Input!) { create${table}(data: $d) { _id } }`, { d: data }))[`create${table}`]._id);
  }
  return ids;
}

/** The values of `field` in creation order, as GraphQL reads them. */
async function valuesOf(table: string, field = 'v'): Promise<unknown[]> {
  const data = await gqlData(ownerGql, `{ list${table}(sort: [{ field: _createdAt }], limit: 500) { items { ${field} } } }`);
  return data[`list${table}`].items.map((item: Record<string, unknown>) => item[field]);
}

async function auditsOf(tableId: string, action: string) {
  return db().selectFrom('audit_events').selectAll().where('resource_id', '=', tableId).where('action', '=', action).orderBy('id').execute();
}

let conversionTables = 0;
/** A new table `Conv<n>` with one field `v` of `type` holding `values`. */
async function tableWith(type: string, values: unknown[], extra: Partial<FieldSpec> = {}) {
  const name = `Conv${conversionTables++}`;
  const table = await createTable(name, [{ name: 'v', type, ...extra }]);
  await addRecords(name, values);
  return { ...table, name };
}

describe('updateTableField', () => {
  it('renames a field: the column follows, records keep their values, and roles\' lists and filters follow in the same transaction', async () => {
    const table = await createTable('Renamed', [
      { name: 'title', type: 'text' },
      { name: 'amount', type: 'number' },
    ]);
    await addRecords('Renamed', [5, 7], 'amount');
    await gqlData(ownerGql, SET_ACCESS, {
      t: table._id,
      r: 'viewer',
      a: { read: { level: 'FILTER', filter: { _or: [{ amount: { gte: 5 } }, { title: { eq: 'x' } }] } }, create: { level: 'ALL' }, update: { level: 'NONE' }, delete: { level: 'NONE' }, hiddenFields: ['amount'], readOnlyFields: ['amount', 'title'] },
    });

    const renamed = (await gqlData(ownerGql, UPDATE_FIELD, { tableId: table._id, field: 'amount', name: 'total' })).updateTableField;
    expect(renamed.fields.map((f: { name: string }) => f.name)).toEqual(['title', 'total']);
    expect(await valuesOf('Renamed', 'total')).toEqual([5, 7]);
    expect((await columnsOf(await sqlNameOf(table._id))).map((c) => c.column_name)).toContain('total');
    const { table: read } = await gqlData(ownerGql, 'query($id: ID!) { table(_id: $id) { access { roleName read { level filter } hiddenFields readOnlyFields } } }', { id: table._id });
    expect(read.access.find((a: { roleName: string }) => a.roleName === 'viewer')).toEqual({
      roleName: 'viewer',
      read: { level: 'FILTER', filter: { _or: [{ total: { gte: 5 } }, { title: { eq: 'x' } }] } },
      hiddenFields: ['total'],
      readOnlyFields: ['total', 'title'],
    });
    expect((await auditsOf(table._id, 'table.field.update')).at(-1)!.details).toMatchObject({ field: 'total', changes: { name: { from: 'amount', to: 'total' } } });
    expect((await auditsOf(table._id, 'table.access.set')).at(-1)!.details).toMatchObject({ role: 'viewer', hiddenFields: ['total'], reason: "field 'amount' renamed to 'total'" });
  });

  it('changes a label and a description without touching the column; the old description-only call still works', async () => {
    const table = await createTable('Labelled', [{ name: 'dueDate', type: 'date' }]);
    const changed = (await gqlData(ownerGql, UPDATE_FIELD, { tableId: table._id, field: 'dueDate', label: 'Due date', description: 'When it is due' })).updateTableField;
    expect(changed.fields[0]).toMatchObject({ name: 'dueDate', label: 'Due date', description: 'When it is due', type: 'date' });
    const old = await gqlData(ownerGql, 'mutation($t: ID!) { updateTableField(tableId: $t, field: "duedate", description: "Due") { fields { description label } } }', { t: table._id });
    expect(old.updateTableField.fields).toEqual([{ description: 'Due', label: 'Due date' }]);
    expect((await auditsOf(table._id, 'table.field.update')).map((a) => a.details)).toEqual([
      expect.objectContaining({ field: 'dueDate', changes: { label: { changed: true }, description: { changed: true } } }),
      expect.objectContaining({ field: 'dueDate', changes: { description: { changed: true } } }),
    ]);
    // Giving what the field already has changes nothing and audits nothing.
    await gqlData(ownerGql, UPDATE_FIELD, { tableId: table._id, field: 'dueDate', label: 'Due date', type: 'date', required: false });
    expect(await auditsOf(table._id, 'table.field.update')).toHaveLength(2);
  });

  it.each([
    ['text', 'number', ['12.5', ' -3 ', '1e3', null, ''], [12.5, -3, 1000, null, null]],
    ['text', 'boolean', ['true', 'FALSE'], [true, false]],
    ['text', 'date', ['2024-05-31', ' 2024-02-29 '], ['2024-05-31', '2024-02-29']],
    ['text', 'datetime', ['2024-05-31T12:00:00+02:00'], ['2024-05-31T10:00:00.000Z']],
    ['text', 'json', ['{"a":1}', '[1,2]', '"x"'], [{ a: 1 }, [1, 2], 'x']],
    ['number', 'text', [12.5, 3, -0.1], ['12.5', '3', '-0.1']],
    ['number', 'json', [1.5], [1.5]],
    ['boolean', 'text', [true, false], ['true', 'false']],
    ['boolean', 'json', [true], [true]],
    ['date', 'text', ['2024-05-31'], ['2024-05-31']],
    ['date', 'datetime', ['2024-05-31'], ['2024-05-31T00:00:00.000Z']],
    ['datetime', 'text', ['2024-05-31T10:00:00Z'], ['2024-05-31T10:00:00.000Z']],
    ['datetime', 'date', ['2024-05-31T00:00:00Z'], ['2024-05-31']],
    ['json', 'text', [{ a: 1 }, 'hi', 2], ['{"a": 1}', 'hi', '2']],
    ['json', 'number', [3, '4.5', ''], [3, 4.5, null]],
    ['number', 'boolean', [], []],
  ])('converts %s to %s, keeping every value', async (from, to, stored, expected) => {
    const table = await tableWith(from, stored);
    const changed = (await gqlData(ownerGql, UPDATE_FIELD, { tableId: table._id, field: 'v', type: to })).updateTableField;
    expect(changed.fields[0].type).toBe(to);
    expect(await valuesOf(table.name)).toEqual(expected);
    expect((await auditsOf(table._id, 'table.field.update')).at(-1)!.details).toMatchObject({ changes: { type: { from, to } } });
  });

  it.each([
    ['text', 'number', ['1', 'twelve', 'ten'], '2 values of field \'v\' cannot change from text to number, e.g. "t'],
    ['text', 'boolean', ['yes'], '1 value of field \'v\' cannot change from text to boolean, e.g. "yes"'],
    ['text', 'date', ['31/05/2024'], 'e.g. "31/05/2024"'],
    ['text', 'datetime', ['2024-05-31 12:00'], 'e.g. "2024-05-31 12:00"'],
    ['text', 'json', ['not json'], 'e.g. "not json"'],
    ['number', 'boolean', [1], 'cannot change from number to boolean, e.g. "1"'],
    ['number', 'date', [20240531], 'cannot change from number to date'],
    ['boolean', 'number', [true], 'cannot change from boolean to number'],
    ['datetime', 'date', ['2024-05-31T10:00:00Z'], 'e.g. "2024-05-31T10:00:00.000Z"'],
    ['json', 'number', [{ a: 1 }], 'e.g. "{\\"a\\": 1}"'],
    ['text', 'reference', ['x'], "field 'v' holds a value in 1 record: a reference field changes to or from another type"],
  ])('refuses %s to %s while a value does not convert, naming it, and changes nothing', async (from, to, stored, message) => {
    const table = await tableWith(from, stored);
    const sqlName = await sqlNameOf(table._id);
    const [columnsBefore, valuesBefore, audits] = [await columnsOf(sqlName), await valuesOf(table.name), (await snapshot()).audits];
    const result = await ownerGql(UPDATE_FIELD, { tableId: table._id, field: 'v', type: to, ...(to === 'reference' ? { referenceTableId: table._id } : {}) });
    expect(errorOf(result).extensions).toMatchObject({ code: 'BAD_INPUT', details: { field: 'type' } });
    expect(errorOf(result).message).toContain(message);
    expect(await columnsOf(sqlName)).toEqual(columnsBefore);
    expect(await valuesOf(table.name)).toEqual(valuesBefore);
    expect((await snapshot()).audits).toBe(audits);
  });

  it('names no stored value to a caller whose role bounds the records it reaches, only how many do not convert', async () => {
    const table = await tableWith('text', ['secret salary']);
    const result = await designerGql(UPDATE_FIELD, { tableId: table._id, field: 'v', type: 'number' });
    expect(errorOf(result).message).toBe("type: 1 value of field 'v' cannot change from text to number; change or clear it first");
  });

  it('changes a field without values to or from a reference, and a reference to another table', async () => {
    const customers = await createTable('Buyers', [{ name: 'email', type: 'text' }]);
    const sellers = await createTable('Sellers', [{ name: 'email', type: 'text' }]);
    const table = await tableWith('text', [null]);
    const toReference = (await gqlData(ownerGql, UPDATE_FIELD, { tableId: table._id, field: 'v', type: 'reference', referenceTableId: 'Buyers' })).updateTableField;
    expect(toReference.fields[0]).toMatchObject({ type: 'reference', referenceTableId: customers._id });
    const [buyer] = await addRecords('Buyers', ['a@example.com'], 'email');
    await addRecords(table.name, [buyer]);
    expect(errorOf(await ownerGql(UPDATE_FIELD, { tableId: table._id, field: 'v', referenceTableId: sellers._id })).message).toContain('holds a value in 1 record');
    // A reference becomes a list of one id and back; the foreign key goes and comes back.
    await gqlData(ownerGql, UPDATE_FIELD, { tableId: table._id, field: 'v', type: 'multi-reference' });
    expect(await valuesOf(table.name)).toEqual([null, [buyer]]);
    await gqlData(ownerGql, UPDATE_FIELD, { tableId: table._id, field: 'v', type: 'reference' });
    expect(await valuesOf(table.name)).toEqual([null, buyer]);
    const deleteBuyer = await ownerGql('mutation($id: ID!) { deleteBuyers(Id: $id) }', { id: buyer });
    expect(errorOf(deleteBuyer).extensions.code).toBe('CONFLICT');
    const missing = await ownerGql(UPDATE_FIELD, { tableId: table._id, field: 'v', type: 'reference', referenceTableId: undefined, name: undefined });
    expect(missing.body.errors).toBeUndefined();
    const plain = await tableWith('text', []);
    expect(errorOf(await ownerGql(UPDATE_FIELD, { tableId: plain._id, field: 'v', type: 'reference' })).message).toBe('referenceTableId: is required for reference fields');
  });

  it('refuses a list of two ids becoming one reference', async () => {
    const targets = await createTable('Targets', [{ name: 'n', type: 'number' }]);
    const ids = await addRecords('Targets', [1, 2], 'n');
    const table = await tableWith('multi-reference', [ids], { referenceTableId: targets._id });
    const result = await ownerGql(UPDATE_FIELD, { tableId: table._id, field: 'v', type: 'reference' });
    expect(errorOf(result).message).toContain("1 value of field 'v' cannot change from multi-reference to reference");
  });

  it('makes a field required only when every record has a value, naming how many do not', async () => {
    const table = await tableWith('text', ['a', null, '  ']);
    const refused = await ownerGql(UPDATE_FIELD, { tableId: table._id, field: 'v', required: true });
    expect(errorOf(refused).extensions).toMatchObject({ code: 'CONFLICT', details: { field: 'required', records: 2 } });
    expect(errorOf(refused).message).toBe("required: 2 records have no value in 'v'; fill them first or keep the field optional");
    await db().updateTable(await sqlNameOf(table._id) as never).set({ v: 'filled' } as never).execute();
    await gqlData(ownerGql, UPDATE_FIELD, { tableId: table._id, field: 'v', required: true });
    expect((await columnsOf(await sqlNameOf(table._id))).find((c) => c.column_name === 'v')!.is_nullable).toBe('NO');
    await gqlData(ownerGql, UPDATE_FIELD, { tableId: table._id, field: 'v', required: false });
    await addRecords(table.name, [null]);
  });

  it('makes a field unique only without repeated values, saying how many repeat but not which', async () => {
    const table = await tableWith('number', [5, 5, 6, 6, 7]);
    const refused = await ownerGql(UPDATE_FIELD, { tableId: table._id, field: 'v', unique: true });
    expect(errorOf(refused).extensions).toMatchObject({ code: 'CONFLICT', details: { field: 'unique', values: 2 } });
    expect(errorOf(refused).message).toBe("unique: 2 values appear in more than one record of 'v'; make them distinct first");
    const distinct = await tableWith('number', [1, 2]);
    await gqlData(ownerGql, UPDATE_FIELD, { tableId: distinct._id, field: 'v', unique: true });
    expect(errorOf(await ownerGql(`mutation { create${distinct.name}(data: { v: 1 }) { _id } }`)).extensions.code).toBe('CONFLICT');
    await gqlData(ownerGql, UPDATE_FIELD, { tableId: distinct._id, field: 'v', unique: false });
    await addRecords(distinct.name, [1]);
    expect(await valuesOf(distinct.name)).toEqual([1, 2, 1]);
  });

  it("refuses a type change that a role's filter no longer fits, naming the role", async () => {
    const table = await tableWith('number', [5]);
    await gqlData(ownerGql, SET_ACCESS, { t: table._id, r: 'viewer', a: { read: { level: 'FILTER', filter: { v: { gte: 5 } } }, create: { level: 'NONE' }, update: { level: 'NONE' }, delete: { level: 'NONE' } } });
    const result = await ownerGql(UPDATE_FIELD, { tableId: table._id, field: 'v', type: 'text' });
    expect(errorOf(result).extensions).toMatchObject({ code: 'CONFLICT', details: { role: 'viewer' } });
    expect(errorOf(result).message).toContain("A data-access rule of role 'viewer'");
    expect(await valuesOf(table.name)).toEqual([5]);
  });

  it.each([
    ['a name another field has', { name: 'Other' }, 'CONFLICT', "name: a field named 'other' already exists"],
    ['a reserved name', { name: 'oid' }, 'BAD_INPUT', 'reserved name'],
    ['an unknown type', { type: 'money' }, 'BAD_INPUT', ''],
    ['an unknown field', { field: 'nope' }, 'NOT_FOUND', "has no field 'nope'"],
    ['a referenced table for a field that is no reference', { referenceTableId: 'Shop' }, 'BAD_INPUT', 'referenceTableId: is only allowed on reference and multi-reference fields'],
  ])('refuses %s', async (_what, change, code, message) => {
    const table = await createTable(`Refusing${conversionTables++}`, [{ name: 'v', type: 'text' }, { name: 'other', type: 'text' }]);
    const result = await ownerGql(UPDATE_FIELD, { tableId: table._id, field: 'v', ...change });
    expect(errorOf(result).extensions.code).toBe(code);
    expect(errorOf(result).message).toContain(message);
  });

  it('refuses a viewer with FORBIDDEN', async () => {
    const table = await tableWith('text', []);
    expect(errorOf(await viewerGql(UPDATE_FIELD, { tableId: table._id, field: 'v', name: 'w' })).extensions.code).toBe('FORBIDDEN');
  });
});

describe('deleteTableField', () => {
  it('drops the column and its values, takes it out of roles\' lists and audits how many values went', async () => {
    const table = await createTable('Trimmed', [
      { name: 'title', type: 'text' },
      { name: 'note', type: 'text' },
    ]);
    await addRecords('Trimmed', ['a', 'b', null], 'note');
    await gqlData(ownerGql, SET_ACCESS, { t: table._id, r: 'viewer', a: { read: { level: 'ALL' }, create: { level: 'ALL' }, update: { level: 'NONE' }, delete: { level: 'NONE' }, hiddenFields: ['note'], readOnlyFields: ['title', 'note'] } });
    const { table: counted } = await gqlData(ownerGql, 'query($id: ID!) { table(_id: $id) { recordCount all: recordCount withNote: recordCount(field: "note") } }', { id: table._id });
    expect(counted).toEqual({ recordCount: 3, all: 3, withNote: 2 });

    const result = (await gqlData(ownerGql, DELETE_FIELD, { tableId: table._id, field: 'note', confirm: true })).deleteTableField;
    expect(result.fields.map((f: { name: string }) => f.name)).toEqual(['title']);
    expect((await columnsOf(await sqlNameOf(table._id))).map((c) => c.column_name)).not.toContain('note');
    const { table: read } = await gqlData(ownerGql, 'query($id: ID!) { table(_id: $id) { access { roleName hiddenFields readOnlyFields } } }', { id: table._id });
    expect(read.access.find((a: { roleName: string }) => a.roleName === 'viewer')).toEqual({ roleName: 'viewer', hiddenFields: [], readOnlyFields: ['title'] });
    expect((await auditsOf(table._id, 'table.field.delete'))[0]!.details).toEqual({ name: 'Trimmed', field: { name: 'note', type: 'text', required: false, unique: false }, valuesDeleted: 2 });
    expect(errorOf(await ownerGql('{ listTrimmed { items { note } } }')).message).toContain('Cannot query field "note"');
  });

  it("refuses while a role's filter names the field, naming the role and the action", async () => {
    const table = await tableWith('text', ['a']);
    await gqlData(ownerGql, SET_ACCESS, { t: table._id, r: 'viewer', a: { read: { level: 'ALL' }, create: { level: 'ALL' }, update: { level: 'FILTER', filter: { v: { eq: 'a' } } }, delete: { level: 'NONE' } } });
    const before = await snapshot();
    const result = await ownerGql(DELETE_FIELD, { tableId: table._id, field: 'v', confirm: true });
    expect(errorOf(result).extensions).toMatchObject({ code: 'CONFLICT', details: { role: 'viewer', action: 'update' } });
    expect(errorOf(result).message).toBe(`The update rule of role 'viewer' on '${table.name}' filters on 'v': change that rule first`);
    expect(await snapshot()).toEqual(before);
  });

  it.each([
    ['confirm: false', () => ownerGql, false, 'BAD_INPUT'],
    ['a designer (config:delete is admin-only)', () => designerGql, true, 'FORBIDDEN'],
  ])('refuses %s and keeps the field', async (_what, client, confirm, code) => {
    const table = await tableWith('text', ['a']);
    const before = await snapshot();
    expect(errorOf(await client()(DELETE_FIELD, { tableId: table._id, field: 'v', confirm })).extensions.code).toBe(code);
    expect(await snapshot()).toEqual(before);
  });

  it('counts records only for a caller every record is open to', async () => {
    const table = await tableWith('text', ['a']);
    const { table: read } = await gqlData(designerGql, 'query($id: ID!) { table(_id: $id) { recordCount } }', { id: table._id });
    expect(read.recordCount).toBeNull();
  });
});

describe('fieldUsage', () => {
  const FEATURE = [
    "import { useState } from 'react';",
    "import { useMutation, useQuery } from '@trellis/runtime';",
    "import { Button, Input, Stack, Table } from '@trellis/ui';",
    '',
    'const LIST = `query { listShop(filter: { amount: { gte: 1 } }, sort: [{ field: amount }]) { items { _id title amount } } }`;',
    'const ADD = `mutation Add($data: ShopInput!) { createShop(data: $data) { _id } }`;',
    '',
    'export default function ShopPage() {',
    '  const { data } = useQuery(LIST);',
    '  const [add] = useMutation(ADD);',
    "  const [title, setTitle] = useState('');",
    '  const save = () => add({ data: { title, amount: 1 } });',
    '  return (',
    '    <Stack>',
    '      <Input label="Title" value={title} onChange={(event) => setTitle(event.target.value)} />',
    '      <Button onClick={save}>Add</Button>',
    "      <Table rows={data?.listShop.items ?? []} columns={[{ key: 'title', header: 'Title' }]} />",
    '    </Stack>',
    '  );',
    '}',
    '',
  ].join('\n');
  const USAGE = 'query($t: ID!, $f: String) { fieldUsage(tableId: $t, field: $f) { kind _id name detail line } }';
  let shop: { _id: string };
  let hooks: Record<string, string>;

  beforeAll(async () => {
    shop = await createTable('Shop', [
      { name: 'title', type: 'text' },
      { name: 'amount', type: 'number' },
      { name: 'note', type: 'text' },
    ]);
    await gqlData(ownerGql, 'mutation($c: String!) { createFeature(_id: "shop-page", name: "Shop page", customCode: $c, status: "published") { _id } }', { c: FEATURE });
    const hook = async (name: string, type: string, content: string, tableId?: string) =>
      (await gqlData(ownerGql, 'mutation($n: String!, $y: HookType!, $t: ID, $c: String!) { createHook(name: $n, type: $y, tableId: $t, content: $c) { _id } }', { n: name, y: type, t: tableId, c: content })).createHook._id;
    hooks = {
      check: await hook('shop-check', 'beforeSave', "async function (instance) {\n  if (instance.amount < 0) throw new Error('Negative');\n}", shop._id),
      pay: await hook('shop-pay', 'webHook', "async function (instance) {\n  await db.update('shop', instance.id, { amount: 2 });\n  return db.find('Shop', { note: { eq: 'x' } });\n}"),
    };
    await gqlData(ownerGql, SET_ACCESS, { t: shop._id, r: 'viewer', a: { read: { level: 'ALL' }, create: { level: 'NONE' }, update: { level: 'NONE' }, delete: { level: 'NONE' }, hiddenFields: ['amount'] } });
  });

  it('lists the features, hooks and rules that use a field, each with how and where', async () => {
    const { fieldUsage } = await gqlData(ownerGql, USAGE, { t: shop._id, f: 'amount' });
    const viewer = (await gqlData(ownerGql, '{ roles { _id name } }')).roles.find((role: { name: string }) => role.name === 'viewer');
    expect(fieldUsage).toEqual([
      { kind: 'FEATURE', _id: 'shop-page', name: 'Shop page', detail: 'filters on amount', line: 5 },
      { kind: 'FEATURE', _id: 'shop-page', name: 'Shop page', detail: 'sorts on amount', line: 5 },
      { kind: 'FEATURE', _id: 'shop-page', name: 'Shop page', detail: 'selects amount', line: 5 },
      { kind: 'FEATURE', _id: 'shop-page', name: 'Shop page', detail: 'object key amount (variables of a document)', line: 12 },
      { kind: 'HOOK', _id: hooks.check, name: 'shop-check', detail: 'instance.amount', line: 2 },
      { kind: 'HOOK', _id: hooks.pay, name: 'shop-pay', detail: "db.update('Shop', …) names amount", line: 2 },
      { kind: 'ACCESS_RULE', _id: viewer._id, name: 'viewer', detail: 'hidden from viewer', line: null },
    ]);
  });

  it('lists only what names the field: another field of the same table has other uses', async () => {
    const { fieldUsage } = await gqlData(ownerGql, USAGE, { t: shop._id, f: 'note' });
    expect(fieldUsage).toEqual([{ kind: 'HOOK', _id: hooks.pay, name: 'shop-pay', detail: "db.find('Shop', …) names note", line: 3 }]);
  });

  it('without a field, lists what uses the table', async () => {
    const { fieldUsage } = await gqlData(ownerGql, USAGE, { t: 'shop' });
    expect(fieldUsage).toEqual([
      { kind: 'FEATURE', _id: 'shop-page', name: 'Shop page', detail: 'listShop', line: 5 },
      { kind: 'FEATURE', _id: 'shop-page', name: 'Shop page', detail: 'createShop', line: 6 },
      { kind: 'HOOK', _id: hooks.check, name: 'shop-check', detail: 'runs on every save of Shop (beforeSave)', line: 1 },
      { kind: 'HOOK', _id: hooks.pay, name: 'shop-pay', detail: "db.update('Shop', …)", line: 2 },
      { kind: 'HOOK', _id: hooks.pay, name: 'shop-pay', detail: "db.find('Shop', …)", line: 3 },
    ]);
  });

  it('reads the published version too, when the draft no longer uses the field', async () => {
    const draft = FEATURE.replace('items { _id title amount }', 'items { _id title }');
    await gqlData(ownerGql, 'mutation($c: String!) { updateFeature(_id: "shop-page", customCode: $c, status: "draft") { _id } }', { c: draft });
    const { fieldUsage } = await gqlData(ownerGql, USAGE, { t: shop._id, f: 'amount' });
    expect(fieldUsage.filter((use: { kind: string }) => use.kind === 'FEATURE').map((use: { detail: string }) => use.detail)).toEqual([
      'filters on amount',
      'sorts on amount',
      'object key amount (variables of a document)',
      'filters on amount (published version)',
      'sorts on amount (published version)',
      'selects amount (published version)',
      'object key amount (variables of a document) (published version)',
    ]);
  });

  it('answers NOT_FOUND for an unknown field, naming the fields there are', async () => {
    const missing = errorOf(await ownerGql(USAGE, { t: shop._id, f: 'nope' }));
    expect(missing.extensions.code).toBe('NOT_FOUND');
    expect(missing.message).toBe("Table 'Shop' has no field 'nope'");
  });
});
