import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let ownerGql: ReturnType<typeof graphqlClient>;
let hookId: string;

const RUNS = 'query($hookId: ID, $outcome: HookRunOutcome, $limit: Int, $before: ID) { hookRuns(hookId: $hookId, outcome: $outcome, limit: $limit, before: $before) { items { _id hookId hookName trigger durationMs outcome console error } nextCursor } }';

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
    expect(hookRuns.items.map((r: { outcome: string }) => r.outcome)).toEqual(['ok', 'error', 'ok']);
    expect(hookRuns.items[1]).toMatchObject({ hookId, hookName: 'echo-run', trigger: 'webHook', console: ['[log] got 2'] });
    expect(hookRuns.items[1].error).toContain('two is refused');
    expect(hookRuns.nextCursor).toBeNull();
  });

  it('filters by outcome and pages with the cursor', async () => {
    expect((await gqlData(ownerGql, RUNS, { hookId, outcome: 'error' })).hookRuns.items).toHaveLength(1);
    const first = (await gqlData(ownerGql, RUNS, { hookId, limit: 2 })).hookRuns;
    const second = (await gqlData(ownerGql, RUNS, { hookId, limit: 2, before: first.nextCursor })).hookRuns;
    expect([...first.items, ...second.items].map((r: { _id: string }) => r._id)).toHaveLength(3);
    expect(second.nextCursor).toBeNull();
  });

  it.each([['abc'], ['0'], ['007']])('refuses the cursor %s, which no page returns, with BAD_INPUT naming before', async (before) => {
    const bad = await ownerGql(RUNS, { before });
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'BAD_INPUT', status: 400 });
    expect(bad.body.errors[0].message).toBe('before: must be the nextCursor of a previous page');
  });

  it('refuses a bad limit naming the field, and refuses callers without a session', async () => {
    const bad = await ownerGql(RUNS, { limit: 0 });
    expect(bad.body.errors[0].message).toContain('limit');
    expect((await postJson(`${server.url}/graphql`, { query: RUNS })).status).toBe(401);
  });
});

describe('what a run received and answered', () => {
  it('is in the run log for an admin, with the secrets redacted, and withheld from a designer', async () => {
    await gqlData(ownerGql, 'mutation($v: String!) { setEnvironmentVariable(name: "ECHO_TOKEN", value: $v) { name } }', { v: 'echo-token-123456' });
    await gqlData(ownerGql, 'mutation($c: String!) { createHook(name: "echo-details", type: "webHook", content: $c) { _id } }', {
      c: 'async function (body) { return { got: body.n, token: env.ECHO_TOKEN }; }',
    });
    await postJson(`${server.url}/api/webhook/echo-details`, { n: 7, note: 'echo-token-123456 in the body', big: 'x'.repeat(5000) });
    await server.server.services.hookRuntime.flushRunLog();
    const runs = (await gqlData(ownerGql, '{ hookRuns(limit: 1) { items { hookName input output } } }')).hookRuns.items;
    expect(runs[0].hookName).toBe('echo-details');
    // The body was longer than the run log keeps: a preview, redacted.
    expect(runs[0].input.truncated).toBe(true);
    expect(runs[0].input.preview).toContain('"note":"[redacted] in the body"');
    expect(runs[0].input.preview).toHaveLength(4000);
    expect(runs[0].output).toEqual({ got: 7, token: '[redacted]' });
    await gqlData(ownerGql, 'mutation { createUser(email: "details-designer@example.com", password: "designer-pass", role: "designer") { _id } }');
    const designer = graphqlClient(server.url, await login(server.url, 'details-designer@example.com', 'designer-pass'));
    const hidden = (await gqlData(designer, '{ hookRuns(limit: 1) { items { input output detailsVisible } } }')).hookRuns.items[0];
    expect(hidden).toEqual({ input: null, output: null, detailsVisible: false });
  });
});

describe('what a run printed is readable only by those who may write hooks', () => {
  const SECRET = 'Sup3r-Secret-Value-42';
  let designerGql: ReturnType<typeof graphqlClient>;
  let leakyId: string;

  beforeAll(async () => {
    await gqlData(ownerGql, 'mutation($v: String!) { setEnvironmentVariable(name: "API_SECRET", value: $v) { name } }', { v: SECRET });
    leakyId = (
      await gqlData(ownerGql, 'mutation($c: String!) { createHook(name: "leaky-run", type: "webHook", content: $c) { _id } }', {
        c: `async function leaky() {
          const s = env.API_SECRET;
          console.log('reversed', s.split('').reverse().join(''));
          console.log('upper', s.toUpperCase());
          console.log('spaced', s.split('').join(' '));
          console.log('codes', [...s].map((c) => c.charCodeAt(0)).join(','));
          throw new Error('cannot resolve ' + s.toLowerCase() + '.invalid');
        }`,
      })
    ).createHook._id;
    await postJson(`${server.url}/api/webhook/leaky-run`, {});
    await server.server.services.hookRuntime.flushRunLog();
    await gqlData(ownerGql, 'mutation { createUser(email: "runs-designer@example.com", password: "designer-pass", role: "designer") { _id } }');
    designerGql = graphqlClient(server.url, await login(server.url, 'runs-designer@example.com', 'designer-pass'));
  });

  const RUN = 'query($hookId: ID) { hookRuns(hookId: $hookId) { items { outcome trigger durationMs console error detailsVisible } } }';

  it('shows a designer the outcome, trigger and duration of a run, and neither its console lines nor its error', async () => {
    const { hookRuns } = await gqlData(designerGql, RUN, { hookId: leakyId });
    expect(hookRuns.items).toHaveLength(1);
    expect(hookRuns.items[0]).toMatchObject({ outcome: 'error', trigger: 'webHook', console: null, error: null, detailsVisible: false });
    expect(hookRuns.items[0].durationMs).toBeGreaterThanOrEqual(0);
    const everything = JSON.stringify(await designerGql('{ hookRuns { items { _id hookName console error } } }'));
    for (const disguise of [SECRET, SECRET.toLowerCase(), SECRET.toUpperCase(), [...SECRET].reverse().join(''), [...SECRET].join(' ')]) {
      expect(everything).not.toContain(disguise);
    }
  });

  it('shows an admin the console lines and the error, with the value redacted in any letter case and reversed', async () => {
    const { hookRuns } = await gqlData(ownerGql, RUN, { hookId: leakyId });
    const run = hookRuns.items[0];
    expect(run.detailsVisible).toBe(true);
    expect(run.console).toEqual(['[log] reversed [redacted]', '[log] upper [redacted]', `[log] spaced ${[...SECRET].join(' ')}`, expect.stringMatching(/^\[log\] codes \d+/)]);
    expect(run.error).toBe('cannot resolve [redacted].invalid');
  });
});

describe('runs of a deleted hook', () => {
  it('stay in the log under the hook name, unlinked from the hook (a webhook and a save hook)', async () => {
    const hookOf = async (name: string, content: string, extra = '') =>
      (await gqlData(ownerGql, `mutation($c: String!) { createHook(name: "${name}", content: $c${extra}) { _id } }`, { c: content })).createHook._id as string;
    const webhookId = await hookOf('gone-webhook', 'async function (instance) { return 1; }', ', type: "webHook"');
    await postJson(`${server.url}/api/webhook/gone-webhook`, { n: 1 });
    const table = (await gqlData(ownerGql, 'mutation { createTable(name: "GoneNotes", fields: [{ name: "note", type: "text" }]) { _id } }')).createTable._id as string;
    const saveHookId = await hookOf('gone-save', 'async function (instance) { return instance; }', `, type: "beforeSave", tableId: "${table}"`);
    await gqlData(ownerGql, 'mutation { createGoneNotes(data: { note: "one" }) { _id } }');
    await server.server.services.hookRuntime.flushRunLog();
    for (const id of [webhookId, saveHookId]) expect((await gqlData(ownerGql, RUNS, { hookId: id })).hookRuns.items).toHaveLength(1);

    for (const id of [webhookId, saveHookId]) await gqlData(ownerGql, `mutation { deleteHook(_id: "${id}", confirm: true) }`);
    const names = new Map<string, { hookId: string | null }>();
    for (const run of (await gqlData(ownerGql, RUNS, { limit: 100 })).hookRuns.items) names.set(run.hookName, run);
    expect(names.get('gone-webhook')).toMatchObject({ hookId: null, outcome: 'ok' });
    expect(names.get('gone-save')).toMatchObject({ hookId: null, outcome: 'ok' });
    for (const id of [webhookId, saveHookId]) expect((await gqlData(ownerGql, RUNS, { hookId: id })).hookRuns.items).toEqual([]);
  });
});
