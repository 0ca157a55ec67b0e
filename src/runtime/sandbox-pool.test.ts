import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_SANDBOX_POOL, SandboxPool, type SandboxPoolGlobals } from './sandbox-pool.js';
import { WATCHDOG_GRACE_MS } from './sandbox-scheduling.js';
import { Unserialisable, WithBody, type SandboxLimits, type SandboxOutcome } from './sandbox-types.js';

// The CPU budget is time spent in guest code, so a machine busy elsewhere makes work look slower:
// tests that are not about the CPU limit run with room to spare (ROOMY).
const LIMITS: SandboxLimits = { cpuMs: 200, wallMs: 5000, memoryBytes: 32 * 1024 * 1024, stackBytes: 256 * 1024 };
const ROOMY: SandboxLimits = { ...LIMITS, cpuMs: 20_000, wallMs: 30_000 };
const NO_GRANTS: SandboxPoolGlobals = { values: { instance: null }, host: {} };

function valueOf(outcome: SandboxOutcome): unknown {
  if (!outcome.ok) throw new Error(`expected success, got ${JSON.stringify(outcome)}`);
  return outcome.value;
}

/** Counts 5 ms timer ticks on the server's thread while `work` runs: they stop if the thread is held. */
async function ticksDuring<T>(work: () => Promise<T>): Promise<{ result: T; ticks: number; elapsed: number }> {
  let ticks = 0;
  const interval = setInterval(() => (ticks += 1), 5);
  const started = performance.now();
  try {
    const result = await work();
    return { result, ticks, elapsed: performance.now() - started };
  } finally {
    clearInterval(interval);
  }
}

describe('worker threads', () => {
  it('serves sequential runs from one worker and compiles each code once', async () => {
    const pool = new SandboxPool(ROOMY);
    await pool.warm();
    for (let i = 0; i < 5; i++) expect(valueOf((await pool.run('async (instance) => instance * 2', { values: { instance: i }, host: {} })).outcome)).toBe(i * 2);
    expect(pool.stats()).toMatchObject({ workersStarted: 1, compiles: 1, idle: 1, alive: 1 });
    pool.close();
    expect(pool.stats()).toMatchObject({ idle: 0, alive: 0 });
  });

  it('sends a hook’s code to a worker once, not with every run', async () => {
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 1 });
    for (let i = 0; i < 10; i++) expect(valueOf((await pool.run('async (instance) => instance * 3', { values: { instance: i }, host: {} }, 'times-three')).outcome)).toBe(i * 3);
    expect(pool.stats()).toMatchObject({ workersStarted: 1, codesSent: 1 });
    pool.close();
  });

  it('keeps its copy of each worker’s code in step past the limit, with runs in flight and taken back', async () => {
    // Six hooks of 47 characters, four of which fit: the workers drop code and get it again all the time.
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 3, codeCacheChars: 200 });
    const code = (k: number) => `async (instance) => instance * 10 + ${k} /* ${'.'.repeat(8)} */`;
    const expected: number[] = [];
    const runs: unknown[] = [];
    for (let round = 0; round < 12; round++) {
      // Three of the hooks at a time, one more each round.
      const batch = Array.from({ length: 5 }, (_, j) => (round + (j % 3)) % 6);
      // A run computing 20 ms first: the quick runs queued behind it are taken back for other workers.
      const slow = pool.run('async () => { for (const t = Date.now(); Date.now() - t < 20; ); return "slow"; }', NO_GRANTS, 'slow');
      const results = await Promise.all(batch.map((k, j) => pool.run(code(k), { values: { instance: round + j }, host: {} }, `hook-${k}`)));
      expect(valueOf((await slow).outcome)).toBe('slow');
      runs.push(...results.map(({ outcome }) => valueOf(outcome)));
      expected.push(...batch.map((k, j) => (round + j) * 10 + k));
    }
    expect(runs).toEqual(expected);
    const { codesSent } = pool.stats();
    expect(codesSent).toBeGreaterThan(6);
    expect(codesSent).toBeLessThan(60);
    pool.close();
  });

  it('runs at most maxWorkers hooks at a time; the others wait for a free worker', async () => {
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 2 });
    let inHost = 0;
    let mostInHost = 0;
    const globals = (i: number): SandboxPoolGlobals => ({
      values: { instance: i },
      host: {
        pause: async () => {
          mostInHost = Math.max(mostInHost, ++inHost);
          await new Promise((resolve) => setTimeout(resolve, 30));
          inHost -= 1;
          return 'paused';
        },
      },
    });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run('async (instance) => (await pause()) + instance', globals(i))));
    expect(results.map(({ outcome }) => valueOf(outcome))).toEqual(Array.from({ length: 6 }, (_, i) => `paused${i}`));
    // At most two at once; on a busy machine the second worker may start after the first finished them all.
    expect(mostInHost).toBeGreaterThanOrEqual(1);
    expect(mostInHost).toBeLessThanOrEqual(2);
    expect(pool.stats().workersStarted).toBeLessThanOrEqual(2);
    pool.close();
  });

  it('answers host calls on the server’s thread: JSON copies in, JSON or a body out, errors by message', async () => {
    const pool = new SandboxPool(ROOMY);
    const seen: unknown[][] = [];
    const globals: SandboxPoolGlobals = {
      values: { instance: null },
      host: {
        api: {
          echo: async (args) => {
            seen.push(args);
            return { got: args.length };
          },
          page: async () => new WithBody({ status: 201 }, '{"a":[1,2]}'),
          fail: async () => {
            throw new Error('refused: reason given to the hook');
          },
        },
      },
    };
    const code = `async () => {
      const echoed = await api.echo('text', 3, { deep: [true] }, () => 1);
      const page = await api.page();
      let failure;
      try { await api.fail() } catch (error) { failure = error.message }
      return { echoed, status: page.status, text: await page.text(), json: await page.json(), failure, lines: console.log('a line') };
    }`;
    const { outcome, console: lines } = await pool.run(code, globals);
    expect(valueOf(outcome)).toEqual({ echoed: { got: 4 }, status: 201, text: '{"a":[1,2]}', json: { a: [1, 2] }, failure: 'refused: reason given to the hook' });
    expect(seen).toEqual([['text', 3, { deep: [true] }, new Unserialisable('() => 1')]]);
    expect(lines).toEqual(['[log] a line']);
    pool.close();
  });

  it('aborts the host calls of a run that ended without awaiting them, and never answers into a later run', async () => {
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 1 });
    let aborted!: Promise<boolean>;
    const slow: SandboxPoolGlobals = {
      values: { instance: null },
      host: {
        slow: (_args, signal) => {
          aborted = new Promise((resolve) => signal.addEventListener('abort', () => resolve(true)));
          return new Promise((resolve) => setTimeout(() => resolve('late'), 100));
        },
      },
    };
    expect(valueOf((await pool.run("async () => { slow(); return 'first' }", slow)).outcome)).toBe('first');
    expect(await aborted).toBe(true);
    const second = await pool.run('async () => 2', NO_GRANTS);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(valueOf(second.outcome)).toBe(2);
    expect(valueOf((await pool.run('async () => 3', NO_GRANTS)).outcome)).toBe(3);
    pool.close();
  });

  it('fails the runs queued behind a long run at once when closed', async () => {
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 1 });
    await pool.warm();
    const long = pool.run('async () => { const until = Date.now() + 100; while (Date.now() < until) {} return 1 }', NO_GRANTS);
    const queued = [1, 2, 3].map(() => pool.run('async () => 2', NO_GRANTS));
    await new Promise((resolve) => setTimeout(resolve, 30));
    const closed = performance.now();
    pool.close();
    for (const { outcome } of await Promise.all(queued)) expect(outcome).toEqual({ ok: false, kind: 'thrown', message: 'The hook runtime failed' });
    expect(performance.now() - closed).toBeLessThan(1000);
    expect(valueOf((await long).outcome)).toBe(1);
  });

  it('fails waiting runs with a clear outcome once closed', async () => {
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 1 });
    await pool.warm();
    let waited!: () => void;
    const inHost = new Promise<void>((resolve) => (waited = resolve));
    const hold: SandboxPoolGlobals = { values: { instance: null }, host: { wait: () => (waited(), new Promise((resolve) => setTimeout(resolve, 50))) } };
    const first = pool.run('async () => { await wait(); return 1 }', hold);
    const waiting = pool.run('async () => 2', NO_GRANTS);
    await inHost;
    pool.close();
    expect((await waiting).outcome).toEqual({ ok: false, kind: 'thrown', message: 'The hook runtime failed' });
    expect(valueOf((await first).outcome)).toBe(1);
    expect(pool.stats().alive).toBe(0);
  });
});

describe('runs queued in a busy worker', () => {
  it('queues runs without host members behind each other, while a run that awaits the host keeps a worker to itself', async () => {
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 2 });
    await pool.warm();
    let release!: () => void;
    const held = new Promise<string>((resolve) => (release = () => resolve('released')));
    const waiting = pool.run('async () => await hold()', { values: { instance: null }, host: { hold: () => held } });
    const quick = await Promise.all(Array.from({ length: 12 }, (_, i) => pool.run('async (instance) => instance + 1', { values: { instance: i }, host: {} })));
    expect(quick.map(({ outcome }) => valueOf(outcome))).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    release();
    expect(valueOf((await waiting).outcome)).toBe('released');
    expect(pool.stats()).toMatchObject({ workersStarted: 2, workersStopped: 0 });
    pool.close();
  });

  it.each([
    ['terminated', '(3n ** 600000n).toString().length', { ok: false, kind: 'timeout', message: 'Hook stopped: it computed for more than 200 ms' }],
    ['left with its heap full', '(() => { const keep = []; for (;;) keep.push("x".repeat(1 << 20) + keep.length) })()', { ok: false, kind: 'memory', message: 'Hook stopped: it used more than 32 MB of memory' }],
  ])('runs each run queued behind a run whose worker is %s once, and in order', async (_case, expression, expected) => {
    const pool = new SandboxPool({ ...LIMITS, cpuMs: expected.kind === 'memory' ? 20_000 : LIMITS.cpuMs }, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 1 });
    await pool.warm();
    const first = pool.run(`async () => ${expression}`, NO_GRANTS);
    const queued = Array.from({ length: 5 }, (_, i) => pool.run('async (instance) => instance * 10', { values: { instance: i }, host: {} }));
    expect((await first).outcome).toEqual(expected);
    expect((await Promise.all(queued)).map(({ outcome }) => valueOf(outcome))).toEqual([0, 10, 20, 30, 40]);
    // A terminated worker is replaced; one whose heap filled up goes on with a new context.
    const replaced = expected.kind === 'timeout' ? 1 : 0;
    expect(pool.stats()).toMatchObject({ workersStarted: 1 + replaced, workersStopped: replaced, alive: 1 });
    pool.close();
  });
});

describe('runs held up behind others', () => {
  it('stops the workers a burst started once they ran nothing for idleStopMs, all but the last, which still runs', async () => {
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 3, idleStopMs: 300 });
    const hold: SandboxPoolGlobals = { values: { instance: null }, host: { wait: () => new Promise((resolve) => setTimeout(resolve, 500)) } };
    // Three runs that await the host each need a worker of their own.
    await Promise.all(Array.from({ length: 3 }, () => pool.run('async () => await wait()', hold)));
    expect(pool.stats().workersStarted).toBeGreaterThanOrEqual(2);
    await vi.waitFor(() => expect(pool.stats()).toMatchObject({ alive: 1 }), { timeout: 10_000, interval: 50 });
    const { workersStarted, workersStopped } = pool.stats();
    expect(workersStopped).toBe(workersStarted - 1);
    // The one kept answers at once, without a new start.
    expect(valueOf((await pool.run('async (instance) => instance + 1', { values: { instance: 41 }, host: {} })).outcome)).toBe(42);
    expect(pool.stats()).toMatchObject({ workersStarted, alive: 1 });
    pool.close();
  });

  it('keeps a worker that runs now and then although each look finds it idle', async () => {
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 2, idleStopMs: 400 });
    const hold: SandboxPoolGlobals = { values: { instance: null }, host: { wait: () => new Promise((resolve) => setTimeout(resolve, 300)) } };
    await Promise.all(Array.from({ length: 2 }, () => pool.run('async () => await wait()', hold)));
    const started = pool.stats().workersStarted;
    // A quick run every 100 ms for 1.2 s: the busy worker is never idle for 400 ms, the other one is.
    for (let i = 0; i < 12; i++) {
      valueOf((await pool.run('async (instance) => instance', { values: { instance: i }, host: {} })).outcome);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(pool.stats()).toMatchObject({ alive: 1, workersStarted: started });
    pool.close();
  });

  it('takes runs queued behind a long run back and gives them to other workers', async () => {
    // A loop of 1 s: the quick runs' wait is far from it even on a loaded machine (315 ms seen against 200 ms).
    // 30 s of wall clock: the four runs that hold the workers wait for three workers to start, which
    // took over 5 s once on a loaded machine.
    const limits = { ...LIMITS, cpuMs: 1000, wallMs: 30_000 };
    const pool = new SandboxPool(limits, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 4 });
    await pool.warm();
    // Start three more workers (each takes ~100 ms, more on a loaded machine), so that there are idle
    // ones: the four runs wait in the host until all four are there, so each has a worker of its own.
    let arrived = 0;
    let release!: () => void;
    const allThere = new Promise<void>((resolve) => (release = resolve));
    const wait = () => {
      arrived += 1;
      if (arrived === 4) release();
      return allThere.then(() => 'all there');
    };
    const hold: SandboxPoolGlobals = { values: { instance: null }, host: { wait } };
    // Four hooks (four codes): one hook holds at most all workers but one (`nextFair`), and runs of
    // one code would wait for each other until the wall-clock limit.
    const holding = await Promise.all(Array.from({ length: 4 }, (_, n) => pool.run(`async () => await wait(${n})`, hold)));
    expect(holding.map(({ outcome }) => valueOf(outcome))).toEqual(Array(4).fill('all there'));
    // A worker reports itself idle a moment after its run answered.
    await vi.waitFor(() => expect(pool.stats()).toMatchObject({ alive: 4, idle: 4 }), { timeout: 5000 });
    // Sent in the same moment, the quick runs queue behind the endless loop in its worker at first.
    const slow = pool.run('async () => { for (;;) {} }', NO_GRANTS);
    const started = performance.now();
    const quick = await Promise.all(
      Array.from({ length: 5 }, async (_, i) => {
        const { outcome } = await pool.run('async (instance) => instance', { values: { instance: i }, host: {} });
        return { value: valueOf(outcome), ms: performance.now() - started };
      }),
    );
    expect(quick.map(({ value }) => value)).toEqual([0, 1, 2, 3, 4]);
    // Taken back at the watchdog's next look (every 20 ms), long before the loop's limit.
    expect(Math.max(...quick.map(({ ms }) => ms))).toBeLessThan(limits.cpuMs);
    expect((await slow).outcome).toMatchObject({ ok: false, kind: 'timeout' });
    pool.close();
  });

  it('fails a run that waited for a worker longer than maxWaitMs, without starting it', async () => {
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 1, maxWaitMs: 100 });
    await pool.warm();
    let release!: (value: string) => void;
    const held = new Promise<string>((resolve) => (release = resolve));
    let calls = 0;
    const hold: SandboxPoolGlobals = { values: { instance: null }, host: { hold: () => ((calls += 1), held) } };
    const first = pool.run('async () => await hold()', hold);
    const second = await pool.run('async () => await hold()', hold);
    expect(second.outcome).toEqual({ ok: false, kind: 'timeout', message: 'Hook not started: all 1 hook workers were busy for 100 ms' });
    release('done');
    expect(valueOf((await first).outcome)).toBe('done');
    expect(calls).toBe(1);
    pool.close();
  });
});

describe('memory: the engine’s heap is capped per worker', () => {
  it('frees the garbage a successful run left in cycles before the next run needs the memory (or replaces the worker)', async () => {
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 1 });
    await pool.warm();
    // 20 MB in cycles, which this build's collector leaves until it counts enough allocations.
    const litter = "async () => { for (let i = 0; i < 20; i++) { const o = { b: new ArrayBuffer(1 << 20) }; o.self = o; } return 'ok' }";
    // Fits in the 32 MB limit, not beside the litter under the 48 MB cap.
    const needs28 = 'async () => { const keep = []; for (let i = 0; i < 28; i++) keep.push(new ArrayBuffer(1 << 20)); return keep.length }';
    for (let round = 0; round < 3; round++) {
      expect(valueOf((await pool.run(litter, NO_GRANTS)).outcome)).toBe('ok');
      expect(valueOf((await pool.run(needs28, NO_GRANTS)).outcome)).toBe(28);
    }
    pool.close();
  });

  it('keeps the worker of a run that caught an allocation the cap refused, with a new context', async () => {
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 1 });
    await pool.warm();
    const greedy = 'async () => { const a = new ArrayBuffer(20 << 20); try { new ArrayBuffer(31 << 20); return "granted" } catch (error) { return error.message } }';
    for (let i = 0; i < 3; i++) expect(valueOf((await pool.run(greedy, NO_GRANTS)).outcome)).toBe('out of memory');
    expect(valueOf((await pool.run('async () => new ArrayBuffer(31 << 20).byteLength', NO_GRANTS)).outcome)).toBe(31 << 20);
    expect(pool.stats()).toMatchObject({ workersStarted: 1, workersStopped: 0 });
    pool.close();
  });

  it('keeps the worker of a successful run that used most of the memory for a moment', async () => {
    const pool = new SandboxPool(ROOMY, { ...DEFAULT_SANDBOX_POOL, maxWorkers: 1 });
    await pool.warm();
    const big = 'async () => { const a = new ArrayBuffer(20 << 20); const b = new ArrayBuffer(10 << 20); return a.byteLength + b.byteLength }';
    for (let i = 0; i < 5; i++) expect(valueOf((await pool.run(big, NO_GRANTS)).outcome)).toBe(30 << 20);
    expect(pool.stats()).toMatchObject({ workersStarted: 1, workersStopped: 0 });
    pool.close();
  });

  it.each([
    ['strings of 1 MB', 'async () => { const keep = []; for (;;) keep.push("x".repeat(1 << 20) + keep.length) }'],
    ['small objects', 'async () => { const keep = []; for (;;) keep.push({ i: keep.length, s: "abc" + keep.length }) }'],
    // The 32 MB buffer is refused before the heap reaches its cap.
    ['doubling buffers', 'async () => { let n = 1 << 20; const keep = []; for (;;) { keep.push(new Uint8Array(n)); n *= 2 } }'],
  ])('stops a hook allocating %s without bound, frees its context and runs the next hook normally in the same worker', async (_case, code) => {
    // A CPU budget large enough that memory, not time, is what stops the hook.
    const pool = new SandboxPool(ROOMY);
    await pool.warm();
    const { outcome } = await pool.run(code, NO_GRANTS);
    expect(outcome).toEqual({ ok: false, kind: 'memory', message: 'Hook stopped: it used more than 32 MB of memory' });
    expect(valueOf((await pool.run('async () => "fine"', NO_GRANTS)).outcome)).toBe('fine');
    expect(pool.stats()).toMatchObject({ workersStarted: 1, workersStopped: 0, alive: 1 });
    pool.close();
  });
});

describe('built-ins that loop natively, where the engine never checks its limits', () => {
  it.each([
    ['an iterator helper draining an endless array iterator', 'Array.prototype.values.call({ length: 2 ** 53 - 1 }).drop(Infinity).next()'],
    ['a Set method reading keys from the same', 'new Set([1]).union({ size: 1, has: () => true, keys: () => Array.prototype.values.call({ length: 2 ** 53 - 1 }) }).size'],
    ['the decimal text of a huge BigInt', '(3n ** 600000n).toString().length'],
    ['String.raw over a huge raw length', 'String.raw({ raw: { length: 2 ** 31 } }, "x").length'],
  ])('terminates the worker of %s past the CPU budget, while the server’s thread keeps running', async (_case, expression) => {
    const pool = new SandboxPool(LIMITS);
    await pool.warm();
    const { result, ticks, elapsed } = await ticksDuring(() => pool.run(`async () => ${expression}`, NO_GRANTS));
    expect(result.outcome).toEqual({ ok: false, kind: 'timeout', message: 'Hook stopped: it computed for more than 200 ms' });
    // The watchdog fires at the budget plus its grace; timers on this thread kept firing meanwhile.
    expect(elapsed).toBeGreaterThanOrEqual(LIMITS.cpuMs + WATCHDOG_GRACE_MS - 5);
    // A 5 ms timer that fired at least every 50 ms on average: blocked, it would not fire at all.
    expect(ticks).toBeGreaterThanOrEqual(Math.floor(elapsed / 50));
    expect(pool.stats().workersStopped).toBe(1);
    expect(valueOf((await pool.run('async () => 1 + 1', NO_GRANTS)).outcome)).toBe(2);
    pool.close();
  });

  it('terminates it at the wall-clock limit when that comes first', async () => {
    const pool = new SandboxPool({ ...LIMITS, cpuMs: 20_000, wallMs: 300 });
    await pool.warm();
    const { outcome } = await pool.run('async () => (3n ** 600000n).toString().length', NO_GRANTS);
    expect(outcome).toEqual({ ok: false, kind: 'timeout', message: 'Hook stopped: it ran for more than 300 ms' });
    expect(pool.stats().workersStopped).toBe(1);
    pool.close();
  });
});
