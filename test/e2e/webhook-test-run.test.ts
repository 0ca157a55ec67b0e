import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hookAuthoringGuide } from '../../src/hooks/authoring-guide.js';
import { connectMcp, createUserKey, structuredData } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A webhook's test run through builder GraphQL (`testWebhook`): the raw body, its media type and
 * headers, a provider's signature computed on the server with an environment value that never
 * leaves it; the run log's HTTP status and the `refused` outcome of a 4xx/5xx answer; a webhook's
 * URL in GraphQL and in MCP's create_hook.
 */
let server: TestServer;
let owner: ReturnType<typeof graphqlClient>;
let designer: ReturnType<typeof graphqlClient>;
const PAY_SECRET = 'whsec_test-run-secret-5678';
const GITHUB_SECRET = 'gh-secret-never-shown-0000';
const hooks: Record<string, string> = {};

const TEST_WEBHOOK = `mutation($id: ID!, $body: String, $contentType: String, $headers: [HttpHeaderInput!], $signWith: WebhookSigningInput) {
  testWebhook(_id: $id, body: $body, contentType: $contentType, headers: $headers, signWith: $signWith) { httpStatus headers { name value } body sentHeaders { name value } }
}`;

const ECHO = `async function echo(instance) {
  return { instance, source: headers['x-source'] || null, type: request.contentType, raw: request.rawBody, url: request.url };
}`;

const GITHUB = `async function github(instance) {
  const expected = 'sha256=' + crypto.hmac('sha256', env.GITHUB_SECRET, request.rawBody);
  if (!crypto.timingSafeEqual(expected, headers['x-hub-signature-256'] || '')) return respond(401, { error: 'bad signature' });
  return { event: instance.action };
}`;

const STRIPE = hookAuthoringGuide({ cpuMs: 200, timeoutMs: 5000, memoryMb: 32 }).types.find((type) => type.type === 'webHook')!.example;

async function createHook(name: string, type: string, content: string, tableId?: string): Promise<string> {
  const created = await gqlData(owner, 'mutation($n: String!, $t: HookType!, $c: String!, $table: ID) { createHook(name: $n, type: $t, content: $c, tableId: $table) { _id } }', { n: name, t: type, c: content, table: tableId ?? null });
  return created.createHook._id;
}

async function testRun(variables: Record<string, unknown>, client = owner) {
  return client(TEST_WEBHOOK, variables);
}

/**
 * The newest test run of a hook. Test runs are stored as they end; the run log may also store a hook's
 * latest ordinary run later, when its counting period ends (D39), so "newest row" alone is not the test's.
 */
async function newestRunOf(hookId: string, trigger?: string): Promise<Record<string, unknown> | undefined> {
  const items = (await gqlData(owner, 'query($id: ID) { hookRuns(hookId: $id, limit: 20) { items { _id trigger outcome httpStatus } } }', { id: hookId })).hookRuns.items;
  return trigger ? items.find((item: { trigger: string }) => item.trigger === trigger) : items[0];
}

/** Does `act` and answers the run of the hook it caused, once stored (the run log writes in small batches). */
async function runOf(hookId: string, act: () => Promise<unknown>, trigger?: string): Promise<Record<string, unknown>> {
  // Runs of earlier calls are stored in the background: store them first, so `before` is really the newest.
  await server.server.services.hookRuntime.flushRunLog();
  const before = (await newestRunOf(hookId, trigger))?._id;
  await act();
  const { _id, ...run } = await waitFor('the run in the run log', async () => {
    const newest = await newestRunOf(hookId, trigger);
    return newest && newest._id !== before ? newest : undefined;
  });
  return run;
}

beforeAll(async () => {
  server = await startTestServer({ TRELLIS_WEBHOOK_RATE_LIMIT: '1000' });
  owner = graphqlClient(server.url, await login(server.url));
  await gqlData(owner, 'mutation { createUser(email: "dee@example.com", password: "designer-pass", role: "designer") { _id } }');
  designer = graphqlClient(server.url, await login(server.url, 'dee@example.com', 'designer-pass'));
  for (const [name, value] of [['PAY_SECRET', PAY_SECRET], ['GITHUB_SECRET', GITHUB_SECRET]]) {
    await gqlData(owner, 'mutation($n: String!, $v: String!) { setEnvironmentVariable(name: $n, value: $v) { name } }', { n: name, v: value });
  }
  const table = (await gqlData(owner, 'mutation { createTable(name: "Orders", fields: [{ name: "title", type: "text" }, { name: "paid", type: "boolean" }]) { _id } }')).createTable._id;
  hooks.echo = await createHook('echo', 'webHook', ECHO);
  hooks.github = await createHook('github-push', 'webHook', GITHUB);
  hooks.stripe = await createHook('pay-confirm', 'webHook', STRIPE);
  hooks.failing = await createHook('failing', 'webHook', "async () => { throw new Error('nope'); }");
  hooks.save = await createHook('stamp', 'beforeSave', 'async (instance) => { instance.title = instance.title || "untitled"; }', table);
});

afterAll(async () => server?.close());

describe('testWebhook', () => {
  it('sends the raw body with its media type and headers, and answers what a caller gets', async () => {
    const body = '{"amount":125.50}';
    let answer: { data: { testWebhook: Record<string, any> }; errors?: unknown } = { data: { testWebhook: {} } }; // eslint-disable-line @typescript-eslint/no-explicit-any
    const logged = await runOf(hooks.echo!, async () => {
      answer = (await testRun({ id: 'echo', body, headers: [{ name: 'X-Source', value: 'designer' }, { name: 'Cookie', value: 'never=passed' }] })).body;
    });
    expect(answer.errors).toBeUndefined();
    const run = answer.data.testWebhook;
    expect(run.httpStatus).toBe(200);
    expect(JSON.parse(run.body)).toEqual({ instance: { amount: 125.5 }, source: 'designer', type: 'application/json', raw: body, url: '/api/webhook/echo' });
    expect(run.sentHeaders).toEqual([{ name: 'x-source', value: 'designer' }, { name: 'content-type', value: 'application/json' }]);
    expect(run.headers).toEqual(expect.arrayContaining([{ name: 'content-type', value: 'application/json; charset=utf-8' }, { name: 'cache-control', value: 'no-store' }]));
    expect(logged).toEqual({ trigger: 'webHook (test run)', outcome: 'ok', httpStatus: 200 });
  });

  it('takes another media type: a form becomes an object', async () => {
    const run = (await gqlData(owner, TEST_WEBHOOK, { id: hooks.echo, body: 'a=1&a=2&b=x', contentType: 'application/x-www-form-urlencoded' })).testWebhook;
    expect(JSON.parse(run.body).instance).toEqual({ a: ['1', '2'], b: 'x' });
  });

  it("signs the body as Stripe does with an environment value, which the guide's example accepts", async () => {
    const order = (await gqlData(owner, 'mutation { createOrders(data: { title: "to pay" }) { _id } }')).createOrders._id;
    const body = `{"orderId":"${order}"}`;
    const before = Math.floor(Date.now() / 1000);
    const { body: answer } = await testRun({ id: 'pay-confirm', body, signWith: { scheme: 'stripe', envVar: 'PAY_SECRET' } });
    const run = answer.data.testWebhook;
    expect([run.httpStatus, JSON.parse(run.body)]).toEqual([200, { ok: true }]);
    const signature = run.sentHeaders.find((header: { name: string }) => header.name === 'stripe-signature').value as string;
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature)!;
    expect(Number(t)).toBeGreaterThanOrEqual(before);
    expect(v1).toBe(createHmac('sha256', PAY_SECRET).update(`${t}.${body}`).digest('hex'));
    expect((await gqlData(owner, 'query($id: ID!) { getOrders(Id: $id) { paid } }', { id: order })).getOrders.paid).toBe(true);
    // The value itself is nowhere in the answer.
    expect(JSON.stringify(answer)).not.toContain(PAY_SECRET);
  });

  it('signs the body as GitHub does', async () => {
    const body = '{"action":"opened"}';
    const run = (await gqlData(owner, TEST_WEBHOOK, { id: 'github-push', body, signWith: { scheme: 'github', envVar: 'GITHUB_SECRET' } })).testWebhook;
    expect([run.httpStatus, JSON.parse(run.body)]).toEqual([200, { event: 'opened' }]);
    expect(run.sentHeaders).toContainEqual({ name: 'x-hub-signature-256', value: `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}` });
    expect(JSON.stringify(run)).not.toContain(GITHUB_SECRET);
  });

  it('answers the 401 of a signature made with the wrong secret, and the run log says refused with the status', async () => {
    let run: { httpStatus: number; body: string } = { httpStatus: 0, body: '' };
    const logged = await runOf(hooks.github!, async () => {
      run = (await gqlData(owner, TEST_WEBHOOK, { id: 'github-push', body: '{}', signWith: { scheme: 'github', envVar: 'PAY_SECRET' } })).testWebhook;
    }, 'webHook (test run)');
    expect([run.httpStatus, JSON.parse(run.body)]).toEqual([401, { error: 'bad signature' }]);
    expect(logged).toEqual({ trigger: 'webHook (test run)', outcome: 'refused', httpStatus: 401 });
  });

  it.each([
    ['a malformed JSON body', { id: 'echo', body: '{"a":' }, 400, 'BAD_INPUT'],
    ['a media type webhooks do not take', { id: 'echo', body: '<a/>', contentType: 'image/svg+xml' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['code that throws', { id: 'failing', body: '{}' }, 500, 'HOOK_FAILED'],
  ])('answers %s as the URL would', async (_case, variables, status, code) => {
    const run = (await gqlData(owner, TEST_WEBHOOK, variables)).testWebhook;
    expect(run.httpStatus).toBe(status);
    expect(JSON.parse(run.body).error.code).toBe(code);
  });

  it('records a failed run with the 500 its caller got', async () => {
    const logged = await runOf(hooks.failing!, () => gqlData(owner, TEST_WEBHOOK, { id: 'failing', body: '{}' }));
    expect(logged).toEqual({ trigger: 'webHook (test run)', outcome: 'error', httpStatus: 500 });
  });

  it.each([
    ['an environment variable that is not set', { id: 'echo', signWith: { scheme: 'stripe', envVar: 'NOPE' } }, "signWith.envVar: no environment variable is named 'NOPE'; the set ones are GITHUB_SECRET, PAY_SECRET"],
    ['a save hook', { id: 'stamp' }, "_id: 'stamp' is a beforeSave hook: only webhooks have a test run"],
    ['the media type given as a header', { id: 'echo', headers: [{ name: 'Content-Type', value: 'text/plain' }] }, 'headers: give the media type as contentType, not as a header'],
    ['a header name that is not one', { id: 'echo', headers: [{ name: 'bad name', value: 'x' }] }, 'headers.0.name: must be an HTTP header name'],
    ['a scheme the guide does not name', { id: 'echo', signWith: { scheme: 'slack', envVar: 'PAY_SECRET' } }, 'WebhookSigningScheme must be one of stripe, github'],
  ])('refuses %s with BAD_INPUT', async (_case, variables, message) => {
    const { body } = await testRun(variables);
    expect(body.errors[0].extensions.code).toBe('BAD_INPUT');
    expect(body.errors[0].message).toContain(message);
  });

  it('lets a designer (config:read) run a webhook unsigned, and refuses signing with an environment value without hooks:write', async () => {
    const unsigned = (await gqlData(designer, TEST_WEBHOOK, { id: 'echo', body: '{}' })).testWebhook;
    expect(unsigned.httpStatus).toBe(200);
    const { body } = await testRun({ id: 'pay-confirm', body: '{}', signWith: { scheme: 'stripe', envVar: 'PAY_SECRET' } }, designer);
    expect(body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', details: { missingPermission: 'hooks:write' } });
  });
});

describe('the run log of a webhook', () => {
  it('keeps the status every call answered, a 4xx apart from ok, and filters by refused', async () => {
    const url = `${server.url}/api/webhook/github-push`;
    const run = await runOf(hooks.github!, async () => {
      expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    });
    expect(run).toEqual({ trigger: 'webHook', outcome: 'refused', httpStatus: 401 });
    const refused = (await gqlData(owner, 'query($id: ID) { hookRuns(hookId: $id, outcome: "refused") { items { outcome httpStatus } } }', { id: hooks.github })).hookRuns.items;
    expect(refused.length).toBeGreaterThanOrEqual(2);
    expect(refused.every((entry: { outcome: string; httpStatus: number }) => entry.outcome === 'refused' && entry.httpStatus === 401)).toBe(true);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/trellis_hook_runs_total\{type="webHook",outcome="refused"\} [1-9]/);
  });

  it('answers a 204 as ok and keeps no status for save hooks', async () => {
    const noAnswer = await createHook('no-answer', 'webHook', 'async () => {}');
    const answered = await runOf(noAnswer, async () => expect((await fetch(`${server.url}/api/webhook/no-answer`, { method: 'POST' })).status).toBe(204));
    expect(answered).toEqual({ trigger: 'webHook', outcome: 'ok', httpStatus: 204 });
    const saved = await runOf(hooks.save!, () => gqlData(owner, 'mutation { createOrders(data: { title: "" }) { _id } }'));
    expect(saved).toEqual({ trigger: 'beforeSave', outcome: 'ok', httpStatus: null });
  });
});

describe("a webhook's URL", () => {
  it('is on the Hook type for webhooks, null for save hooks', async () => {
    const { hooks: listed } = await gqlData(owner, '{ hooks { name url } }');
    expect(listed).toEqual(expect.arrayContaining([{ name: 'echo', url: `${server.url}/api/webhook/echo` }, { name: 'stamp', url: null }]));
  });

  it("is in create_hook's answer for a webhook, as create_feature answers its page's path", async () => {
    const { apiKey } = await createUserKey(server, { email: 'owner@example.com', role: 'admin', scopes: ['config:read', 'hooks:write'] });
    const client = await connectMcp(server, apiKey);
    try {
      const webhook = await client.callTool({ name: 'create_hook', arguments: { name: 'from-agent', type: 'webHook', content: 'async () => ({ ok: true })' } });
      expect(webhook.isError).toBeFalsy();
      const data = structuredData(webhook);
      expect(data.url).toBe(`${server.url}/api/webhook/from-agent`);
      expect((await fetch(data.url, { method: 'POST' })).status).toBe(200);
      const saveHook = await client.callTool({ name: 'create_hook', arguments: { name: 'agent-stamp', type: 'afterSave', tableId: 'Orders', content: 'async () => {}' } });
      expect(structuredData(saveHook)).not.toHaveProperty('url');
    } finally {
      await client.close();
    }
  });
});
