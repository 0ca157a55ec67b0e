import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

type Gql = ReturnType<typeof graphqlClient>;

interface WebhookResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const CREATE_HOOK = 'mutation($name: String!, $content: String!) { createHook(name: $name, type: "webHook", content: $content) { _id } }';
const PAY_SECRET = 'pay-secret-7f3a9c1e5b2d';
const PAY_CONFIRM = `async function payConfirm(instance) {
  const expected = crypto.hmacSha256(env.PAY_SECRET, JSON.stringify(instance));
  if (!crypto.timingSafeEqual(expected, headers['x-pay-signature'] || '')) throw new Error('signature mismatch');
  await db.update('Order', instance.orderId, { paid: true });
  return { ok: true };
}`;

async function createWebhook(gql: Gql, name: string, content: string): Promise<string> {
  return (await gqlData(gql, CREATE_HOOK, { name, content })).createHook._id;
}

async function createTable(gql: Gql, name: string, fields: unknown[]): Promise<void> {
  await gqlData(gql, 'mutation($name: String!, $fields: [AppFieldInput!]) { createTable(name: $name, fields: $fields) { _id } }', { name, fields });
}

/** POSTs to a webhook: `body` as JSON unless it is a string (sent as is) or undefined (no body). */
async function callWebhook(
  baseUrl: string,
  name: string,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<WebhookResponse> {
  const response = await fetch(`${baseUrl}/api/webhook/${name}`, {
    method: 'POST',
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

async function hookRuns(server: TestServer, hookName: string) {
  await server.server.services.hookRuntime.flushRunLog();
  return server.server.services.ctx.db
    .selectFrom('hook_runs')
    .select(['hook_id', 'trigger', 'outcome', 'error'])
    .where('hook_name', '=', hookName)
    .orderBy('id')
    .execute();
}

describe('POST /api/webhook/<Name>', () => {
  let server: TestServer;
  let gql: Gql;
  const call = (name: string, body: unknown, headers?: Record<string, string>) => callWebhook(server.url, name, body, headers);
  const db = () => server.server.services.ctx.db;

  async function orderRows() {
    const table = await db().selectFrom('app_tables').select('sql_name').where('name', '=', 'Order').executeTakeFirstOrThrow();
    const result = await sql<{ _id: string; title: string; paid: boolean | null; _created_by: string | null; _updated_by: string | null }>`
      select _id, title, paid, _created_by, _updated_by from ${sql.table(table.sql_name)} order by _created_at, _id`.execute(db());
    return result.rows;
  }

  async function createOrder(title: string): Promise<string> {
    return (await gqlData(gql, 'mutation($t: String!) { createOrder(data: { title: $t }) { _id } }', { t: title })).createOrder._id;
  }

  beforeAll(async () => {
    // The tests' CPU budget (TEST_ENV, 1000 ms of the thread's own CPU time): filling 32 MB takes a
    // fraction of it, and each attack below computes for that long before it is stopped.
    server = await startTestServer({ TRELLIS_WEBHOOK_RATE_LIMIT: '1000' });
    gql = graphqlClient(server.url, await login(server.url));
    await createTable(gql, 'Order', [
      { name: 'title', type: 'text', required: true },
      { name: 'paid', type: 'boolean' },
    ]);
    await createWebhook(gql, 'Echo-Hook', 'async function echo(instance) { return { received: instance, answered: true }; }');
    await createWebhook(gql, 'returns', 'async function returns(instance) { return instance.value; }');
    await createWebhook(gql, 'silent', 'async function silent(instance) { const unused = instance; }');
    await createWebhook(gql, 'failing', "async function failing(instance) { throw new Error('internal detail ' + instance.detail); }");
    await createWebhook(gql, 'leaky', "async function leaky(instance) { throw new Error('secret is ' + env.PAY_SECRET); }");
    await createWebhook(gql, 'token-check', "async function tokenCheck(instance) { if (headers['x-webhook-token'] !== 'let-me-in') throw new Error('bad token'); return { headers }; }");
    await createWebhook(gql, 'order-intake', "async function intake(instance) { return db.create('Order', { title: instance.title }); }");
    await createWebhook(gql, 'spin', 'async function spin(instance) { while (true) {} }');
    await createWebhook(gql, 'hog', 'async function hog(instance) { let n = 1 << 20; const keep = []; while (true) { keep.push(new Uint8Array(n)); n *= 2; } }');
    // Each buffer is well under the limit: only the cap on the engine's whole heap stops this one.
    await createWebhook(gql, 'nibbler', 'async function nibbler(instance) { const keep = []; while (true) keep.push(new Uint8Array(4 << 20)); }');
    // The engine computes this text natively, where it never checks its limits: its worker is terminated.
    // The text of a number of 286 000 digits takes ~3 s of native computation here (QuickJS refuses
    // a much larger BigInt): past the 1 s budget, the watchdog stops the first.
    await createWebhook(gql, 'big-number', 'async function bigNumber(instance) { let length = 0; for (let i = 0; i < 4; i++) length += (3n ** 600000n).toString().length; return length; }');
    await gqlData(gql, 'mutation($n: String!, $v: String!) { setEnvironmentVariable(name: $n, value: $v) { name } }', { n: 'PAY_SECRET', v: PAY_SECRET });
    await createWebhook(gql, 'pay-confirm', PAY_CONFIRM);
  });

  afterAll(async () => {
    await server?.close();
  });

  it('answers 200 with what the code returns, as JSON', async () => {
    const result = await call('Echo-Hook', { order: 7, items: ['a', 'b'] });
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toMatch(/^application\/json/);
    expect(result.body).toEqual({ received: { order: 7, items: ['a', 'b'] }, answered: true });
  });

  it.each([
    ['a string', 'paid'],
    ['a number', 42],
    ['null', null],
    ['an array', [1, { two: 2 }]],
    ['false', false],
  ])('answers 200 with %s returned by the code, serialised as JSON', async (_label, value) => {
    const result = await call('returns', { value });
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toMatch(/^application\/json/);
    expect(result.text).toBe(JSON.stringify(value));
  });

  it('answers 204 with no body when the code returns undefined', async () => {
    const result = await call('silent', { any: 'thing' });
    expect(result.status).toBe(204);
    expect(result.text).toBe('');
  });

  it('finds the webhook by its name in any letter case', async () => {
    const result = await call('echo-hook', { n: 1 });
    expect(result.status).toBe(200);
    expect(result.body.received).toEqual({ n: 1 });
  });

  it('runs the code with instance null for a request without a body', async () => {
    const result = await call('Echo-Hook', undefined, {});
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ received: null, answered: true });
  });

  it.each(['unknown-hook', 'zz', 'x'])('answers 404 for %s, which names no webhook', async (name) => {
    const result = await call(name, {});
    expect(result.status).toBe(404);
    expect(result.body.error.code).toBe('NOT_FOUND');
  });

  it('answers another method than POST with 405 and Allow: POST, for any name and without running the code', async () => {
    for (const [method, name] of [['GET', 'Echo-Hook'], ['GET', 'unknown-hook'], ['PUT', 'Echo-Hook'], ['DELETE', 'zz'], ['PATCH', 'Echo-Hook']]) {
      const answer = await fetch(`${server.url}/api/webhook/${name}`, { method });
      expect(answer.status).toBe(405);
      expect(answer.headers.get('allow')).toBe('POST');
      expect((await answer.json()).error).toEqual({ code: 'METHOD_NOT_ALLOWED', message: `Webhooks answer POST only, not ${method}` });
    }
    const head = await fetch(`${server.url}/api/webhook/Echo-Hook`, { method: 'HEAD' });
    expect(head.status).toBe(405);
  });

  it('answers 404 for a hook that exists but is not a webhook', async () => {
    const tableId = (await db().selectFrom('app_tables').select('id').where('name', '=', 'Order').executeTakeFirstOrThrow()).id;
    await gqlData(gql, 'mutation($c: String!, $t: ID!) { createHook(name: "orderCheck", type: "beforeSave", tableId: $t, content: $c) { _id } }', {
      c: 'async function check(instance) { return instance; }',
      t: tableId,
    });
    const result = await call('orderCheck', {});
    expect(result.status).toBe(404);
  });

  it('answers 500 with a safe message when the code throws, and the run log keeps the error', async () => {
    const result = await call('failing', { detail: 'db-password-hunter2' });
    expect(result.status).toBe(500);
    expect(result.body).toEqual({ error: { code: 'HOOK_FAILED', message: "The webhook's code failed", details: { reason: 'thrown' } } });
    expect(result.text).not.toContain('hunter2');
    expect(result.text).not.toMatch(/stack|\bat /);
    const runs = await hookRuns(server, 'failing');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger: 'webHook', outcome: 'error', error: 'internal detail db-password-hunter2' });
    expect(runs[0]!.hook_id).not.toBeNull();
  });

  it('never reveals an environment value a failing code puts in its error, neither to the caller nor in the run log', async () => {
    const result = await call('leaky', {});
    expect(result.status).toBe(500);
    expect(result.text).not.toContain(PAY_SECRET);
    const [run] = await hookRuns(server, 'leaky');
    expect(run!.outcome).toBe('error');
    expect(run!.error).not.toContain(PAY_SECRET);
  });

  it('answers 413 for a body over 2 MB without running the code', async () => {
    const before = (await hookRuns(server, 'Echo-Hook')).length;
    const result = await call('Echo-Hook', { blob: 'x'.repeat(2 * 1024 * 1024) });
    expect(result.status).toBe(413);
    expect(result.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await hookRuns(server, 'Echo-Hook')).toHaveLength(before);
  });

  it.each([
    ['malformed JSON', '{"order": 7', { 'content-type': 'application/json' }, 400, 'BAD_INPUT'],
    ['an empty JSON body', '', { 'content-type': 'application/json' }, 400, 'BAD_INPUT'],
    ['a binary body', 'order=7', { 'content-type': 'application/octet-stream' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['an image', 'GIF89a', { 'content-type': 'image/gif' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['JSON nested 10 000 levels deep', '['.repeat(10_000) + ']'.repeat(10_000), { 'content-type': 'application/json' }, 400, 'BAD_INPUT'],
  ])('answers %s with the right client error and runs no code', async (_label, body, headers, status, code) => {
    const before = (await hookRuns(server, 'Echo-Hook')).length;
    const result = await call('Echo-Hook', body, headers);
    expect(result.status).toBe(status);
    expect(result.body.error.code).toBe(code);
    expect(await hookRuns(server, 'Echo-Hook')).toHaveLength(before);
  });

  it('gives the code the request headers, so it can check a token', async () => {
    const allowed = await call('token-check', {}, { 'content-type': 'application/json', 'x-webhook-token': 'let-me-in', cookie: 'session=abc' });
    expect(allowed.status).toBe(200);
    expect(allowed.body.headers).toMatchObject({ 'x-webhook-token': 'let-me-in', 'content-type': 'application/json' });
    expect(allowed.body.headers).not.toHaveProperty('cookie');
    const refused = await call('token-check', {}, { 'content-type': 'application/json', 'x-webhook-token': 'guess' });
    expect(refused.status).toBe(500);
  });

  it.each(['64:ff9b::127.0.0.1', '::ffff:7f00:1', '2002:7f00:1::1', '::127.0.0.1', '64:ff9b:1::8.8.8.8'])(
    'refuses a fetch from hook code to [%s], an address carrying an internal IPv4 address',
    async (address) => {
      await createWebhook(gql, `fetcher-${address.replace(/[^0-9a-f]/gi, '')}`, `async () => { try { await fetch('http://[${address}]:${new URL(server.url).port}/healthz'); return 'reached'; } catch (error) { return error.message; } }`);
      const result = await call(`fetcher-${address.replace(/[^0-9a-f]/gi, '')}`, {});
      expect(result.status).toBe(200);
      expect(result.body).toMatch(/^fetch refused: .* is a (loopback|local-use NAT64) address; hooks may not reach it unless TRELLIS_HOOK_EGRESS_ALLOW lists it$/);
    },
  );

  it('answers a db call with more than 2 MB of arguments with the limit, not an engine error, and writes nothing', async () => {
    await createWebhook(gql, 'big-write', "async () => { try { await db.create('Order', { title: 'x'.repeat(3 * 1024 * 1024) }); return 'written'; } catch (error) { return error.message; } }");
    const before = (await orderRows()).length;
    const result = await call('big-write', {});
    expect(result.status).toBe(200);
    expect(result.body).toBe('the arguments of one call may hold at most 2097152 characters in all');
    expect((await orderRows()).length).toBe(before);
  });

  it('sends no CORS headers: webhooks are called server to server', async () => {
    const result = await call('Echo-Hook', {}, { 'content-type': 'application/json', origin: 'https://evil.example' });
    expect(result.status).toBe(200);
    expect(result.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('runs the code exactly once per call: each call creates one record, with no author', async () => {
    const before = await orderRows();
    const created = [];
    for (const title of ['first', 'second', 'third']) {
      const result = await call('order-intake', { title });
      expect(result.status).toBe(200);
      created.push(result.body);
    }
    const after = await orderRows();
    expect(after).toHaveLength(before.length + 3);
    const added = after.filter((row) => !before.some((old) => old._id === row._id));
    expect(added.map((row) => row.title)).toEqual(['first', 'second', 'third']);
    expect(added.every((row) => row._created_by === null)).toBe(true);
    expect(created.map((record) => record._id).sort()).toEqual(added.map((row) => row._id).sort());
    expect(await hookRuns(server, 'order-intake')).toHaveLength(3);
  });

  it.each([
    ['an infinite loop', 'spin', 'timeout'],
    ['unbounded allocation', 'hog', 'memory'],
    ['unbounded allocation in pieces each under the limit', 'nibbler', 'memory'],
    ['a built-in computing natively past the CPU limit', 'big-number', 'timeout'],
  ])('stops %s with 500 while the server keeps answering', async (_label, name, reason) => {
    const [result, health] = await Promise.all([call(name, {}), fetch(`${server.url}/healthz`)]);
    expect(result.status).toBe(500);
    expect(result.body.error).toMatchObject({ code: 'HOOK_FAILED', details: { reason } });
    expect(health.status).toBe(200);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const [run] = await hookRuns(server, name);
    expect(run!.outcome).toBe(reason);
  });

  describe('scenario 4: a payment provider calls in', () => {
    const sign = (body: unknown) => createHmac('sha256', PAY_SECRET).update(JSON.stringify(body)).digest('hex');

    it('marks the order paid and answers { ok: true } for a correctly signed call', async () => {
      const orderId = await createOrder('paid by provider');
      const body = { orderId, amount: 125.5, currency: 'EUR' };
      const result = await call('pay-confirm', body, { 'content-type': 'application/json', 'x-pay-signature': sign(body) });
      expect(result.status).toBe(200);
      expect(result.body).toEqual({ ok: true });
      const order = (await gqlData(gql, 'query($Id: ID!) { getOrder(Id: $Id) { paid _updatedBy } }', { Id: orderId })).getOrder;
      expect(order).toEqual({ paid: true, _updatedBy: null });
    });

    it('answers 500 to a forged signature and leaves the order unpaid', async () => {
      const orderId = await createOrder('forged');
      const body = { orderId, amount: 125.5, currency: 'EUR' };
      const forged = createHmac('sha256', 'not-the-secret').update(JSON.stringify(body)).digest('hex');
      const result = await call('pay-confirm', body, { 'content-type': 'application/json', 'x-pay-signature': forged });
      expect(result.status).toBe(500);
      expect(result.text).not.toContain(PAY_SECRET);
      const rows = await orderRows();
      expect(rows.find((row) => row._id === orderId)!.paid).toBeNull();
    });

    it('answers 500 when the signature header is missing', async () => {
      const orderId = await createOrder('unsigned');
      const result = await call('pay-confirm', { orderId });
      expect(result.status).toBe(500);
    });

    it('keeps every run in the run log', async () => {
      const runs = await hookRuns(server, 'pay-confirm');
      expect(runs.map((run) => run.outcome)).toEqual(['ok', 'error', 'error']);
      expect(runs.every((run) => run.trigger === 'webHook')).toBe(true);
      expect(runs[1]!.error).toBe('signature mismatch');
    });

    it('never exposes the secret through the builder API', async () => {
      const listed = await gql('{ environmentVariables { name } }');
      expect(JSON.stringify(listed.body)).not.toContain(PAY_SECRET);
    });
  });
});

describe('webhook rate limit', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
    const gql = graphqlClient(server.url, await login(server.url));
    await createWebhook(gql, 'first-hook', 'async function first(instance) { return 1; }');
    await createWebhook(gql, 'second-hook', 'async function second(instance) { return 2; }');
  });

  afterAll(async () => {
    await server?.close();
  });

  it('answers the eleventh call in a minute, across all webhooks, with 429 and Retry-After, without running the code', async () => {
    await callWebhook(server.url, 'no-such-hook', {});
    for (let i = 0; i < 10; i += 1) {
      const result = await callWebhook(server.url, i % 2 === 0 ? 'first-hook' : 'second-hook', {});
      expect(result.status).toBe(200);
    }
    for (const name of ['first-hook', 'second-hook']) {
      const limited = await callWebhook(server.url, name, {});
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe('RATE_LIMITED');
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    const runs = [...(await hookRuns(server, 'first-hook')), ...(await hookRuns(server, 'second-hook'))];
    expect(runs).toHaveLength(10);
  });
});

describe('webhook name guessing', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ TRELLIS_AUTH_FAILURES_PER_MINUTE: '3' });
    const gql = graphqlClient(server.url, await login(server.url));
    await createWebhook(gql, 'real-hook', 'async function real(instance) { return true; }');
  });

  afterAll(async () => {
    await server?.close();
  });

  it('counts calls naming no webhook per client IP and then refuses every call from that IP with 429', async () => {
    expect((await callWebhook(server.url, 'real-hook', {})).status).toBe(200);
    for (const name of ['guess-1', 'guess-2', 'guess-3']) expect((await callWebhook(server.url, name, {})).status).toBe(404);
    for (const name of ['guess-4', 'real-hook']) {
      const limited = await callWebhook(server.url, name, {});
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });
});
