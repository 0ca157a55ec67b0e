import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';

/** The GraphQL the web pages added, at its edges: what each refuses, and how it says so. */
let server: TestServer;
let owner: ReturnType<typeof graphqlClient>;

beforeAll(async () => {
  server = await startTestServer();
  owner = graphqlClient(server.url, await login(server.url));
  await gqlData(owner, 'mutation { createTable(name: "Notes", fields: [{ name: "body", type: "text" }]) { _id } }');
  await gqlData(owner, 'mutation { createFeature(_id: "drafty", name: "Drafty", customCode: "export default function D() { return null }") { _id } }');
});
afterAll(async () => server?.close());

const firstError = async (query: string, variables: Record<string, unknown> = {}) => (await owner(query, variables)).body.errors[0];

describe('the web pages\' GraphQL refuses clearly', () => {
  it('updateTableField: an unknown field, a description too long', async () => {
    expect(await firstError('mutation { updateTableField(tableId: "Notes", field: "nope", description: "x") { _id } }')).toMatchObject({
      message: "Table 'Notes' has no field 'nope'",
      extensions: { code: 'NOT_FOUND', details: { fields: ['body'] } },
    });
    const long = await firstError('mutation($d: String!) { updateTableField(tableId: "Notes", field: "body", description: $d) { _id } }', { d: 'x'.repeat(1001) });
    expect(long.message).toContain('description: must be at most 1000 characters');
    const changed = await gqlData(owner, 'mutation { updateTableField(tableId: "Notes", field: "BODY", description: "The text") { fields { name description } } }');
    expect(changed.updateTableField.fields).toEqual([{ name: 'body', description: 'The text' }]);
  });

  it('featureVersionDiff: a version that does not exist', async () => {
    expect(await firstError('{ featureVersionDiff(_id: "drafty", from: 1, to: 9) }')).toMatchObject({ message: "Version 9 of feature 'drafty' does not exist", extensions: { code: 'NOT_FOUND' } });
    expect((await gqlData(owner, '{ featureVersionDiff(_id: "drafty", from: 1, to: 1) }')).featureVersionDiff).toBe('');
  });

  it('appFeature: a feature never published; featurePreview: code that does not compile', async () => {
    const unpublished = await owner('{ appFeature(_id: "drafty") { script } }');
    expect(unpublished.body.data).toEqual({ appFeature: null });
    expect(unpublished.body.errors[0]).toMatchObject({ message: "Published version of feature 'Drafty' does not exist", extensions: { code: 'NOT_FOUND' } });
    const broken = await firstError('{ featurePreview(_id: "drafty", customCode: "export default function ( {") { script } }');
    expect(broken.extensions.code).toBe('BAD_INPUT');
    expect(broken.message).toMatch(/^The feature's code does not compile: .+ \(line 1, column \d+\)$/);
    expect((await gqlData(owner, '{ featurePreview(_id: "drafty") { script } }')).featurePreview.script).toContain('exports');
  });

  it('appPage and appFeature: an integration token gets no application page', async () => {
    const { createIntegrationKey } = await gqlData(owner, 'mutation { createIntegrationKey(name: "web-edges") { clientId apiKey } }');
    const token = (await postJson(`${server.url}/api/auth/token`, createIntegrationKey)).body.access_token;
    const answer = await postJson(`${server.url}/graphql`, { query: '{ appPage { name } }' }, { authorization: `Bearer ${token}` });
    expect(answer.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });
});
