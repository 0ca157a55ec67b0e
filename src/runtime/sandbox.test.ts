import { describe, expect, it } from 'vitest';
import { DEFAULT_POOL, Sandbox, type SandboxGlobals, type SandboxOutcome } from './sandbox.js';

const LIMITS = { cpuMs: 50, wallMs: 1000, memoryBytes: 16 * 1024 * 1024, stackBytes: 256 * 1024 };
const NO_GRANTS: SandboxGlobals = { values: { instance: null }, host: {} };

function sandbox(pool: Partial<typeof DEFAULT_POOL> = {}): Sandbox {
  return new Sandbox(LIMITS, { ...DEFAULT_POOL, ...pool });
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
    expect(box.stats()).toEqual({ slotsCreated: 1, compiles: 2, idle: 1 });
    box.close();
  });

  it('reuses the context after code that throws', async () => {
    const box = sandbox();
    expect(await box.run('async () => { throw new Error("no") }', NO_GRANTS)).toEqual({ ok: false, kind: 'thrown', message: 'no' });
    expect(valueOf(await box.run('async () => 1', NO_GRANTS))).toBe(1);
    expect(box.stats().slotsCreated).toBe(1);
    box.close();
  });

  it.each([
    ['stopped for computing too long', 'async () => { while (true) {} }', 'timeout'],
    ['stopped at the memory limit', 'async () => { const keep = []; let n = 1 << 20; while (true) { keep.push(new Uint8Array(n)); n *= 2 } }', 'memory'],
    ['stopped at the stack limit', 'async () => { const f = (n) => f(n + 1) + 1; return f(0) }', 'memory'],
  ])('replaces the context after a run %s', async (_case, code, kind) => {
    const box = sandbox();
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
    expect(box.stats()).toEqual({ slotsCreated: 1, compiles: 0, idle: 1 });
    valueOf(await box.run('async () => 1', NO_GRANTS));
    expect(box.stats().slotsCreated).toBe(1);
    box.close();
  });
});
