import { describe, expect, it } from 'vitest';
import { DEFAULT_SLOT_POOL, Sandbox } from './sandbox.js';
import type { SandboxGlobals, SandboxOutcome } from './sandbox-types.js';

// The CPU budget is time spent in guest code, so a machine busy elsewhere makes work look slower:
// tests that are not about the limits run with room to spare (ROOMY).
const LIMITS = { cpuMs: 200, wallMs: 2000, memoryBytes: 16 * 1024 * 1024, stackBytes: 256 * 1024 };
const ROOMY = { ...LIMITS, cpuMs: 10_000, wallMs: 20_000 };
const NO_GRANTS: SandboxGlobals = { values: { instance: null }, host: {} };

function sandbox(pool: Partial<typeof DEFAULT_SLOT_POOL> = {}): Sandbox {
  return new Sandbox(LIMITS, { ...DEFAULT_SLOT_POOL, ...pool });
}

function valueOf(outcome: SandboxOutcome): unknown {
  if (!outcome.ok) throw new Error(`expected success, got ${JSON.stringify(outcome)}`);
  return outcome.value;
}

/** A host function the code may call without awaiting; it settles when `release` is called. */
function slowHost() {
  let release: () => void = () => {};
  const settled = new Promise<void>((resolve) => (release = resolve));
  const globals: SandboxGlobals = { values: { instance: null }, host: { slow: { async: () => settled.then(() => 'done') } } };
  return { globals, release };
}

describe('the pool of hardened contexts', () => {
  it('serves sequential runs from one context and compiles each code once', async () => {
    const box = sandbox();
    for (let i = 0; i < 20; i++) {
      expect(valueOf(await box.run('async (instance) => instance.n * 2', { values: { instance: { n: i } }, host: {} }, 'double'))).toBe(i * 2);
      expect(valueOf(await box.run('async () => "b"', NO_GRANTS, 'b'))).toBe('b');
    }
    expect(box.stats()).toEqual({ slotsCreated: 1, compiles: 2, modules: 1, idle: 1 });
    box.close();
  });

  it('reuses the context after code that throws', async () => {
    const box = sandbox();
    expect(await box.run('async () => { throw new Error("no") }', NO_GRANTS)).toEqual({ ok: false, kind: 'thrown', message: 'no' });
    expect(valueOf(await box.run('async () => 1', NO_GRANTS))).toBe(1);
    expect(box.stats().slotsCreated).toBe(1);
    box.close();
  });

  // The memory and stack cases get CPU room: on a busy machine, filling 16 MB could pass 200 ms first.
  it.each([
    ['stopped for computing too long', 'async () => { while (true) {} }', 'timeout', LIMITS],
    ['stopped at the memory limit', 'async () => { const keep = []; let n = 1 << 20; while (true) { keep.push(new Uint8Array(n)); n *= 2 } }', 'memory', ROOMY],
    ['stopped at the stack limit', 'async () => { const f = (n) => f(n + 1) + 1; return f(0) }', 'memory', ROOMY],
  ])('replaces the context after a run %s', async (_case, code, kind, limits) => {
    const box = new Sandbox(limits, DEFAULT_SLOT_POOL);
    expect(await box.run(code, NO_GRANTS)).toMatchObject({ ok: false, kind });
    expect(valueOf(await box.run('async () => 1', NO_GRANTS))).toBe(1);
    expect(box.stats().slotsCreated).toBe(2);
    box.close();
  });

  it('replaces the context after a run that left a host call pending, and never settles it there', async () => {
    const box = sandbox();
    const { globals, release } = slowHost();
    expect(valueOf(await box.run('async () => { slow().then((x) => console.log(x)); return "early" }', globals))).toBe('early');
    release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(valueOf(await box.run('async () => 1', NO_GRANTS))).toBe(1);
    expect(box.stats()).toMatchObject({ slotsCreated: 2, idle: 1 });
    box.close();
  });

  it('runs concurrent runs in separate contexts and keeps at most maxIdle of them', async () => {
    const box = sandbox({ maxIdle: 3 });
    const { globals, release } = slowHost();
    const runs = Array.from({ length: 5 }, (_, i) => box.run(`async () => (await slow()) + ${i}`, globals, 'slow'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    expect((await Promise.all(runs)).map(valueOf)).toEqual(['done0', 'done1', 'done2', 'done3', 'done4']);
    expect(box.stats()).toMatchObject({ slotsCreated: 5, idle: 3 });
    box.close();
  });

  it('retires a context after maxRunsPerSlot runs', async () => {
    const box = sandbox({ maxRunsPerSlot: 3 });
    for (let i = 0; i < 7; i++) valueOf(await box.run('async () => 1', NO_GRANTS));
    expect(box.stats().slotsCreated).toBe(3);
    box.close();
  });

  it('keeps at most maxCompiledPerSlot compiled codes, least recently used dropped first', async () => {
    const box = sandbox({ maxCompiledPerSlot: 2 });
    for (const key of ['a', 'b', 'a', 'c', 'a', 'b']) valueOf(await box.run(`async () => '${key}'`, NO_GRANTS, key));
    expect(box.stats().compiles).toBe(4);
    box.close();
  });

  it('refuses code that closes its wrapper to run statements of its own, and discards that context', async () => {
    const box = sandbox();
    const escaping = "1); }); let stash = 's3cret'; (() => { return (async () => stash";
    expect(await box.run(escaping, NO_GRANTS)).toEqual({ ok: false, kind: 'syntax', message: 'Hook code must be a single async function, e.g. async function (instance) { ... }' });
    expect(valueOf(await box.run('async () => typeof stash', NO_GRANTS))).toBe('undefined');
    expect(box.stats().slotsCreated).toBe(2);
    box.close();
  });

  it('hardens a first context ahead of the first run', async () => {
    const box = sandbox();
    await box.warm();
    expect(box.stats()).toEqual({ slotsCreated: 1, compiles: 0, modules: 1, idle: 1 });
    valueOf(await box.run('async () => 1', NO_GRANTS));
    expect(box.stats().slotsCreated).toBe(1);
    box.close();
  });
});

/** One slot for every run, so that each run below follows the previous one in the same context. */
function sharedSlot(limits = ROOMY): Sandbox {
  return new Sandbox(limits, { ...DEFAULT_SLOT_POOL, maxIdle: 1 });
}

const withInstance = (instance: unknown): SandboxGlobals => ({ values: { instance }, host: {} });

describe('a reused context leaves nothing for the next run', () => {
  it('freezes everything reachable from the global object, through getters and through what built-ins return', async () => {
    const box = sharedSlot();
    const walk = `async () => {
      const seen = new Set();
      const open = [];
      const pending = [globalThis];
      const visit = (value, path) => {
        if (value === null || (typeof value !== 'object' && typeof value !== 'function') || seen.has(value)) return;
        seen.add(value);
        if (!Object.isFrozen(value)) open.push(path);
        pending.push([value, path]);
      };
      visit(globalThis, 'globalThis');
      pending.shift();
      for (let item = pending.shift(); item; item = pending.shift()) {
        const [value, path] = item;
        visit(Object.getPrototypeOf(value), path + '.[[Prototype]]');
        for (const key of Reflect.ownKeys(value)) {
          const descriptor = Object.getOwnPropertyDescriptor(value, key);
          const name = path + '.' + String(key);
          if ('value' in descriptor) visit(descriptor.value, name);
          for (const accessor of [descriptor.get, descriptor.set]) {
            visit(accessor, name + '(accessor)');
            if (accessor) try { visit(accessor.call(value), name + '()'); } catch {}
          }
          if (typeof descriptor.value === 'function' && descriptor.value !== globalThis.eval) {
            try { const made = descriptor.value(); if (made !== null && typeof made === 'object') visit(Object.getPrototypeOf(made), name + '()..[[Prototype]]'); } catch {}
          }
        }
      }
      return { objects: seen.size, open };
    }`;
    const result = valueOf(await box.run(walk, NO_GRANTS)) as { objects: number; open: string[] };
    expect(result.open).toEqual([]);
    expect(result.objects).toBeGreaterThan(500);
    box.close();
  });

  it('keeps a later run’s data from code a run hid behind a built-in method', async () => {
    const box = sharedSlot();
    const attacker = `async () => {
      const own = Object.prototype.hasOwnProperty;
      try { Object.defineProperty(own, 'call', { value: (target) => 'hijacked' }); return 'installed'; } catch (error) { return error.name; }
    }`;
    expect(valueOf(await box.run(attacker, NO_GRANTS, 'attacker'))).toBe('TypeError');
    expect(valueOf(await box.run("async (instance) => Object.prototype.hasOwnProperty.call(instance, 'card')", withInstance({ card: '4111' }), 'victim'))).toBe(true);
    expect(box.stats().slotsCreated).toBe(1);
    box.close();
  });

  it('keeps the iterator prototypes of Iterator.concat frozen', async () => {
    const box = sharedSlot();
    expect(valueOf(await box.run('async () => { try { Object.getPrototypeOf(Iterator.concat()).stash = 1; return "stored" } catch (error) { return error.name } }', NO_GRANTS))).toBe('TypeError');
    box.close();
  });

  it('draws Math.random from the host, so a run cannot tell how many numbers earlier runs drew', async () => {
    const box = sharedSlot();
    const draws = valueOf(await box.run('async () => { const seen = new Set(); for (let i = 0; i < 1000; i++) { const r = Math.random(); if (r < 0 || r >= 1) return "out of range"; seen.add(r); } return seen.size }', NO_GRANTS));
    expect(draws).toBe(1000);
    expect(valueOf(await box.run('async () => Math.random.toString()', NO_GRANTS))).not.toMatch(/xorshift/);
    expect(valueOf(await box.run('async () => typeof Proxy', NO_GRANTS))).toBe('undefined');
    box.close();
  });

  it('discards the context when code that closed its wrapper throws before the check can see it', async () => {
    const box = sharedSlot();
    const escaping = "1); }); let stash = ['s3cret']; throw new SyntaxError('x'); (() => { return (async () => 1";
    expect(await box.run(escaping, NO_GRANTS)).toMatchObject({ ok: false, kind: 'syntax' });
    expect(valueOf(await box.run('async () => typeof stash', NO_GRANTS))).toBe('undefined');
    expect(box.stats().slotsCreated).toBe(2);
    box.close();
  });

  it('refuses code with a NUL character, which the engine would cut short', async () => {
    const box = sharedSlot();
    expect(await box.run('async () => 1 /* \0 */', NO_GRANTS)).toEqual({ ok: false, kind: 'syntax', message: 'Hook code must not contain NUL characters' });
    box.close();
  });
});

describe('limits the interrupt handler cannot enforce alone', () => {
  it.each([
    ['includes on an array-like claiming 2^53 - 1 elements', 'Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1)', 'RangeError'],
    ['lastIndexOf on the same, sent as a request body', 'Array.prototype.lastIndexOf.call(instance, 1)', 'RangeError'],
    ['sort of a sparse array of 2^32 - 1 slots', 'new Array(2 ** 32 - 1).sort()', 'RangeError'],
    ['join of the same', 'String(new Array(2 ** 32 - 1))', 'RangeError'],
    ['concat of the same', '[].concat(new Array(2 ** 32 - 1))', 'RangeError'],
    ['flat over a nested sparse array', '[[1], new Array(2 ** 32 - 1)].flat()', 'RangeError'],
    ['flatMap returning a sparse array', '[1].flatMap(() => new Array(2 ** 32 - 1))', 'RangeError'],
    ['an array-like whose length is a getter', 'Array.prototype.indexOf.call({ get length() { return 2 ** 53 - 1 } }, 1)', 'TypeError'],
    ['an array-like whose length is an object', 'Array.prototype.indexOf.call({ length: { valueOf: () => 2 ** 53 - 1 } }, 1)', 'TypeError'],
  ])('refuses %s', async (_case, expression, errorName) => {
    const box = sharedSlot();
    const code = `async (instance) => { try { return ${expression} } catch (error) { return error.name } }`;
    expect(valueOf(await box.run(code, withInstance({ length: 2 ** 53 - 1 })))).toBe(errorName);
    box.close();
  });

  it('still runs array methods on real arrays, arguments and typed arrays', async () => {
    const box = sharedSlot();
    const code = `async () => {
      const args = (function () { return Array.prototype.slice.call(arguments); })(1, 2, 3);
      return [[1, 2, 3].includes(2), args, Array.prototype.map.call('ab', (c) => c + c), Array.prototype.join.call(new Uint8Array([1, 2]), '-'),
        [[1, [2]], [3]].flat(2), [1, 2].flatMap((x) => [x, x * 10]), [3, 1, 2].sort(), [1].concat([2], 3), Array.prototype.includes.name, Array.prototype.includes.length];
    }`;
    expect(valueOf(await box.run(code, NO_GRANTS))).toEqual([true, [1, 2, 3], ['aa', 'bb'], '1-2', [1, 2, 3], [1, 10, 2, 20], [1, 2, 3], [1, 2, 3], 'includes', 1]);
    box.close();
  });

  it('reports a run whose built-in overran the CPU budget between two interrupt checks as a timeout, and discards its context', async () => {
    const box = new Sandbox({ ...LIMITS, cpuMs: 5 }, { ...DEFAULT_SLOT_POOL, maxIdle: 1 });
    const outcome = await box.run('async () => Array.prototype.lastIndexOf.call({ length: 4000000 }, 1)', NO_GRANTS);
    expect(outcome).toEqual({ ok: false, kind: 'timeout', message: 'Hook stopped: it computed for more than 5 ms' });
    // The next run gets a new context. (Whether it finishes within 5 ms depends on how busy the machine is.)
    const next = await box.run('async () => 1', NO_GRANTS);
    expect(next.ok ? next.value : next.kind).toSatisfy((value: unknown) => value === 1 || value === 'timeout');
    expect(box.stats().slotsCreated).toBe(2);
    box.close();
  });

  it.each([
    ['toJSON', 'f.toJSON = () => { for (;;) {} }', { ok: false, kind: 'thrown', message: 'Hook failed' }],
    ['toString', 'f.toString = () => { for (;;) {} }', { ok: false, kind: 'thrown', message: 'Hook failed' }],
    ['message getter', "Object.defineProperty(f, 'message', { get() { for (;;) {} } })", { ok: false, kind: 'timeout', message: 'Hook stopped: it computed for more than 200 ms' }],
  ])('reads a thrown function like an error, within the CPU budget: its looping %s does not hold the run until the wall-clock limit', async (_case, setup, expected) => {
    const box = new Sandbox(LIMITS, { ...DEFAULT_SLOT_POOL, maxIdle: 1 });
    const started = performance.now();
    const outcome = await box.run(`async () => { const f = () => 0; ${setup}; throw f }`, NO_GRANTS);
    expect(outcome).toEqual(expected);
    expect(performance.now() - started).toBeLessThan(LIMITS.wallMs);
    box.close();
  });

  it('reports thrown primitives as their text', async () => {
    const box = sharedSlot();
    for (const [thrown, message] of [["'plain text'", 'plain text'], ['42', '42'], ['undefined', 'undefined'], ['10n ** 20n', '100000000000000000000'], ["Symbol('s')", 'Symbol(s)']]) {
      expect(await box.run(`async () => { throw ${thrown} }`, NO_GRANTS)).toEqual({ ok: false, kind: 'thrown', message });
    }
    box.close();
  });

  it('calls no host function once the run is stopped, even from a getter the host reads', async () => {
    const calls: unknown[] = [];
    const globals: SandboxGlobals = { values: { instance: null }, host: { console: { log: { sync: () => undefined } }, db: { create: { async: async (args) => void calls.push(args) } } } };
    const box = sharedSlot(LIMITS);
    const outcome = await box.run('async () => { console.log({ get x() { for (;;); } }); db.create("t", { after: "the limit" }); return "accepted" }', globals);
    expect(outcome).toMatchObject({ ok: false, kind: 'timeout' });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls).toEqual([]);
    box.close();
  });
});

describe('what a second review found', () => {
  it.each([
    ['a function claiming 2^53 - 1 elements', 'Array.prototype.lastIndexOf.call(class { static length = 2 ** 53 - 1 }, 1)', 'RangeError'],
    ['a DataView given a length', 'Array.prototype.includes.call(Object.defineProperty(new DataView(new ArrayBuffer(1)), "length", { value: 2 ** 53 - 1 }), 1)', 'RangeError'],
    [
      'concat whose spreadable getter grows a later argument',
      '(() => { const big = { length: 0, [Symbol.isConcatSpreadable]: true }; const first = { length: 0, get [Symbol.isConcatSpreadable]() { big.length = 2 ** 52; return true } }; return [].concat(first, big).length })()',
      'TypeError',
    ],
    ['flat whose depth would answer differently the second time (it is read once: depth 0)', '(() => { let n = 0; return [[new Array(2 ** 32 - 1)]].flat({ valueOf() { return n++ === 0 ? 0 : 2 } }).length })()', 1],
    ['flat over an element getter', '(() => { let n = 0; const a = [0]; Object.defineProperty(a, 0, { get() { return n++ < 1 ? 0 : new Array(2 ** 32 - 1) } }); return a.flat().length })()', 'TypeError'],
  ])('refuses %s', async (_case, expression, errorName) => {
    const box = sharedSlot();
    expect(valueOf(await box.run(`async () => { try { return ${expression} } catch (error) { return error.name } }`, NO_GRANTS))).toBe(errorName);
    box.close();
  });

  it('copies at most 2 MB of arguments out of the guest per host call, whatever the hook’s own memory', async () => {
    const lines: string[] = [];
    const globals: SandboxGlobals = { values: { instance: null }, host: { console: { log: { sync: (args) => void lines.push(String(args.length)) } } } };
    const box = sharedSlot();
    const code = "async () => { const s = 'x'.repeat(1024 * 1024); try { console.log(...new Array(1000).fill(s)); return 'logged' } catch (error) { return error.message } }";
    expect(valueOf(await box.run(code, globals))).toBe('the arguments of one call may hold at most 2097152 characters in all');
    expect(lines).toEqual([]);
    expect(valueOf(await box.run("async () => { console.log('x'.repeat(1000)); return 'logged' }", globals))).toBe('logged');
    box.close();
  });
});

describe('string search on long inputs', () => {
  const text = 'a'.repeat(400_000);
  const needle = `${'a'.repeat(200_000)}b`;

  it('stops a quadratic search over a webhook body at the CPU budget instead of holding the server', async () => {
    const box = sharedSlot(LIMITS);
    const started = performance.now();
    const outcome = await box.run('async (instance) => instance.text.includes(instance.needle)', withInstance({ text, needle }));
    // The linear search either answers within the budget or is stopped by it; the engine's own took 27 s.
    if (outcome.ok) expect(outcome.value).toBe(false);
    else expect(outcome.kind).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(LIMITS.wallMs);
    box.close();
  });

  it('answers long searches exactly as the engine would', async () => {
    const box = sharedSlot();
    const haystack = `${'x'.repeat(100_000)}[needle.*]${'y'.repeat(1000)}[needle.*]`;
    const long = `[needle.*]${'z'.repeat(200)}`;
    const code = `async (instance) => {
      const { haystack, long } = instance;
      const needle = '[needle.*]' + 'y'.repeat(300);
      return [haystack.indexOf(needle), haystack.includes(needle), haystack.indexOf(needle, 100011), haystack.includes(long),
        haystack.split(needle).length, haystack.replace(needle, '$&!').length, haystack.replaceAll('[needle.*]' + 'y'.repeat(1000), '-').length,
        haystack.replace(needle, "$$\x60$'").length, haystack.replace(needle, (match, at) => match.length + '@' + at).slice(99990, 100020), haystack.split(needle, 1),
        'short'.indexOf('or'), String.prototype.indexOf.length];
    }`;
    const needle = `[needle.*]${'y'.repeat(300)}`;
    expect(valueOf(await box.run(code, withInstance({ haystack, long })))).toEqual([
      haystack.indexOf(needle),
      true,
      haystack.indexOf(needle, 100011),
      false,
      haystack.split(needle).length,
      haystack.replace(needle, '$&!').length,
      haystack.replaceAll(`[needle.*]${'y'.repeat(1000)}`, '-').length,
      haystack.replace(needle, "$$\x60$'").length,
      haystack.replace(needle, (match: string, at: number) => `${match.length}@${at}`).slice(99990, 100020),
      haystack.split(needle, 1),
      'short'.indexOf('or'),
      1,
    ]);
    box.close();
  });
});

describe('normalisation of long runs of combining marks', () => {
  it('refuses normalize and localeCompare over more than 1024 marks in a row, sent in a body', async () => {
    // A roomy budget: what is tested is the refusal, not the time (a loaded machine checks 200 000 marks slowly).
    const box = sharedSlot(ROOMY);
    const name = '\u0301'.repeat(100_000) + '\u0316'.repeat(100_000);
    const started = performance.now();
    const code = 'async (instance) => { const out = []; for (const f of [() => instance.name.normalize(), () => "x".localeCompare(instance.name)]) { try { f(); out.push("ran") } catch (error) { out.push(error.name) } } return out }';
    expect(valueOf(await box.run(code, withInstance({ name })))).toEqual(['RangeError', 'RangeError']);
    expect(performance.now() - started).toBeLessThan(ROOMY.wallMs);
    box.close();
  });

  it('still normalises and compares ordinary text, long or short', async () => {
    const box = sharedSlot();
    const long = 'e\u0301'.repeat(5000);
    const code = "async (instance) => [instance.long.normalize('NFC').length, 'e\\u0301'.normalize(), 'a'.localeCompare('b'), instance.long.localeCompare(instance.long)]";
    expect(valueOf(await box.run(code, withInstance({ long })))).toEqual([long.normalize('NFC').length, 'é', -1, 0]);
    box.close();
  });
});
