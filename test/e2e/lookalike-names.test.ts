import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 18, item 6: one rule for every name people read. A name with an invisible or bidirectional
 * control character is refused, and so is a name whose confusable skeleton (Unicode TR39) equals
 * the name of another record of the same kind: BAD_INPUT naming the name it clashes with.
 */

const PAGE = 'export default function Page() {\n  return <p>Payroll</p>;\n}\n';
const CREATE_FEATURE = 'mutation($n: String!, $c: String!) { createFeature(name: $n, customCode: $c) { _id name } }';
const UPSERT_MENU = 'mutation($n: String!, $e: [MenuEntryInput!]!) { upsertMenu(name: $n, entries: $e) { menu { _id } } }';
const CREATE_USER = 'mutation($e: String!, $n: String!) { createUser(email: $e, password: "password-123", name: $n) { _id } }';

let server: TestServer;
let gql: ReturnType<typeof graphqlClient>;
let payrollId: string;
let otherFeatureId: string;
let ordersId: string;

beforeAll(async () => {
  server = await startTestServer();
  gql = graphqlClient(server.url, await login(server.url));
  payrollId = (await gqlData(gql, CREATE_FEATURE, { n: 'Payroll', c: PAGE })).createFeature._id;
  otherFeatureId = (await gqlData(gql, CREATE_FEATURE, { n: 'Timesheets', c: PAGE })).createFeature._id;
  await gqlData(gql, UPSERT_MENU, { n: 'Main', e: [{ label: 'Payroll', path: `/feature/${payrollId}` }] });
  ordersId = (await gqlData(gql, 'mutation { createTable(name: "Payroll", fields: [{ name: "total", type: "number" }]) { _id } }')).createTable._id;
  await gqlData(gql, 'mutation { createHook(name: "sync-payroll", type: "webHook", content: "async () => 1") { _id } }');
});
afterAll(async () => server?.close());

function expectBadInput(result: { body: { errors?: Array<{ message: string; extensions: { code: string } }> } }, message: string | RegExp) {
  expect(result.body.errors?.[0]?.extensions.code, JSON.stringify(result.body)).toBe('BAD_INPUT');
  if (typeof message === 'string') expect(result.body.errors![0]!.message).toContain(message);
  else expect(result.body.errors![0]!.message).toMatch(message);
}

describe('invisible and bidirectional characters', () => {
  const names = [
    ['a zero-width space', 'Pay\u200Broll', 'U+200B'],
    ['a right-to-left override', '\u202EPayroll', 'U+202E'],
    ['a right-to-left isolate', 'Pay\u2067roll', 'U+2067'],
    ['a no-break space', 'Pay\u00A0roll', 'U+00A0'],
    ['a Hangul filler', '\u3164', 'U+3164'],
  ] as const;

  it.each(names)('are refused in a feature name: %s', async (_what, name, codePoint) => {
    expectBadInput(await gql(CREATE_FEATURE, { n: name, c: PAGE }), `name: must not contain ${codePoint}`);
  });

  it.each(names)('are refused in a menu name: %s', async (_what, name, codePoint) => {
    expectBadInput(await gql(UPSERT_MENU, { n: name, e: [] }), `name: must not contain ${codePoint}`);
  });

  it.each(names)('are refused in a menu entry label: %s', async (_what, name, codePoint) => {
    expectBadInput(await gql(UPSERT_MENU, { n: 'Side', e: [{ label: name, path: `/feature/${payrollId}` }] }), `entries.0.label: must not contain ${codePoint}`);
  });

  it.each(names)("are refused in a user's display name: %s", async (_what, name, codePoint) => {
    expectBadInput(await gql(CREATE_USER, { e: `hidden-${codePoint}@example.com`, n: name }), `name: must not contain ${codePoint}`);
  });

  it('are refused in a feature rename too', async () => {
    const result = await gql('mutation($id: ID!, $n: String) { updateFeature(_id: $id, name: $n) { _id } }', { id: otherFeatureId, n: 'Time\u200Dsheets' });
    expectBadInput(result, 'name: must not contain U+200D');
  });
});

describe('names that look like an existing one', () => {
  it.each([
    ['a feature (Cyrillic а)', CREATE_FEATURE, { n: 'P\u0430yroll', c: PAGE }, "name: looks the same as the existing feature 'Payroll'"],
    ['a feature (digits for letters)', CREATE_FEATURE, { n: 'PAYRO11', c: PAGE }, "name: looks the same as the existing feature 'Payroll'"],
    ['a feature (fullwidth letters)', CREATE_FEATURE, { n: '\uFF30ayroll', c: PAGE }, "name: looks the same as the existing feature 'Payroll'"],
    ['a menu', UPSERT_MENU, { n: 'M\u0430in', e: [] }, "name: looks the same as the existing menu 'Main'"],
    ['a role', 'mutation { createRole(name: "adrnin") { _id } }', {}, "name: looks the same as the existing role 'admin'"],
    ["a user's display name", CREATE_USER, { e: 'impostor@example.com', n: '\u039Fwner' }, "name: looks the same as the existing user 'Owner'"],
    ['a table', 'mutation { createTable(name: "PayroII") { _id } }', {}, "name: looks the same as the existing table 'Payroll'"],
    ['a hook', 'mutation { createHook(name: "sync-payro11", type: "webHook", content: "async () => 1") { _id } }', {}, "name: looks the same as the existing hook 'sync-payroll'"],
  ])('is refused with BAD_INPUT naming the clash: %s', async (_what, mutation, variables, message) => {
    expectBadInput(await gql(mutation, variables), message);
  });

  it('is refused for a field beside the fields of its table', async () => {
    const result = await gql('mutation($t: ID!) { addTableField(tableId: $t, field: { name: "tota1", type: "number" }) { _id } }', { t: ordersId });
    expectBadInput(result, "field.name: looks the same as the existing field 'total'");
  });

  it('is refused for two entries of one menu', async () => {
    const entries = [
      { label: 'Payroll', path: `/feature/${payrollId}` },
      { label: 'P\u0430yroll', path: `/feature/${otherFeatureId}` },
    ];
    expectBadInput(await gql(UPSERT_MENU, { n: 'Side', e: entries }), "entries.1.label: looks the same as the label 'Payroll' of entry 0");
  });

  it('is refused when a feature is renamed to look like another', async () => {
    const clash = await gql('mutation($id: ID!, $n: String) { updateFeature(_id: $id, name: $n) { _id } }', { id: otherFeatureId, n: 'Payro\u217C\u217C' });
    expectBadInput(clash, "name: looks the same as the existing feature 'Payroll'");
  });

  it('lets a record keep a name that looks like its own, and distinct names through', async () => {
    const renamed = await gqlData(gql, 'mutation($id: ID!) { updateFeature(_id: $id, name: "PAYROLL") { name } }', { id: payrollId });
    expect(renamed.updateFeature.name).toBe('PAYROLL');
    await gqlData(gql, UPSERT_MENU, { n: 'main', e: [{ label: 'Payroll', path: `/feature/${payrollId}` }] });
    expect((await gqlData(gql, CREATE_FEATURE, { n: 'Payroll report', c: PAGE })).createFeature.name).toBe('Payroll report');
    expect((await gqlData(gql, CREATE_FEATURE, { n: 'Café', c: PAGE })).createFeature.name).toBe('Café');
  });
});
