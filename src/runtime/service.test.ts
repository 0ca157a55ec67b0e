import { createHash, createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../test/helpers/server.js';
import { systemPrincipal } from '../access/permissions.js';
import type { Config } from '../config.js';
import type { HookDb, HookInvocation, HookResult } from '../hooks/run-contract.js';
import { TrellisError } from '../platform/errors.js';
import { HookRuntime } from './service.js';

let server: TestServer;
let runtime: HookRuntime;
let loopback: Server;
let loopbackUrl: string;
const loopbackHits: string[] = [];
/** Requests to /held in progress now, the most at once, and how many are held together before all are answered (or 5 s passed). */
const held = { now: 0, most: 0, together: 1, reached: false, waiting: [] as Array<() => void> };

beforeAll(async () => {
  loopback = createServer((request, response) => {
    loopbackHits.push(`${request.method} ${request.url}`);
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.url === '/slow') return void setTimeout(() => response.end('late'), 2000);
      if (request.url === '/held') {
        held.most = Math.max(held.most, ++held.now);
        // Answer once enough are held at once (or late): a busy machine starting workers slowly then cannot make the test fail.
        const answer = () => {
          held.now -= 1;
          response.end('"held"');
        };
        held.waiting.push(answer);
        const release = () => held.waiting.splice(0).forEach((waiting) => setTimeout(waiting, 50));
        if (held.reached || held.now >= held.together) {
          held.reached = true;
          release();
        } else setTimeout(() => held.waiting.includes(answer) && release(), 12_000);
        return;
      }
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ path: request.url, method: request.method, body, signature: request.headers['x-signature'] ?? null }));
    });
  });
  await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
  loopbackUrl = `http://127.0.0.1:${(loopback.address() as AddressInfo).port}`;
  // The default computation limit, which the limits' tests below name (TEST_ENV gives servers more).
  server = await startTestServer({ TRELLIS_HOOK_CPU_MS: '200' });
  runtime = server.server.services.hookRuntime;
});

afterAll(async () => {
  await Promise.all(extraRuntimes.map((extra) => extra.close()));
  await server?.close();
  await new Promise((resolve) => loopback?.close(resolve));
});

/** A runtime on the test server's database with some configuration changed. */
const extraRuntimes: HookRuntime[] = [];

function runtimeWith(config: Partial<Config>): HookRuntime {
  const ctx = server.server.services.ctx;
  const extra = new HookRuntime({ ...ctx, config: { ...ctx.config, ...config } });
  extraRuntimes.push(extra);
  return extra;
}

let roomyRuntime: HookRuntime | undefined;

/** A runtime whose CPU budget leaves room for tests about other limits. */
function roomy(): HookRuntime {
  return (roomyRuntime ??= runtimeWith({ hookCpuMs: 10_000 }));
}

function hook(content: string, name = 'test-hook'): HookInvocation['hook'] {
  return { _id: `unsaved-${name}`, name, type: 'webHook', content, contentSha256: createHash('sha256').update(content).digest('hex') };
}

function run(content: string, extra: Partial<HookInvocation> = {}, on: HookRuntime = runtime): Promise<HookResult> {
  return on.run({ hook: hook(content), trigger: 'webHook', instance: {}, ...extra });
}

async function failure(result: Promise<HookResult>) {
  const outcome = await result;
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

async function value(result: Promise<HookResult>) {
  const outcome = await result;
  if (!outcome.ok) throw new Error(`expected success, got ${JSON.stringify(outcome)}`);
  return outcome.value;
}

describe('results', () => {
  it.each([
    ['a number', 'return 42', 42],
    ['an object', "return { a: [1, 'x', null], b: { c: true } }", { a: [1, 'x', null], b: { c: true } }],
    ['nothing', 'return', undefined],
    ['null', 'return null', null],
    ['a value computed from the instance', 'return instance.price * instance.quantity', 30],
  ])('returns %s', async (_case, body, expected) => {
    expect(await value(run(`async function (instance) { ${body} }`, { instance: { price: 10, quantity: 3 } }))).toEqual(expected);
  });

  it('accepts an async arrow function without parameters and still names instance', async () => {
    expect(await value(run('async () => instance.name', { instance: { name: 'Ada' } }))).toBe('Ada');
  });

  it('returns the changed instance of a beforeSave hook and leaves the caller’s object untouched', async () => {
    const instance = { name: 'ada', tags: ['a'] };
    const code = 'async function (instance) { instance.name = instance.name.toUpperCase(); instance.tags.push("b"); instance.added = 1 }';
    const result = await run(code, { instance, trigger: 'beforeSave' });
    expect(result).toMatchObject({ ok: true, value: undefined, instance: { name: 'ADA', tags: ['a', 'b'], added: 1 } });
    expect(instance).toEqual({ name: 'ada', tags: ['a'] });
    // Only a beforeSave hook's instance is used: other runs do not copy it back out of the engine.
    const webhook = await run(code, { instance });
    expect(webhook).toMatchObject({ ok: true, value: undefined });
    expect(webhook.ok && webhook.instance).toBeUndefined();
  });

  it('gives the code the values it names, also when it spells them with escapes', async () => {
    const extra = { instance: {}, headers: { 'x-a': '1' }, request: { method: 'POST', url: '/api/webhook/x', query: {}, headers: {}, rawBody: '', contentType: '' }, user: { _id: 'u1' } };
    expect(await value(run('async function () { return [headers["x-a"], request.method, user._id, typeof env] }', extra))).toEqual(['1', 'POST', 'u1', 'object']);
    expect(await value(run('async function () { return [typeof h\\u0065aders, typeof r\\u0065quest, typeof us\\u0065r, typeof \\u0065nv] }', extra))).toEqual(['object', 'object', 'object', 'object']);
  });

  it.each([
    ['an Error', "throw new Error('Total must be positive')", 'Total must be positive'],
    ['a TypeError from the engine', 'return instance.missing.field', "cannot read property 'field' of undefined"],
    ['a string', "throw 'plain text'", 'plain text'],
    ['a number', 'throw 7', '7'],
  ])('fails with the message only when the code throws %s', async (_case, body, message) => {
    const error = await failure(run(`async function (instance) { ${body} }`));
    expect(error).toEqual({ kind: 'thrown', message });
  });

  it('caps a thrown message at 500 characters', async () => {
    const error = await failure(run("async () => { throw new Error('x'.repeat(5000)) }"));
    expect(error.message).toBe('x'.repeat(500));
  });

  it.each([
    ['a syntax error', 'async function (instance) { return ( }'],
    ['statements instead of a function', 'return 1'],
    ['a value that is not a function', '42'],
  ])('reports %s as kind syntax', async (_case, content) => {
    expect((await failure(run(content))).kind).toBe('syntax');
  });

  it.each([
    ['a BigInt', 'return 10n', /BigInt/],
    ['a function', 'return () => 1', /a function/],
    ['a cyclic object', 'const a = {}; a.self = a; return a', /circular|cyclic/i],
  ])('reports a return value that is %s as invalid-return', async (_case, body, message) => {
    const error = await failure(run(`async function () { ${body} }`));
    expect(error.kind).toBe('invalid-return');
    expect(error.message).toMatch(message);
  });
});

describe('limits', () => {
  it('stops an infinite loop after the CPU budget while the server keeps answering', async () => {
    let ticks = 0;
    const interval = setInterval(() => (ticks += 1), 5);
    try {
      const answered = fetch(`${server.url}/healthz`).then((response) => response.status);
      const error = await failure(run('async function () { while (true) {} }'));
      expect(error).toEqual({ kind: 'timeout', message: 'Hook stopped: it computed for more than 200 ms' });
      expect(await answered).toBe(200);
      const ticksAfterRun = ticks;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(ticks).toBeGreaterThan(ticksAfterRun);
    } finally {
      clearInterval(interval);
    }
  });

  it('stops an infinite loop that starts after an await (the hook’s promise rejects rather than evalCode throwing)', async () => {
    const result = await run('async function () { await null; await Promise.resolve(); while (true) {} }');
    // Stopped by the CPU budget, not by the wall-clock limit: no bound on the wall time it took,
    // which a loaded machine stretches (1.6 s once beside CI's two suites).
    expect(result).toMatchObject({ ok: false, error: { kind: 'timeout', message: 'Hook stopped: it computed for more than 200 ms' } });
  });

  it('keeps the event loop free while a hook awaits a slow fetch, and stops it at the wall-clock limit', async () => {
    const slow = runtimeWith({ hookTimeoutMs: 300, hookEgressAllow: ['127.0.0.1'] });
    // A worker ready first: on a loaded machine starting one can take longer than twice the 300 ms limit.
    await slow.prepare();
    let ticks = 0;
    const interval = setInterval(() => (ticks += 1), 10);
    try {
      const result = await run(`async function () { await fetch('${loopbackUrl}/slow'); return 'never' }`, {}, slow);
      expect(result).toMatchObject({ ok: false, error: { kind: 'timeout', message: 'Hook stopped: it ran for more than 300 ms' } });
      // Stopped before the answer, which comes after 2 s: an order of events, not a speed check.
      expect(result.durationMs).toBeLessThan(2000);
      expect(ticks).toBeGreaterThanOrEqual(10);
    } finally {
      clearInterval(interval);
    }
  });

  it('stops unbounded allocation at the memory limit', async () => {
    // A CPU budget with room to spare: on a busy machine allocating could otherwise reach 200 ms first.
    const error = await failure(run("async function () { let n = 1 << 20; const keep = []; while (true) { keep.push(new Uint8Array(n)); n *= 2 } }", {}, roomy()));
    expect(error).toEqual({ kind: 'memory', message: 'Hook stopped: it used more than 32 MB of memory' });
  });

  it('stops unbounded recursion at the stack limit', async () => {
    const error = await failure(run('async function () { const f = (n) => f(n + 1) + 1; return f(0) }'));
    expect(error).toEqual({ kind: 'memory', message: 'Hook stopped: it exhausted the stack' });
  });

  it('fails a hook that awaits a promise nothing will settle', async () => {
    const error = await failure(run('async function () { await new Promise(() => {}) }'));
    expect(error.kind).toBe('timeout');
  });

  it('still runs hooks normally after stopped ones', async () => {
    await run('async function () { while (true) {} }');
    await run("async function () { let n = 1 << 20; const keep = []; while (true) { keep.push(new Uint8Array(n)); n *= 2 } }");
    expect(await value(run('async () => 1 + 1'))).toBe(2);
  });
});

describe('isolation', () => {
  // Every attempt runs in strict mode against a frozen realm, so it throws; a probe run afterwards
  // (in the same reused context) must see none of it.
  it.each([
    ['a new global', 'globalThis.leak = "s3cret"', 'TypeError'],
    ['an undeclared variable', 'leak = "s3cret"', 'ReferenceError'],
    ['a defined global', 'Object.defineProperty(globalThis, "leak", { value: "s3cret" })', 'TypeError'],
    ['Object.prototype', 'Object.prototype.polluted = "s3cret"', 'TypeError'],
    ['an inherited method', 'Object.prototype.toString = () => "s3cret"', 'TypeError'],
    ['Array.prototype.push', 'Array.prototype.push = null', 'TypeError'],
    ['JSON.stringify', 'JSON.stringify = () => "s3cret"', 'TypeError'],
    ['Math', 'Math.stash = "s3cret"', 'TypeError'],
    ['a prototype reachable only through syntax', 'Object.getPrototypeOf(async function () {}).stash = "s3cret"', 'TypeError'],
    ['the iterator prototype', 'Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())).stash = "s3cret"', 'TypeError'],
    ['a global lexical binding through indirect eval', '(0, eval)("let stash = \'s3cret\'")', 'EvalError'],
    ['a function built from a string', 'Function("return 1")', 'EvalError'],
    ['an async function built from a string', '(async () => {}).constructor("return 1")', 'EvalError'],
    ['a finalizer', 'new FinalizationRegistry(() => {})', 'ReferenceError'],
    ['the console capability', 'console.stash = "s3cret"', 'TypeError'],
    ['the crypto capability', 'crypto.sha256 = () => "s3cret"', 'TypeError'],
    ['the fetch capability', 'fetch.stash = "s3cret"', 'TypeError'],
  ])('keeps no state from one run to the next: %s is refused', async (_case, statement, errorName) => {
    const attempt = await value(run(`async function () { try { ${statement}; return 'allowed' } catch (error) { return error.name } }`));
    expect(attempt).toBe(errorName);
    const probe = `async function () {
      return [typeof globalThis.leak, ({}).polluted, String({}), typeof [].push, JSON.stringify([1]), Math.stash, Object.getPrototypeOf(async function () {}).stash,
        Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())).stash, typeof stash, console.stash, crypto.sha256(''), fetch.stash].map(String);
    }`;
    expect(await value(run(probe))).toEqual([
      'undefined',
      'undefined',
      '[object Object]',
      'function',
      '[1]',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      createHash('sha256').update('').digest('hex'),
      'undefined',
    ]);
  });

  it('gives every run new closures: state kept in the code’s own scope does not survive', async () => {
    const counter = '(() => { let calls = 0; return async () => ++calls })()';
    expect([await value(run(counter)), await value(run(counter)), await value(run(counter))]).toEqual([1, 1, 1]);
  });

  it('leaves no regular expression match behind', async () => {
    await value(run("async () => /(s3cret)/.exec('the s3cret')[1]"));
    expect(await value(run('async () => [typeof RegExp.$1, typeof RegExp.lastMatch, typeof RegExp.input]'))).toEqual(['undefined', 'undefined', 'undefined']);
  });

  it('runs the code in strict mode, yet lets it set name, message and toString on its own objects', async () => {
    const code = `async function () {
      class ValidationError extends Error { constructor(message) { super(message); this.name = 'ValidationError'; } }
      const error = new ValidationError('total must be positive');
      const bare = new Error();
      bare.message = 'set later';
      const money = { amount: 5 };
      money.toString = function () { return this.amount + ' EUR'; };
      money.constructor = 'plain';
      const thisOfAPlainCall = (function () { return this; })();
      return [error.name, error.message, String(error), bare.message, String(money), money.constructor, error instanceof Error, thisOfAPlainCall === undefined];
    }`;
    expect(await value(run(code))).toEqual(['ValidationError', 'total must be positive', 'ValidationError: total must be positive', 'set later', '5 EUR', 'plain', true, true]);
  });

  it('offers no host objects: no process, require, module, Buffer or timers', async () => {
    const names = ['process', 'require', 'module', 'exports', 'Buffer', 'setTimeout', 'setInterval', '__dirname', 'global', 'WeakRef', 'FinalizationRegistry'];
    const result = await value(run(`async function () { return [${names.map((name) => `typeof ${name}`).join(', ')}, typeof fetch, typeof crypto, typeof console] }`));
    expect(result).toEqual([...Array(names.length).fill('undefined'), 'function', 'object', 'object']);
  });

  it('cannot reach the host through the Function constructor', async () => {
    const error = await failure(run("async function () { return (async () => {}).constructor.constructor('return process')().env }"));
    expect(error).toEqual({
      kind: 'thrown',
      message: 'Function is not allowed in hooks: code generation from strings is disabled; write the logic as plain functions',
    });
  });

  it('lists only standard globals: the granted capabilities are parameters of the code, not globals', async () => {
    const names = (await value(run('async function () { return Object.getOwnPropertyNames(globalThis) }'))) as string[];
    expect(names).not.toEqual(expect.arrayContaining(['instance']));
    const nonStandard = names.filter((name) => !/^[A-Z]/.test(name));
    expect(nonStandard.sort()).toEqual(
      ['decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'eval', 'globalThis', 'isFinite', 'isNaN', 'parseFloat', 'parseInt', 'undefined', 'unescape'].sort(),
    );
    expect(names).not.toContain('WeakRef');
    expect(await value(run('async () => Object.isFrozen(globalThis) && Object.isFrozen(Object.prototype) && Object.isFrozen(console) && Object.isFrozen(fetch)'))).toBe(true);
  });

  it('passes headers and user to the code', async () => {
    const result = await value(
      run('async () => [headers["x-api-key"], user._id, user.email]', { headers: { 'x-api-key': 'k1' }, user: { _id: 'u1', email: 'u@example.com' } }),
    );
    expect(result).toEqual(['k1', 'u1', 'u@example.com']);
  });

  it.each([
    // Workers start two at a time, so with 8 the third may start after the first has finished.
    [1, 1, 1],
    [8, 2, 3],
  ])('runs at most TRELLIS_HOOK_WORKERS (%i) hooks that await the host at a time', async (workers, least, most) => {
    const limited = runtimeWith({ hookEgressAllow: ['127.0.0.1'], hookWorkers: workers, hookCpuMs: 10_000, hookTimeoutMs: 20_000 });
    held.most = 0;
    held.together = least;
    held.reached = false;
    const results = await Promise.all([1, 2, 3].map(() => run(`async () => (await fetch('${loopbackUrl}/held')).json()`, {}, limited)));
    expect(results.map((result) => (result.ok ? result.value : result.error))).toEqual(['held', 'held', 'held']);
    expect(held.most).toBeGreaterThanOrEqual(least);
    expect(held.most).toBeLessThanOrEqual(most);
  });

  it('runs concurrent hooks without mixing their data', async () => {
    // Twenty hooks at once start eight worker threads: on a busy machine that is not a test of the CPU limit.
    const allowed = runtimeWith({ hookEgressAllow: ['127.0.0.1'], hookCpuMs: 10_000 });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => run(`async function (instance) { const r = await fetch('${loopbackUrl}/n/' + instance.i); return (await r.json()).path }`, { instance: { i } }, allowed)),
    );
    expect(results.map((result) => (result.ok ? result.value : result.error))).toEqual(Array.from({ length: 20 }, (_, i) => `/n/${i}`));
  });
});

describe('env', () => {
  const secret = 'sk_live_0123456789abcdef';

  beforeAll(async () => {
    await server.server.services.envVars.setEnvironmentVariable(systemPrincipal(), { name: 'API_TOKEN', value: secret });
  });

  it('gives the code the environment values', async () => {
    expect(await value(run('async () => env.API_TOKEN'))).toBe(secret);
  });

  it('sees a changed value on the next run', async () => {
    await server.server.services.envVars.setEnvironmentVariable(systemPrincipal(), { name: 'OTHER', value: 'first' });
    expect(await value(run('async () => env.OTHER'))).toBe('first');
    await server.server.services.envVars.setEnvironmentVariable(systemPrincipal(), { name: 'OTHER', value: 'second' });
    expect(await value(run('async () => env.OTHER'))).toBe('second');
  });

  it('redacts environment values from errors and stored console lines', async () => {
    const stored = await storedHook('redacting-hook', "async () => { console.log('token is', env.API_TOKEN); throw new Error('bad token ' + env.API_TOKEN) }");
    const result = await runtime.run({ hook: stored, trigger: 'webHook', instance: {} });
    expect(result).toMatchObject({ ok: false, error: { kind: 'thrown', message: 'bad token [redacted]' } });
    const row = await lastRun(stored._id);
    expect(row).toMatchObject({ error: 'bad token [redacted]', console: ['[log] token is [redacted]'] });
    expect(JSON.stringify(row)).not.toContain(secret);
  });
});

describe('crypto', () => {
  it('computes sha256 and HMAC-SHA256 like node:crypto', async () => {
    const result = await value(run("async () => [crypto.sha256('héllo'), crypto.hmacSha256('key', 'payload'), crypto.sha256('')]"));
    expect(result).toEqual([
      createHash('sha256').update('héllo').digest('hex'),
      createHmac('sha256', 'key').update('payload').digest('hex'),
      createHash('sha256').update('').digest('hex'),
    ]);
  });

  it.each([
    ['abc', 'abc', true],
    ['abc', 'abd', false],
    ['abc', 'abcd', false],
  ])('compares %s and %s in constant time: %s', async (a, b, equal) => {
    expect(await value(run(`async () => crypto.timingSafeEqual(${JSON.stringify(a)}, ${JSON.stringify(b)})`))).toBe(equal);
  });

  it('verifies a webhook signature the way a hook would', async () => {
    const body = { event: 'paid' };
    const signature = createHmac('sha256', 'shared').update(JSON.stringify(body)).digest('hex');
    const code = "async (instance) => crypto.timingSafeEqual(crypto.hmacSha256('shared', JSON.stringify(instance)), headers['x-signature'])";
    expect(await value(run(code, { instance: body, headers: { 'x-signature': signature } }))).toBe(true);
  });

  it('throws a TypeError the code can catch for a non-string argument', async () => {
    expect(await value(run('async () => { try { crypto.sha256(5) } catch (e) { return e.message } }'))).toBe('crypto.sha256(data): data must be a string');
  });
});

describe('fetch', () => {
  it('is granted to code that spells its name with an escape', async () => {
    expect(await value(run('async function () { return typeof f\\u0065tch }'))).toBe('function');
  });

  it('is refused to a loopback server by default', async () => {
    const before = loopbackHits.length;
    const error = await failure(run(`async () => (await fetch('${loopbackUrl}/x')).status`));
    expect(error.kind).toBe('thrown');
    expect(error.message).toMatch(/^fetch refused: 127\.0\.0\.1 is a loopback address/);
    expect(loopbackHits.length).toBe(before);
  });

  it.each([
    ['10.0.0.1', 'http://10.0.0.1/', /private/],
    ['the metadata address', 'http://169.254.169.254/latest/meta-data/', /link-local/],
    ['localhost', 'http://localhost:1/', /loopback/],
  ])('is refused to %s', async (_case, url, reason) => {
    expect((await failure(run(`async () => fetch('${url}')`))).message).toMatch(reason);
  });

  it('reaches an allow-listed loopback server with method, headers and body', async () => {
    const allowed = runtimeWith({ hookEgressAllow: ['127.0.0.1'] });
    const code = `async (instance) => {
      const response = await fetch('${loopbackUrl}/orders', { method: 'POST', headers: { 'x-signature': 's1' }, body: JSON.stringify(instance) });
      return { status: response.status, ok: response.ok, type: response.headers['content-type'], json: await response.json() };
    }`;
    expect(await value(run(code, { instance: { id: 7 } }, allowed))).toEqual({
      status: 200,
      ok: true,
      type: 'application/json',
      json: { path: '/orders', method: 'POST', body: '{"id":7}', signature: 's1' },
    });
  });

  it('lets the code catch a refusal', async () => {
    expect(await value(run("async () => { try { await fetch('http://127.0.0.1:9/'); } catch (e) { return 'caught: ' + e.message.slice(0, 13) } }"))).toBe(
      'caught: fetch refused',
    );
  });
});

describe('db', () => {
  function memoryDb(): HookDb & { calls: string[] } {
    const tables = new Map<string, Map<string, Record<string, unknown>>>();
    const rows = (table: string) => tables.get(table) ?? tables.set(table, new Map()).get(table)!;
    let next = 0;
    const calls: string[] = [];
    return {
      calls,
      async find(table, filter) {
        calls.push(`find ${table}`);
        const wanted = Object.entries((filter ?? {}) as Record<string, unknown>);
        return [...rows(table).values()].filter((row) => wanted.every(([key, v]) => row[key] === v));
      },
      async get(table, _id) {
        calls.push(`get ${table} ${_id}`);
        if (table === 'broken') throw new Error('connection string postgres://secret@db');
        return rows(table).get(_id) ?? null;
      },
      async create(table, data) {
        calls.push(`create ${table}`);
        const row = { ...(data as Record<string, unknown>), _id: `r${++next}` };
        rows(table).set(row._id, row);
        return row;
      },
      async update(table, _id, data) {
        calls.push(`update ${table} ${_id}`);
        const row = rows(table).get(_id);
        if (!row) throw new TrellisError('NOT_FOUND', `Record '${_id}' does not exist`);
        Object.assign(row, data);
        return row;
      },
      async delete(table, _id) {
        calls.push(`delete ${table} ${_id}`);
        return rows(table).delete(_id);
      },
    };
  }

  it('reaches the host HookDb for every operation', async () => {
    const db = memoryDb();
    const code = `async () => {
      const a = await db.create('orders', { status: 'open', total: 5 });
      await db.create('orders', { status: 'closed', total: 1 });
      await db.update('orders', a._id, { total: 6 });
      const open = await db.find('orders', { status: 'open' });
      const got = await db.get('orders', a._id);
      const deleted = await db.delete('orders', a._id);
      return { open, got, deleted, after: await db.get('orders', a._id) };
    }`;
    expect(await value(run(code, { db }))).toEqual({
      open: [{ _id: 'r1', status: 'open', total: 6 }],
      got: { _id: 'r1', status: 'open', total: 6 },
      deleted: true,
      after: null,
    });
    expect(db.calls).toEqual(['create orders', 'create orders', 'update orders r1', 'find orders', 'get orders r1', 'delete orders r1', 'get orders r1']);
  });

  it('passes a TrellisError message to the code and hides other errors', async () => {
    const db = memoryDb();
    const code = "async () => { const out = []; for (const f of [() => db.update('orders', 'nope', {}), () => db.get('broken', 'x')]) { try { await f() } catch (e) { out.push(e.message) } } return out }";
    expect(await value(run(code, { db }))).toEqual(["Record 'nope' does not exist", 'db.get failed']);
  });

  it('checks arguments before calling the host', async () => {
    const db = memoryDb();
    expect((await failure(run("async () => db.get('orders', 5)", { db }))).message).toBe('db.get(table, _id, ...): _id must be a non-empty string');
    expect(db.calls).toEqual([]);
  });

  it('is not defined when the caller gives no db', async () => {
    expect(await value(run('async () => typeof db'))).toBe('undefined');
  });
});

describe('hook_runs', () => {
  it.each([
    ['ok', "async () => { console.log('hello', { a: 1 }); console.warn('careful'); return 1 }", { outcome: 'ok', error: null, console: ['[log] hello {"a":1}', '[warn] careful'] }],
    ['error', "async () => { throw new Error('nope') }", { outcome: 'error', error: 'nope', console: [] }],
    ['timeout', 'async () => { while (true) {} }', { outcome: 'timeout', error: 'Hook stopped: it computed for more than 200 ms', console: [] }],
    ['memory', "async () => { let n = 1 << 20; const keep = []; while (true) { keep.push(new Uint8Array(n)); n *= 2 } }", { outcome: 'memory', console: [] }],
  ])('records a run with outcome %s', async (name, content, expected) => {
    const stored = await storedHook(`runs-${name}`, content);
    const result = await (name === 'memory' ? roomy() : runtime).run({ hook: stored, trigger: 'afterSave', instance: {} });
    const row = await lastRun(stored._id);
    expect(row).toMatchObject({ hook_id: stored._id, hook_name: `runs-${name}`, trigger: 'afterSave', ...expected });
    expect(row.duration_ms).toBe(Math.round(result.durationMs));
  });

  it('caps console output at 100 lines of 500 characters', async () => {
    const stored = await storedHook('chatty', "async () => { for (let i = 0; i < 150; i++) console.info('x'.repeat(600)) }");
    await runtime.run({ hook: stored, trigger: 'webHook', instance: {} });
    const row = await lastRun(stored._id);
    expect(row.console).toHaveLength(100);
    expect(row.console[0]).toBe(`[info] ${'x'.repeat(493)}`);
  });

  it('stores the run’s own start time and keeps the order of runs across batches of 100', async () => {
    const before = Date.now();
    const names = Array.from({ length: 250 }, (_, i) => `batched-${String(i).padStart(3, '0')}`);
    for (const name of names) await run('async () => 1', { hook: hook('async () => 1', name) });
    const after = Date.now();
    await runtime.flushRunLog();
    const rows = await server.server.services.ctx.db.selectFrom('hook_runs').select(['hook_name', 'started_at']).where('hook_name', 'like', 'batched-%').orderBy('id').execute();
    expect(rows.map((row) => row.hook_name)).toEqual(names);
    for (const row of rows) expect(row.started_at.getTime()).toBeGreaterThanOrEqual(before - 1);
    expect(rows.at(-1)!.started_at.getTime()).toBeLessThanOrEqual(after);
    expect(rows[0]!.started_at.getTime()).toBeLessThanOrEqual(rows.at(-1)!.started_at.getTime());
  });

  it('records a run of a hook that is not stored with no hook_id', async () => {
    await run('async () => 1', { hook: hook('async () => 1', 'ephemeral') });
    await runtime.flushRunLog();
    const row = await server.server.services.ctx.db.selectFrom('hook_runs').selectAll().where('hook_name', '=', 'ephemeral').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ hook_id: null, outcome: 'ok' });
  });
});

describe('cost', () => {
  it('runs a trivial hook 200 times in a pooled context and reports the median time', async () => {
    const trivial = hook('async function (instance) { instance.total = instance.price * 2; return { ok: true } }', 'trivial');
    for (let i = 0; i < 20; i++) await runtime.run({ hook: trivial, trigger: 'beforeSave', instance: { price: i } });
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const started = performance.now();
      const result = await runtime.run({ hook: trivial, trigger: 'beforeSave', instance: { price: i } });
      times.push(performance.now() - started);
      expect(result.ok).toBe(true);
    }
    times.sort((a, b) => a - b);
    const median = times[100]!;
    // A figure for docs/decisions.md, not a threshold: speed is measured by `npm run bench`.
    process.stdout.write(`hook run: median ${median.toFixed(3)} ms, p90 ${times[180]!.toFixed(3)} ms, p99 ${times[198]!.toFixed(3)} ms\n`);
  });
});

async function storedHook(name: string, content: string): Promise<HookInvocation['hook']> {
  const created = await server.server.services.hooks.createHook(systemPrincipal(), { name, type: 'webHook', content });
  return { _id: created._id, name: created.name, type: created.type, content: created.content, contentSha256: created.contentSha256 };
}

async function lastRun(hookId: string) {
  await runtime.flushRunLog();
  await roomyRuntime?.flushRunLog();
  return server.server.services.ctx.db.selectFrom('hook_runs').selectAll().where('hook_id', '=', hookId).orderBy('id', 'desc').executeTakeFirstOrThrow();
}
