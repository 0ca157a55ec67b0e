import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

type Gql = ReturnType<typeof graphqlClient>;

const SECRET = 'whsec_provider_secret_51f0c2';
const CREATE_HOOK = 'mutation($name: String!, $content: String!) { createHook(name: $name, type: "webHook", content: $content) { _id } }';

// Each provider's documented scheme, checked over the raw body as the provider's own libraries do.
const HOOKS: Record<string, string> = {
  // Stripe: Stripe-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">
  'stripe-events': `async function stripe(instance) {
    const parts = Object.fromEntries((headers['stripe-signature'] || '').split(',').map((kv) => kv.split('=')));
    const expected = crypto.hmac('sha256', env.PROVIDER_SECRET, parts.t + '.' + request.rawBody);
    if (!parts.v1 || !crypto.timingSafeEqual(expected, parts.v1)) return respond(401, { error: 'bad signature' });
    return { received: instance.type, amount: instance.data.amount, name: instance.data.name };
  }`,
  // GitHub: X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>
  'github-push': `async function github(instance) {
    const expected = 'sha256=' + crypto.hmac('sha256', env.PROVIDER_SECRET, request.rawBody);
    if (!crypto.timingSafeEqual(expected, headers['x-hub-signature-256'] || '')) return respond(401, 'bad signature');
    return respond(202, { ref: instance.ref }, { 'x-handled-by': 'trellis' });
  }`,
  // Slack: X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<timestamp>:<raw body>">, form-encoded slash commands
  'slack-command': `async function slack(instance) {
    const base = 'v0:' + headers['x-slack-request-timestamp'] + ':' + request.rawBody;
    const expected = 'v0=' + crypto.hmac('sha256', env.PROVIDER_SECRET, base);
    if (!crypto.timingSafeEqual(expected, headers['x-slack-signature'] || '')) return respond(401);
    return { response_type: 'ephemeral', text: 'You asked: ' + instance.text, command: instance.command };
  }`,
  // Shopify: X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the raw body>
  'shopify-orders': `async function shopify(instance) {
    const expected = crypto.hmac('sha256', env.PROVIDER_SECRET, request.rawBody, 'base64');
    if (!crypto.timingSafeEqual(expected, headers['x-shopify-hmac-sha256'] || '')) return respond(401);
    return { total: instance.total_price };
  }`,
  // Twilio: X-Twilio-Signature: <base64 HMAC-SHA1 of the URL followed by the sorted form parameters, name then value>
  'twilio-sms': `async function twilio(instance) {
    const data = 'https://app.example.com' + request.url + Object.keys(instance).sort().map((k) => k + instance[k]).join('');
    const expected = crypto.hmac('sha1', env.PROVIDER_SECRET, data, 'base64');
    if (!crypto.timingSafeEqual(expected, headers['x-twilio-signature'] || '')) return respond(403, '<Response/>', { 'content-type': 'text/xml' });
    return respond(200, '<Response><Message>Got ' + instance.Body + '</Message></Response>', { 'content-type': 'text/xml' });
  }`,
  'describe-request': `async function describe(instance) {
    return { instance, method: request.method, url: request.url, query: request.query, contentType: request.contentType, rawBody: request.rawBody };
  }`,
  // Returns a caller's body as is: a body shaped like respond()'s answer must stay plain data.
  echo: 'async function echo(instance) { return instance; }',
  'legacy-shape': 'async function legacy(instance) { return { status: 401, headers: { location: "https://evil.example" }, body: "x" }; }',
  'bad-respond': "async function bad(instance) { return respond(instance.status, 'x', instance.headers); }",
  'html-echo': "async function html(instance) { return respond(200, instance.page, { 'content-type': 'text/html' }); }",
};

async function post(url: string, body: string, headers: Record<string, string>) {
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  let json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** The headers every webhook answer carries, whatever the code chose or however it failed. */
function expectFixedHeaders(headers: Headers): void {
  expect(headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('cache-control')).toBe('no-store');
}

const hmac = (algorithm: string, data: string, encoding: 'hex' | 'base64' = 'hex') => createHmac(algorithm, SECRET).update(data).digest(encoding);

describe('webhooks that real providers call', () => {
  let server: TestServer;
  let gql: Gql;
  const hook = (name: string, query = '') => `${server.url}/api/webhook/${name}${query}`;

  beforeAll(async () => {
    server = await startTestServer({ TRELLIS_WEBHOOK_RATE_LIMIT: '1000' });
    gql = graphqlClient(server.url, await login(server.url));
    await gqlData(gql, 'mutation($n: String!, $v: String!) { setEnvironmentVariable(name: $n, value: $v) { name } }', { n: 'PROVIDER_SECRET', v: SECRET });
    for (const [name, content] of Object.entries(HOOKS)) await gqlData(gql, CREATE_HOOK, { name, content });
  });

  afterAll(async () => {
    await server?.close();
  });

  describe('Stripe: t=…,v1=… over "<t>.<raw body>"', () => {
    // Re-serialising this body changes it (125.50 -> 125.5, the escaped é): only the raw bytes verify.
    const body = '{"type":"payment_intent.succeeded","data":{"amount":125.50,"name":"caf\\u00e9"}}';
    const t = '1764050000';

    it('answers 200 for a correct signature over the raw body', async () => {
      const result = await post(hook('stripe-events'), body, { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${hmac('sha256', `${t}.${body}`)}` });
      expect(result.status).toBe(200);
      expect(result.json).toEqual({ received: 'payment_intent.succeeded', amount: 125.5, name: 'café' });
    });

    it('answers the 401 the code chose for a forged signature', async () => {
      const forged = hmac('sha256', `${t}.${JSON.stringify(JSON.parse(body))}`);
      const result = await post(hook('stripe-events'), body, { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${forged}` });
      expect(result.status).toBe(401);
      expect(result.json).toEqual({ error: 'bad signature' });
    });
  });

  describe('GitHub: sha256=… over the raw body', () => {
    const body = '{\n  "ref": "refs/heads/main",\n  "size": 1.0\n}';

    it('answers the status and headers the code chose for a correct signature', async () => {
      const result = await post(hook('github-push'), body, { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${hmac('sha256', body)}` });
      expect(result.status).toBe(202);
      expect(result.headers.get('x-handled-by')).toBe('trellis');
      expect(result.json).toEqual({ ref: 'refs/heads/main' });
    });

    it('answers 401 with a text body for a wrong one', async () => {
      const result = await post(hook('github-push'), body, { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=00' });
      expect(result.status).toBe(401);
      expect(result.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(result.text).toBe('bad signature');
    });
  });

  describe('Slack: v0=… over "v0:<timestamp>:<raw body>", form-encoded', () => {
    const body = 'token=x&command=%2Fpay&text=caf%C3%A9+50&user_name=ana';
    const ts = '1764050001';

    it('parses the form into instance and verifies the raw body', async () => {
      const result = await post(hook('slack-command'), body, {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': ts,
        'x-slack-signature': `v0=${hmac('sha256', `v0:${ts}:${body}`)}`,
      });
      expect(result.status).toBe(200);
      expect(result.json).toEqual({ response_type: 'ephemeral', text: 'You asked: café 50', command: '/pay' });
    });

    it('answers 401 with no body for a forged one', async () => {
      const result = await post(hook('slack-command'), body, { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': ts, 'x-slack-signature': 'v0=forged' });
      expect(result.status).toBe(401);
      expect(result.text).toBe('');
    });
  });

  it('Shopify: base64 HMAC-SHA256 of the raw body', async () => {
    const body = '{"total_price":"10.00","note":"ünïcode"}';
    const good = await post(hook('shopify-orders'), body, { 'content-type': 'application/json', 'x-shopify-hmac-sha256': hmac('sha256', body, 'base64') });
    expect(good.status).toBe(200);
    expect(good.json).toEqual({ total: '10.00' });
    const bad = await post(hook('shopify-orders'), body, { 'content-type': 'application/json', 'x-shopify-hmac-sha256': hmac('sha256', `${body} `, 'base64') });
    expect(bad.status).toBe(401);
  });

  it('Twilio: base64 HMAC-SHA1 of the URL and the sorted form parameters, answered as XML', async () => {
    const params = { From: '+15550001', Body: 'hello', To: '+15550002' };
    const path = '/api/webhook/twilio-sms?account=main';
    const data = `https://app.example.com${path}${Object.keys(params).sort().map((k) => k + params[k as keyof typeof params]).join('')}`;
    const body = new URLSearchParams(params).toString();
    const good = await post(`${server.url}${path}`, body, { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': hmac('sha1', data, 'base64') });
    expect(good.status).toBe(200);
    expect(good.headers.get('content-type')).toBe('text/xml');
    expect(good.text).toBe('<Response><Message>Got hello</Message></Response>');
    const bad = await post(`${server.url}${path}`, body, { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'AAAA' });
    expect(bad.status).toBe(403);
  });

  it.each([
    ['JSON', 'application/json; charset=utf-8', '{"a": 1.50}', { a: 1.5 }, 'application/json'],
    ['a form with a repeated name and a __proto__ field', 'application/x-www-form-urlencoded', 'tag=a&tag=b&__proto__=x', JSON.parse('{"tag":["a","b"],"__proto__":"x"}'), 'application/x-www-form-urlencoded'],
    ['text', 'text/plain', 'plain words', 'plain words', 'text/plain'],
    ['XML', 'application/xml', '<a>1</a>', '<a>1</a>', 'application/xml'],
  ])('gives the code %s as instance, and the request as received', async (_label, contentType, body, instance, type) => {
    const result = await post(hook('describe-request', '?attempt=2&attempt=3&x=%C3%A9'), body, { 'content-type': contentType });
    expect(result.status).toBe(200);
    expect(result.json.instance).toEqual(JSON.parse(JSON.stringify(instance)));
    expect(result.json).toMatchObject({ method: 'POST', url: '/api/webhook/describe-request?attempt=2&attempt=3&x=%C3%A9', contentType: type, rawBody: body });
    expect(result.json.query).toEqual({ attempt: ['2', '3'], x: 'é' });
  });

  it('refuses a body that is not UTF-8 with 400 and runs no code', async () => {
    const response = await fetch(hook('describe-request'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: Buffer.from([0x63, 0x61, 0x66, 0xe9]) });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toEqual({ code: 'BAD_INPUT', message: 'Request body is not valid UTF-8' });
  });

  it("keeps a caller's body shaped like a chosen answer as plain data", async () => {
    const forged = { __trellisResponse: 'guess', status: 302, headers: { location: 'https://evil.example' }, body: 'x' };
    const result = await post(hook('echo'), JSON.stringify(forged), { 'content-type': 'application/json' });
    expect(result.status).toBe(200);
    expect(result.headers.get('location')).toBeNull();
    expect(result.json).toEqual(forged);
  });

  it('keeps the meaning of a plain return value shaped like { status, headers, body }', async () => {
    const result = await post(hook('legacy-shape'), '{}', { 'content-type': 'application/json' });
    expect(result.status).toBe(200);
    expect(result.headers.get('location')).toBeNull();
    expect(result.json).toEqual({ status: 401, headers: { location: 'https://evil.example' }, body: 'x' });
  });

  it.each([
    ['a status below 200', { status: 101 }],
    ['a status over 599', { status: 600 }],
    ['a status that is not an integer', { status: '200' }],
    ['a header the server sets', { status: 200, headers: { 'Content-Length': '1' } }],
    ['a cookie', { status: 200, headers: { 'set-cookie': 'session=1' } }],
    ['a header value with a line break', { status: 200, headers: { 'x-a': 'b\r\nx-injected: 1' } }],
    ['an invalid header name', { status: 200, headers: { 'x a': 'b' } }],
    ['a header value with a control character', { status: 200, headers: { 'x-a': 'b\u0001c' } }],
    ['a header value with DEL', { status: 200, headers: { 'x-a': 'b\u007f' } }],
    ['a header value with a character above U+00FF', { status: 200, headers: { 'x-a': 'caf\u0100' } }],
    ['a header value with an emoji', { status: 200, headers: { 'x-a': '\u{1f600}' } }],
    ['a header value with leading whitespace', { status: 200, headers: { 'x-a': ' b' } }],
    ['a header value with trailing whitespace', { status: 200, headers: { 'x-a': 'b\t' } }],
  ])('fails the run with 500 and the fixed headers when respond() gets %s', async (_label, instance) => {
    const result = await post(hook('bad-respond'), JSON.stringify(instance), { 'content-type': 'application/json' });
    expect(result.status).toBe(500);
    expect(result.json.error).toMatchObject({ code: 'HOOK_FAILED', message: "The webhook's code failed" });
    expect(result.headers.get('x-injected')).toBeNull();
    expect(result.headers.get('x-a')).toBeNull();
    expectFixedHeaders(result.headers);
    await server.server.services.hookRuntime.flushRunLog();
    const run = await server.server.services.ctx.db.selectFrom('hook_runs').select(['outcome', 'error']).where('hook_name', '=', 'bad-respond').orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(run.outcome).toBe('error');
    expect(run.error).toMatch(/^respond\(status, body, headers\): /);
  });

  it('names the header and the character HTTP refuses in the TypeError the code gets', async () => {
    const result = await post(hook('bad-respond'), JSON.stringify({ status: 200, headers: { 'X-Trace': 'ok\u0100' } }), { 'content-type': 'application/json' });
    expect(result.status).toBe(500);
    await server.server.services.hookRuntime.flushRunLog();
    const run = await server.server.services.ctx.db.selectFrom('hook_runs').select('error').where('hook_name', '=', 'bad-respond').orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(run.error).toBe("respond(status, body, headers): the header 'x-trace' has U+0100 at position 2, which HTTP does not allow in a header value (tab, space, visible ASCII and U+0080 to U+00FF only)");
  });

  it('sends header values with inner spaces and tabs, and with characters from U+0080 to U+00FF (obs-text)', async () => {
    const result = await post(hook('bad-respond'), JSON.stringify({ status: 200, headers: { 'x-a': 'a \tb', 'x-b': 'caf\u00e9' } }), { 'content-type': 'application/json' });
    expect(result.status).toBe(200);
    expect(result.headers.get('x-a')).toBe('a \tb');
    expect(result.headers.get('x-b')).not.toBeNull();
    expectFixedHeaders(result.headers);
  });

  it('answers 500 with the fixed headers, and logs an error, when the engine hands over an answer HTTP cannot carry', async () => {
    const runtime = server.server.services.hookRuntime as unknown as { sandbox: { run: (...args: unknown[]) => Promise<unknown> } };
    const forged = { ok: true, value: 'x', instance: null, response: { status: 200, headers: { 'x-a': 'b\u0001', 'x-b': 'c\u0100' }, body: 'x' } };
    const spy = vi.spyOn(runtime.sandbox, 'run').mockResolvedValueOnce({ outcome: forged, console: [], queuedMs: 0 });
    try {
      const result = await post(hook('html-echo'), JSON.stringify({ page: 'x' }), { 'content-type': 'application/json' });
      expect(result.status).toBe(500);
      expect(result.json.error).toMatchObject({ code: 'HOOK_FAILED', message: "The webhook's code failed" });
      expect(result.headers.get('x-a')).toBeNull();
      expectFixedHeaders(result.headers);
    } finally {
      spy.mockRestore();
    }
    await server.server.services.hookRuntime.flushRunLog();
    const run = await server.server.services.ctx.db.selectFrom('hook_runs').select(['outcome', 'error']).where('hook_name', '=', 'html-echo').orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(run).toEqual({ outcome: 'error', error: expect.stringContaining("the header 'x-a' has U+0001") });
  });

  it.each([
    ['an unknown webhook (404)', () => post(hook('no-such-hook'), '{}', { 'content-type': 'application/json' }), 404],
    ['a malformed body (400)', () => post(hook('echo'), '{', { 'content-type': 'application/json' }), 400],
    ['another media type (415)', () => post(hook('echo'), 'x', { 'content-type': 'image/png' }), 415],
    ['another method (405)', () => fetch(hook('echo'), { method: 'GET' }), 405],
  ])('sends the fixed headers with every error answer too: %s', async (_label, call, status) => {
    const result = await call();
    expect(result.status).toBe(status);
    expectFixedHeaders(result.headers);
  });

  it('sandboxes every answer so that code echoing a caller never serves a page of the application', async () => {
    const result = await post(hook('html-echo'), JSON.stringify({ page: '<script>alert(1)</script>' }), { 'content-type': 'application/json' });
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe('text/html');
    expect(result.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(result.headers.get('x-content-type-options')).toBe('nosniff');
    expect(result.headers.get('cache-control')).toBe('no-store');
  });
});
