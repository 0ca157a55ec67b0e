import { get as httpGet } from 'node:http';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER, TEST_ENV } from '../helpers/env.js';
import { connectMcp, createUserKey, mcpPost } from '../helpers/mcp.js';
import { spawnServer, type SpawnedServer } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';
import { freshDataEnv, gqlData, graphqlClient, login, postJson, startTestServer, usingPostgres, type TestServer } from '../helpers/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The value of one sample of the exposition text, or undefined when the series is not there. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The value of one series on the server's `/metrics`, or undefined when it is not there. */
async function scrapedSample(url: string, series: string): Promise<number | undefined> {
  return sample(await (await fetch(`${url}/metrics`)).text(), series);
}

describe('request ids, metrics and their protection', () => {
  let server: TestServer;
  let owner: ReturnType<typeof graphqlClient>;
  let session: string;
  let tableId: string;

  beforeAll(async () => {
    server = await startTestServer({ TRELLIS_WEBHOOK_RATE_LIMIT: '4' });
    session = await login(server.url);
    owner = graphqlClient(server.url, session);
    tableId = (await gqlData(owner, 'mutation { createTable(name: "Parcels", fields: [{ name: "label", type: "text" }]) { _id } }')).createTable._id;
    await gqlData(owner, 'mutation($t: ID!, $c: String!) { createHook(name: "stamp", type: "beforeSave", tableId: $t, content: $c) { _id } }', {
      t: tableId,
      c: 'async function (instance) { instance.label = (instance.label ?? "") + "!"; return instance; }',
    });
    await gqlData(owner, 'mutation($c: String!) { createHook(name: "echo", type: "webHook", content: $c) { _id } }', { c: 'async function (body) { return body; }' });
  });
  afterAll(() => server?.close());

  it('answers every request with an x-request-id: the caller’s when it is a plain token, a new UUID otherwise', async () => {
    const fresh = await fetch(`${server.url}/healthz`);
    expect(fresh.headers.get('x-request-id')).toMatch(UUID);
    const given = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'lb-7f3a.1:2' } });
    expect(given.headers.get('x-request-id')).toBe('lb-7f3a.1:2');
    for (const bad of ['has space', 'x'.repeat(129), 'quote"d', '<script>']) {
      const answer = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': bad } });
      expect(answer.headers.get('x-request-id')).toMatch(UUID);
    }
    const missing = await fetch(`${server.url}/no/such/route`, { headers: { 'x-request-id': 'req-404' } });
    expect([missing.status, missing.headers.get('x-request-id')]).toEqual([404, 'req-404']);
  });

  it('records the request id with each MCP audit entry and each hook run, webhook or save hook', async () => {
    const { apiKey } = await createUserKey(server, { email: 'observer@example.com', role: 'admin', scopes: ['config:read', 'menus:write'] });
    const client = await connectMcp(server, apiKey);
    try {
      // A write: its audit entry commits with the write, and it counts in the metrics as a read does.
      const written = await client.callTool({ name: 'upsert_menu', arguments: { name: 'Observed', entries: [] } });
      expect(written.isError, JSON.stringify(written.content)).toBeFalsy();
      // The SDK's transport sends the same headers with every request of this client.
      const tagged = await fetch(`${server.url}/api/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', 'x-request-id': 'req-mcp-1' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_features', arguments: {} } }),
      });
      expect([tagged.status, tagged.headers.get('x-request-id')]).toEqual([200, 'req-mcp-1']);
    } finally {
      await client.close();
    }
    // An MCP answer leaves only once its audit entry is stored.
    const audit = await gqlData(owner, '{ mcpAuditLogs(tool: "list_features", limit: 5) { items { tool outcome requestId } } }');
    expect(audit.mcpAuditLogs.items).toContainEqual({ tool: 'list_features', outcome: 'ok', requestId: 'req-mcp-1' });

    const webhook = await fetch(`${server.url}/api/webhook/echo`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'req-hook-1' }, body: '{"n":1}' });
    expect(webhook.status).toBe(200);
    const create = await postJson(`${server.url}/graphql`, { query: 'mutation { createParcels(data: { label: "box" }) { label } }' }, { authorization: `Bearer ${session}`, 'x-request-id': 'req-save-1' });
    expect(create.body.data.createParcels.label).toBe('box!');
    await server.server.services.hookRuntime.flushRunLog();
    const runs = (await gqlData(owner, '{ hookRuns(limit: 10) { items { hookName trigger requestId } } }')).hookRuns.items;
    expect(runs).toContainEqual({ hookName: 'echo', trigger: 'webHook', requestId: 'req-hook-1' });
    expect(runs).toContainEqual({ hookName: 'stamp', trigger: 'beforeSave', requestId: 'req-save-1' });
  });

  it('serves Prometheus metrics to a caller on this machine: requests by route pattern, tool calls, hook runs, rate limits, pool, outbox, event loop', async () => {
    for (let i = 0; i < 5; i += 1) await fetch(`${server.url}/api/webhook/echo?signature=very-secret-value`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const answer = await fetch(`${server.url}/metrics`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await answer.text();
    expect(sample(text, 'trellis_http_requests_total{method="GET",route="/healthz",status="200"}')).toBeGreaterThanOrEqual(6);
    expect(sample(text, 'trellis_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(sample(text, 'trellis_http_requests_total{method="POST",route="/api/webhook/:name",status="429"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'trellis_http_request_duration_seconds_count{method="POST",route="/graphql",status_class="2xx"}')).toBeGreaterThanOrEqual(4);
    expect(sample(text, 'trellis_mcp_tool_calls_total{tool="list_features",outcome="ok"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'trellis_mcp_tool_call_duration_seconds_count{tool="list_features"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'trellis_mcp_tool_calls_total{tool="upsert_menu",outcome="ok"}')).toBe(1);
    expect(sample(text, 'trellis_hook_runs_total{type="webHook",outcome="ok"}')).toBeGreaterThanOrEqual(4);
    expect(sample(text, 'trellis_hook_runs_total{type="beforeSave",outcome="ok"}')).toBe(1);
    expect(sample(text, 'trellis_hook_queue_wait_seconds_count{type="webHook"}')).toBeGreaterThanOrEqual(4);
    expect(sample(text, 'trellis_hook_run_duration_seconds_bucket{le="+Inf",type="beforeSave"}')).toBe(1);
    expect(sample(text, 'trellis_rate_limit_refusals_total{kind="webhook"}')).toBeGreaterThanOrEqual(1);
    // PostgreSQL: the pool's connections (idle ones close after 10 s); embedded: its one connection.
    for (const state of ['total', 'idle', 'waiting']) expect(sample(text, `trellis_db_pool_connections{state="${state}"}`)).toBeGreaterThanOrEqual(0);
    if (!usingPostgres) expect(sample(text, 'trellis_db_pool_connections{state="total"}')).toBe(1);
    // Creating the two hooks queued an e-mail to the owner each; no SMTP server is configured here.
    expect(sample(text, 'trellis_mail_outbox_queued{state="pending"}')).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'trellis_mail_outbox_queued{state="failed"}')).toBe(0);
    expect(text).toContain('trellis_nodejs_eventloop_lag_seconds ');
    expect(text).toContain('trellis_process_resident_memory_bytes ');
    // Route patterns only: no raw path, query string or secret ever becomes a label.
    expect(text).not.toContain('very-secret-value');
    expect(text).not.toContain('/api/webhook/echo');
    expect(text).not.toContain('/no/such/route');
  });

  it('refuses /metrics to a request naming another host, as a page of another site rebound to this machine would', async () => {
    const port = new URL(server.url).port;
    const statusFor = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const request = httpGet(`${server.url}/metrics`, { headers: { host } }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on('error', reject);
      });
    expect(await statusFor(`attacker.example:${port}`)).toBe(403);
    expect(await statusFor(`127.attacker.example:${port}`)).toBe(403);
    expect(await statusFor(`localhost:${port}`)).toBe(200);
    expect(await statusFor(`127.0.0.1:${port}`)).toBe(200);
  });

  it('refuses /metrics to a request that came through a proxy, even from this machine', async () => {
    const proxied: Record<string, string>[] = [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }, { 'x-real-ip': '203.0.113.9' }];
    for (const header of proxied) {
      const answer = await fetch(`${server.url}/metrics`, { headers: header });
      expect(answer.status).toBe(403);
      expect((await answer.json()).error).toEqual({ code: 'FORBIDDEN', message: expect.stringContaining('set TRELLIS_METRICS_TOKEN') });
    }
  });
});

describe('e-mail delivery failures on /metrics', () => {
  const FAILURES = 'trellis_mail_delivery_failures_total';
  let smtp: SmtpReceiver;
  let server: TestServer;

  beforeAll(async () => {
    smtp = await startSmtpReceiver({ refuseRecipients: true });
    server = await startTestServer({ TRELLIS_SMTP_URL: smtp.url, TRELLIS_MAIL_RETRY_BASE_MS: '100' });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it('counts an e-mail the SMTP server refuses with a permanent error in trellis_mail_delivery_failures_total', async () => {
    // Exported from the start, so that a rate() over it sees the first failure.
    expect(await scrapedSample(server.url, FAILURES)).toBe(0);
    const owner = graphqlClient(server.url, await login(server.url));
    // Creating a hook queues an e-mail to the owner, which the receiver refuses.
    await gqlData(owner, 'mutation($c: String!) { createHook(name: "mailed", type: "webHook", content: $c) { _id } }', { c: 'async function (body) { return body; }' });
    const failures = await waitFor('a counted delivery failure', () => scrapedSample(server.url, FAILURES));
    expect(failures).toBeGreaterThanOrEqual(1);
    expect(smtp.refused).toContain(OWNER.email);
  });
});

describe('a server with TRELLIS_METRICS_TOKEN, logging at info', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  let spawned: SpawnedServer;
  const token = 'scrape-token-0123456789';

  beforeAll(async () => {
    const env = { ...TEST_ENV, ...(await freshDataEnv(cleanups, 'trellis-metrics-')), TRELLIS_LOG_LEVEL: 'info', TRELLIS_METRICS_TOKEN: token };
    spawned = await spawnServer(env, 60_000);
    cleanups.push(() => void spawned.child.kill('SIGKILL'));
  }, 90_000);
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('asks for the bearer token, compares it whole, and serves the metrics with it', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, token]) {
      const answer = await fetch(`${spawned.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="trellis-metrics"');
    }
    const answer = await fetch(`${spawned.url}/metrics`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.9' } });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('trellis_http_requests_total');
  });

  it('logs one line per answer with the request id, route, status and duration, without the query string or the token', async () => {
    const answer = await fetch(`${spawned.url}/api/auth/token?apiKey=trik_leaked-in-a-query-0123`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-log-1' },
      body: JSON.stringify({ clientId: 'nobody', apiKey: 'trik_wrong-key-0123456789abcdef' }),
    });
    expect(answer.status).toBe(401);
    await fetch(`${spawned.url}/healthz`, { headers: { 'x-request-id': 'req-probe-1' } });
    const logLines = () =>
      spawned
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    // The line is written once the answer has left: it may reach this process a moment after the answer.
    const line = await waitFor('the log line of the request', () => logLines().find((entry) => entry.reqId === 'req-log-1' && entry.msg === 'request answered'));
    // A request after the probe: once its line is there, the probe's would be too.
    await fetch(`${spawned.url}/no/such/page`, { headers: { 'x-request-id': 'req-log-2' } });
    await waitFor('the log line of a later request', () => logLines().some((entry) => entry.reqId === 'req-log-2') || undefined);
    const lines = logLines();
    expect(line).toMatchObject({ level: 30, method: 'POST', route: '/api/auth/token', path: '/api/auth/token', status: 401 });
    expect(typeof line!.ms).toBe('number');
    // Probes are logged at debug level only.
    expect(lines.some((entry) => entry.reqId === 'req-probe-1')).toBe(false);
    expect(spawned.output()).not.toContain('leaked-in-a-query');
    expect(spawned.output()).not.toContain('wrong-key-0123456789abcdef');
    expect(spawned.output()).not.toContain(token);
  });
});

describe('rate-limit refusals on /metrics', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ TRELLIS_MCP_RATE_LIMIT: '2', TRELLIS_AUTH_FAILURES_PER_MINUTE: '2' });
  });
  afterAll(() => server?.close());

  it('counts every 429 by the limit that refused it, the MCP endpoint (its own error handler) included, and names the limit in the answer', async () => {
    const { apiKey } = await createUserKey(server, { email: 'limits@example.com', role: 'admin', scopes: ['config:read'] });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await mcpPost(server, apiKey, { jsonrpc: '2.0', id: i, method: 'tools/list' })).status);
    expect(statuses).toEqual([200, 200, 429]);

    const failures: { status: number; body: { error?: { details?: unknown } } }[] = [];
    for (let i = 0; i < 3; i += 1) failures.push(await postJson(`${server.url}/graphql`, { query: '{ __typename }' }, { authorization: 'Bearer not-a-token' }));
    expect(failures.map(({ status }) => status)).toEqual([401, 401, 429]);
    expect(failures[2]!.body.error?.details).toMatchObject({ limit: 'auth-failures' });

    expect(await scrapedSample(server.url, 'trellis_rate_limit_refusals_total{kind="mcp"}')).toBe(1);
    expect(await scrapedSample(server.url, 'trellis_rate_limit_refusals_total{kind="auth-failures"}')).toBe(1);
  });
});
