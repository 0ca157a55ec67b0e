import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The closed sets of the builder schema over HTTP (issue 23): enums where every value is a
 * GraphQL name, written unquoted, as variables, or quoted as documents wrote them while they were
 * scalars; scalars for the others, which take a value that is a name unquoted too. Wrong values are
 * refused naming the allowed ones.
 */

let server: TestServer;
let gql: ReturnType<typeof graphqlClient>;
let tableId: string;

const ENUMS: Record<string, string[]> = {
  HookType: ['beforeSave', 'afterSave', 'webHook'],
  HookRunOutcome: ['ok', 'refused', 'error', 'timeout', 'memory'],
  WebhookSigningScheme: ['stripe', 'github'],
  FeatureStatus: ['draft', 'published'],
  AuditOutcome: ['ok', 'error', 'denied'],
};
const OUTCOME_RULE = 'HookRunOutcome must be one of ok, refused, error, timeout, memory';
const SCOPE_RULE = 'Scope must be one of config:read, features:write, tables:write, menus:write, hooks:write, roles:write, env:write, config:delete';

beforeAll(async () => {
  // A CPU limit of 50 ms makes the endless webhook a timeout quickly.
  server = await startTestServer({ TRELLIS_HOOK_CPU_MS: '50' });
  gql = graphqlClient(server.url, await login(server.url));
  await gqlData(gql, 'mutation { createHook(name: "fails", type: webHook, content: "async function () { throw new Error(\\"no\\"); }") { _id } }');
  await gqlData(gql, 'mutation { createHook(name: "spins", type: "webHook", content: "async function () { for (;;) {} }") { _id } }');
  for (const name of ['fails', 'spins']) expect((await postJson(`${server.url}/api/webhook/${name}`, {})).status).toBe(500);
  await server.server.services.hookRuntime.flushRunLog();
  tableId = (await gqlData(gql, 'mutation { createTable(name: "Notes", fields: [{ name: "title", type: text }]) { _id } }')).createTable._id;
});
afterAll(async () => server?.close());

async function introspected(name: string) {
  const { __type } = await gqlData(gql, 'query($name: String!) { __type(name: $name) { kind description enumValues { name } } }', { name });
  return __type;
}

/** A request error (400 under application/graphql-response+json) with this one message, as BAD_INPUT. */
function expectRefused(result: { status: number; body: any }, message: string) { // eslint-disable-line @typescript-eslint/no-explicit-any
  expect(result.status).toBe(400);
  expect(result.body.data).toBeUndefined();
  expect(result.body.errors).toEqual([expect.objectContaining({ message, extensions: { code: 'BAD_INPUT', status: 400 } })]);
}

describe('introspection', () => {
  it.each(Object.entries(ENUMS))('shows %s as an ENUM with its values', async (name, values) => {
    expect(await introspected(name)).toMatchObject({ kind: 'ENUM', enumValues: values.map((value) => ({ name: value })) });
  });

  it.each([
    ['FieldType', 'multi-reference', '"multi-reference"'],
    ['Scope', 'config:delete', '"config:read"'],
    ['Permission', 'ai_designer', '"config:read"'],
  ])('keeps %s a SCALAR whose description lists its values and how to write them', async (name, value, quoted) => {
    const type = await introspected(name);
    expect(type).toMatchObject({ kind: 'SCALAR', enumValues: null });
    expect(type.description).toContain(value);
    expect(type.description).toContain(`Written as a string in a document (${quoted})`);
  });
});

describe('enum values', () => {
  it('filters the run log by an unquoted outcome, and answers outcomes as the same strings', async () => {
    const { timeout, error } = await gqlData(gql, '{ timeout: hookRuns(outcome: timeout) { items { hookName outcome } } error: hookRuns(outcome: error) { items { hookName outcome } } }');
    expect(timeout.items).toEqual([{ hookName: 'spins', outcome: 'timeout' }]);
    expect(error.items).toEqual([{ hookName: 'fails', outcome: 'error' }]);
  });

  it('still takes the quoted form that documents wrote while the sets were scalars', async () => {
    const { hookRuns } = await gqlData(gql, '{ hookRuns(outcome: "timeout") { items { hookName } } }');
    expect(hookRuns.items).toEqual([{ hookName: 'spins' }]);
    await gqlData(gql, 'mutation { createFeature(_id: "quoted", name: "Quoted", customCode: "export default () => null;") { _id } }');
    const { updateFeature } = await gqlData(gql, 'mutation { updateFeature(_id: "quoted", status: "published") { status publishedVersion } }');
    expect(updateFeature).toEqual({ status: 'published', publishedVersion: 2 });
  });

  it('takes a variable as its string', async () => {
    const { hookRuns } = await gqlData(gql, 'query($outcome: HookRunOutcome) { hookRuns(outcome: $outcome) { items { hookName } } }', { outcome: 'timeout' });
    expect(hookRuns.items).toEqual([{ hookName: 'spins' }]);
    const { hooks } = await gqlData(gql, 'query($type: HookType) { hooks(type: $type) { name type } }', { type: 'webHook' });
    expect(hooks).toEqual([{ name: 'fails', type: 'webHook' }, { name: 'spins', type: 'webHook' }]);
  });

  it.each([
    ['an unknown value', '{ hookRuns(outcome: slow) { nextCursor } }', {}, `${OUTCOME_RULE}; got slow`],
    ['an unknown quoted value', '{ hookRuns(outcome: "slow") { nextCursor } }', {}, `${OUTCOME_RULE}; got "slow"`],
    ['a value in another letter case', '{ hookRuns(outcome: TIMEOUT) { nextCursor } }', {}, `${OUTCOME_RULE}; got TIMEOUT`],
    ['an unknown variable', 'query($o: HookRunOutcome) { hookRuns(outcome: $o) { nextCursor } }', { o: 'slow' }, `Variable "$o" got invalid value "slow"; ${OUTCOME_RULE}`],
  ])('refuses %s naming the allowed values', async (_case, query, variables, message) => {
    expectRefused(await gql(query, variables), message);
  });
});

describe('closed sets kept as scalars', () => {
  it('take a value that is a GraphQL name unquoted, and the others quoted', async () => {
    const { addTableField } = await gqlData(
      gql,
      'mutation($t: ID!) { addTableField(tableId: $t, field: { name: "rank", type: number }) { fields { name type } } }',
      { t: tableId },
    );
    expect(addTableField.fields).toEqual([{ name: 'title', type: 'text' }, { name: 'rank', type: 'number' }]);
    const { withLinks } = await gqlData(
      gql,
      'mutation($t: ID!) { withLinks: addTableField(tableId: $t, field: { name: "links", type: "multi-reference", referenceTableId: $t }) { fields { type } } }',
      { t: tableId },
    );
    expect(withLinks.fields.at(-1)).toEqual({ type: 'multi-reference' });
    const { createRole } = await gqlData(gql, 'mutation { createRole(name: "keys-only", permissions: [ai_designer, "config:read"]) { permissions } }');
    expect(createRole.permissions).toEqual(['ai_designer', 'config:read']);
  });

  it.each([
    ['a scope written unquoted', 'mutation { createMcpApiKey(name: "k", scopes: [config], expiresInDays: 1) { apiKey } }', `${SCOPE_RULE}; got config`],
    ['an unknown field type', 'mutation { addTableField(tableId: "x", field: { name: "n", type: money }) { _id } }', 'FieldType must be one of text, number, boolean, date, datetime, json, reference, multi-reference; got money'],
  ])('refuse %s naming the allowed values', async (_case, query, message) => {
    expectRefused(await gql(query), message);
  });
});
