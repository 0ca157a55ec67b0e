import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * GraphQL over HTTP (issue 23): media type negotiation, request errors as GraphQL errors, queries
 * over GET, and the graphql-http audit suite's MUST and SHOULD checks, all against a started
 * server with a signed-in user's bearer token.
 */

let server: TestServer;
let token: string;

function withToken(input: RequestInfo | URL, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${token}`);
  return fetch(input, { ...init, headers });
}

async function post(body: unknown, accept?: string, auth = true) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (accept !== undefined) headers.accept = accept;
  if (auth) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: response.status, type: response.headers.get('content-type'), headers: response.headers, body: await response.json() };
}

beforeAll(async () => {
  server = await startTestServer();
  token = await login(server.url);
});

afterAll(async () => {
  await server?.close();
});

describe('the graphql-http audit suite', () => {
  const audits = serverAudits({ url: () => `${server.url}/graphql`, fetchFn: withToken });
  it.each(audits.map((audit) => [`${audit.id} ${audit.name}`, audit] as const))('%s', async (_name, audit) => {
    const result = await audit.fn();
    expect(result.status, 'reason' in result ? result.reason : '').toBe('ok');
  });
});

describe('media types', () => {
  it('answers application/graphql-response+json when the client asks for it first, and application/json otherwise', async () => {
    expect((await post({ query: '{ me { _id } }' }, 'application/graphql-response+json, application/json')).type).toBe('application/graphql-response+json; charset=utf-8');
    expect((await post({ query: '{ me { _id } }' }, 'application/json;q=1, application/graphql-response+json;q=0.5')).type).toBe('application/json; charset=utf-8');
    expect((await post({ query: '{ me { _id } }' })).type).toBe('application/json; charset=utf-8');
  });

  it('answers 406 to a client that accepts neither', async () => {
    const answer = await post({ query: '{ me { _id } }' }, 'text/html');
    expect(answer.status).toBe(406);
    expect(answer.body.errors[0].extensions.code).toBe('NOT_ACCEPTABLE');
  });

  it('sends a validation error as a GraphQL error: 200 under application/json, 400 under application/graphql-response+json, never a data entry', async () => {
    const json = await post({ query: '{ nope }' }, 'application/json');
    expect(json.status).toBe(200);
    expect(json.body).toEqual({ errors: [expect.objectContaining({ message: expect.stringContaining('Cannot query field "nope"') })] });
    const graphqlResponse = await post({ query: '{ nope }' }, 'application/graphql-response+json');
    expect(graphqlResponse.status).toBe(400);
    expect(graphqlResponse.body.data).toBeUndefined();
  });

  it.each([
    ['without a token', 'application/graphql-response+json', undefined],
    ['without a token', 'application/json', undefined],
    ['with an unknown session token', 'application/graphql-response+json', 'trs_not-a-session'],
    ['with an unknown integration access token', 'application/json', 'tat_not-a-token'],
    ['with a token of no known kind', undefined, 'whatever'],
  ])('answers a request %s (Accept: %s) with a GraphQL-shaped 401 in the negotiated media type', async (_case, accept, bearer) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(accept ? { accept } : {}), ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) };
    const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: '{ me { _id } }' }) });
    const body = await response.json();
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toBe(`${accept ?? 'application/json'}; charset=utf-8`);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(body.errors).toEqual([{ message: 'Authentication required or invalid', extensions: { code: 'UNAUTHENTICATED', status: 401 } }]);
    // The REST form of earlier versions stays beside it (D35).
    expect(body.error).toEqual({ code: 'UNAUTHENTICATED', message: 'Authentication required or invalid' });
    expect(body.data).toBeUndefined();
  });
});

describe('the schema an integration token sees', () => {
  const ROOT_FIELDS = '{ __schema { queryType { fields { name } } mutationType { fields { name } } } }';
  let integrationToken: string;

  /** The root field names of the schema introspected with this bearer token. */
  async function rootFields(bearer: string): Promise<string[]> {
    const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` }, body: JSON.stringify({ query: ROOT_FIELDS }) });
    const { data } = await response.json();
    return [...data.__schema.queryType.fields, ...(data.__schema.mutationType?.fields ?? [])].map((field: { name: string }) => field.name).sort();
  }

  beforeAll(async () => {
    await post({ query: 'mutation { createTable(name: "Parcels", fields: [{ name: "label", type: text }]) { _id } }' });
    const { body } = await post({ query: 'mutation { createIntegrationKey(name: "Shop") { clientId apiKey } }' });
    const exchange = await fetch(`${server.url}/api/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body.data.createIntegrationKey) });
    integrationToken = ((await exchange.json()) as { access_token: string }).access_token;
  });

  it("lists only the application's generated operations, while a signed-in user's lists the builder operations too", async () => {
    expect(await rootFields(integrationToken)).toEqual(['createParcels', 'deleteParcels', 'getParcels', 'listParcels', 'updateParcels']);
    const owners = await rootFields(token);
    expect(owners).toEqual(expect.arrayContaining(['listParcels', 'createParcels', 'me', 'features', 'hookRuns', 'createTable', 'createIntegrationKey']));
  });

  it('holds no builder type, and runs the generated operations', async () => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${integrationToken}` };
    const query = 'mutation { createParcels(data: { label: "box" }) { label } } ';
    expect(await (await fetch(`${server.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query }) })).json()).toEqual({ data: { createParcels: { label: 'box' } } });
    const types = await (await fetch(`${server.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: '{ feature: __type(name: "Feature") { name } status: __type(name: "FeatureStatus") { name } parcel: __type(name: "Parcels") { name } }' }) })).json();
    expect(types).toEqual({ data: { feature: null, status: null, parcel: { name: 'Parcels' } } });
  });
});

describe('GET /graphql', () => {
  it('runs a query from the query string, with JSON variables', async () => {
    const url = new URL(`${server.url}/graphql`);
    url.searchParams.set('query', 'query($id: ID!) { feature(_id: $id) { _id } }');
    url.searchParams.set('variables', JSON.stringify({ id: 'no-such-feature' }));
    const response = await withToken(url);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.errors?.[0]?.extensions?.code ?? 'none').not.toBe('INTERNAL');
  });

  it('refuses a mutation over GET with 405 and Allow: POST, and changes nothing', async () => {
    const url = new URL(`${server.url}/graphql`);
    url.searchParams.set('query', 'mutation { createRole(name: "from-get") { _id } }');
    const response = await withToken(url, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    const roles = await post({ query: '{ roles { name } }' });
    expect(roles.body.data.roles.map((role: { name: string }) => role.name)).not.toContain('from-get');
  });
});
