import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHQL_ACCEPT, gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

/** Fragments that each spread the previous one twice: 2^n spreads from a document of n lines. */
function doublingFragments(n: number, root = '__typename'): string {
  const lines = [`fragment F0 on Query { ${root} }`];
  for (let i = 1; i <= n; i++) lines.push(`fragment F${i} on Query { ...F${i - 1} ...F${i - 1} }`);
  return `query { ...F${n} }\n${lines.join('\n')}`;
}

interface Timed {
  status: number;
  body: { errors?: { message: string }[]; data?: unknown };
  ms: number;
  healthMs: number;
}

describe('GraphQL documents built to exhaust the server', () => {
  let server: TestServer;
  let tokens: { session: string; integration: string };

  /** Sends the document and, while it is being answered, asks /healthz: both times are returned. */
  async function send(token: string, query: string): Promise<Timed> {
    const started = performance.now();
    const health = (async () => {
      await new Promise((resolve) => setImmediate(resolve));
      const at = performance.now();
      await fetch(`${server.url}/healthz`);
      return performance.now() - at;
    })();
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, accept: GRAPHQL_ACCEPT },
      body: JSON.stringify({ query }),
    });
    const body = (await response.json()) as Timed['body'];
    return { status: response.status, body, ms: performance.now() - started, healthMs: await health };
  }

  beforeAll(async () => {
    server = await startTestServer();
    const session = await login(server.url);
    const gql = graphqlClient(server.url, session);
    await gqlData(gql, 'mutation { createTable(name: "Item", fields: [{ name: "title", type: "text" }, { name: "tags", type: "json" }]) { _id } }');
    const key = await gqlData(gql, 'mutation { createIntegrationKey(name: "limits") { clientId apiKey } }');
    const exchanged = await fetch(`${server.url}/api/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(key.createIntegrationKey),
    });
    tokens = { session, integration: ((await exchanged.json()) as { access_token: string }).access_token };
  });

  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['a session', 'session', 30],
    ['a session', 'session', 60],
    ['an integration token', 'integration', 30],
    ['an integration token', 'integration', 60],
  ] as const)('refuses doubling fragments (n = %#) from %s at once, while /healthz answers', async (_who, token, n) => {
    const result = await send(tokens[token], doublingFragments(n, 'listItem(limit: 500) { items { _id title } }'));
    expect(result.status).toBe(400);
    expect(result.body.errors![0]!.message).toMatch(/^Query may resolve about \d+(\.\d+)?(e\+\d+)? fields; the limit is 50000/);
    // Before the fix n = 24 took 6.9 s and n = 30 minutes; a linear check answers in milliseconds.
    expect(result.ms).toBeLessThan(2000);
    expect(result.healthMs).toBeLessThan(2000);
  });

  it('accepts the same shape when it stays within the cost limit', async () => {
    const result = await send(tokens.session, doublingFragments(10));
    expect(result.status).toBe(200);
    expect(result.body.data).toEqual({ __typename: 'Query' });
  });

  it('refuses a fragment cycle with the validation error, not a hang', async () => {
    const result = await send(tokens.session, 'query { ...A }\nfragment A on Query { ...B }\nfragment B on Query { ...A }');
    expect(result.status).toBe(400);
    expect(result.body.errors!.map((error) => error.message)).toContain('Cannot spread fragment "A" within itself via "B".');
  });

  it('refuses an alias flood of list fields by its cost', async () => {
    const aliases = Array.from({ length: 300 }, (_, i) => `a${i}: listItem(limit: 500) { items { _id } }`).join(' ');
    const result = await send(tokens.integration, `{ ${aliases} }`);
    expect(result.status).toBe(400);
    expect(result.body.errors![0]!.message).toMatch(/the limit is 50000/);
    expect(result.ms).toBeLessThan(2000);
  });

  it('counts each page and each total as a statement, whatever the limit: an alias flood of counts is refused', async () => {
    // limit: 0 selects no record, but each `total` still scans the table.
    const counts = Array.from({ length: 60 }, (_, i) => `c${i}: listItem(limit: 0) { total }`).join(' ');
    const refused = await send(tokens.integration, `{ ${counts} }`);
    expect(refused.status).toBe(400);
    expect(refused.body.errors![0]!.message).toMatch(/^Query may resolve about 120000 fields; the limit is 50000/);
    const pages = Array.from({ length: 60 }, (_, i) => `p${i}: listItem(limit: 0) { items { _id } }`).join(' ');
    expect((await send(tokens.session, `{ ${pages} }`)).status).toBe(400);
    // A dashboard's worth of pages with their totals passes, through fragments too.
    const dashboard = await send(
      tokens.integration,
      `{ a: listItem(limit: 5) { ...Page } b: listItem(limit: 0) { total } c: listItem { items { _id } } } fragment Page on ItemPage { total items { _id title } }`,
    );
    expect(dashboard.status).toBe(200);
    expect(dashboard.body.data).toEqual({ a: { total: 0, items: [] }, b: { total: 0 }, c: { items: [] } });
  });

  it('refuses a document of more than 5000 tokens before validating it', async () => {
    const aliases = Array.from({ length: 3000 }, (_, i) => `a${i}: __typename`).join(' ');
    const result = await send(tokens.session, `{ ${aliases} }`);
    expect(result.status).toBe(400);
    expect(result.body.errors![0]!.message).toMatch(/Document contains more th[ae]t? 5000 tokens/);
  });

  it('refuses filters nested 300 levels deep as a literal with BAD_INPUT from the resolver', async () => {
    const query = `{ listItem(filter: ${'{ _and: ['.repeat(300)}{}${']}'.repeat(300)}) { total } }`;
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.integration}` },
      body: JSON.stringify({ query }),
    });
    // A resolver's refusal keeps HTTP 200 (docs/decisions.md D5).
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(answer.errors[0]!.extensions.code).toBe('BAD_INPUT');
    expect(answer.errors[0]!.message).toMatch(/must not nest _and\/_or deeper than 8 levels/);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('refuses variables nested 300 levels deep before parsing the body, while /healthz answers', async () => {
    const body = `{"query":"query($f: ItemFilter) { listItem(filter: $f) { total } }","variables":{"f":${'{"_and":['.repeat(300)}{}${']}'.repeat(300)}}}`;
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.integration}` },
      body,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe('Request body nests objects and arrays deeper than 100 levels');
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
