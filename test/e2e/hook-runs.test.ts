import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let ownerGql: ReturnType<typeof graphqlClient>;
let hookId: string;

const RUNS = 'query($hookId: ID, $outcome: String, $limit: Int, $before: ID) { hookRuns(hookId: $hookId, outcome: $outcome, limit: $limit, before: $before) { runs { _id hookId hookName trigger durationMs outcome console error } nextCursor } }';

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
  const created = await gqlData(
    ownerGql,
    'mutation($content: String!) { createHook(name: "echo-run", type: "webHook", content: $content) { _id } }',
    { content: 'async function (instance) { console.log("got", instance.n); if (instance.n === 2) throw new Error("two is refused"); return instance.n; }' },
  );
  hookId = created.createHook._id;
  for (const n of [1, 2, 3]) await postJson(`${server.url}/api/webhook/echo-run`, { n });
  await server.server.services.hookRuntime.flushRunLog();
});
afterAll(async () => server?.close());

describe('hookRuns (the run log through builder GraphQL)', () => {
  it('lists every run newest first with trigger, outcome, console lines and the error', async () => {
    const { hookRuns } = await gqlData(ownerGql, RUNS, { hookId });
    expect(hookRuns.runs.map((r: { outcome: string }) => r.outcome)).toEqual(['ok', 'error', 'ok']);
    expect(hookRuns.runs[1]).toMatchObject({ hookId, hookName: 'echo-run', trigger: 'webHook', console: ['[log] got 2'] });
    expect(hookRuns.runs[1].error).toContain('two is refused');
    expect(hookRuns.nextCursor).toBeNull();
  });

  it('filters by outcome and pages with the cursor', async () => {
    expect((await gqlData(ownerGql, RUNS, { hookId, outcome: 'error' })).hookRuns.runs).toHaveLength(1);
    const first = (await gqlData(ownerGql, RUNS, { hookId, limit: 2 })).hookRuns;
    const second = (await gqlData(ownerGql, RUNS, { hookId, limit: 2, before: first.nextCursor })).hookRuns;
    expect([...first.runs, ...second.runs].map((r: { _id: string }) => r._id)).toHaveLength(3);
    expect(second.nextCursor).toBeNull();
  });

  it('refuses a bad limit naming the field, and refuses callers without a session', async () => {
    const bad = await ownerGql(RUNS, { limit: 0 });
    expect(bad.body.errors[0].message).toContain('limit');
    expect((await postJson(`${server.url}/graphql`, { query: RUNS })).status).toBe(401);
  });
});
