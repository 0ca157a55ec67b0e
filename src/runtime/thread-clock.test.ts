import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SLOT_POOL, Sandbox } from './sandbox.js';
import type { SandboxGlobals } from './sandbox-types.js';
import { threadCpuClock, type ThreadClock } from './thread-clock.js';

const LIMITS = { cpuMs: 100, wallMs: 5000, memoryBytes: 16 * 1024 * 1024, stackBytes: 256 * 1024 };
const NO_GRANTS: SandboxGlobals = { values: { instance: null }, host: {} };
/** Guest code that computes for `ms` by its own clock (the wall clock: Date.now in the guest). */
const busyFor = (ms: number) => `async () => { const end = Date.now() + ${ms}; let n = 0; while (Date.now() < end) n++; return n > 0; }`;

/** A thread clock that says the thread ran `share` of the wall time: the rest it waited for a core. */
function sharedCore(share: number): { clock: ThreadClock; reads: () => number } {
  const start = performance.now();
  let reads = 0;
  return {
    clock: () => {
      reads += 1;
      return (performance.now() - start) * share;
    },
    reads: () => reads,
  };
}

describe("a run's CPU budget on a busy machine", () => {
  it('is not spent by time its thread waited for a core', async () => {
    const { clock } = sharedCore(0.1);
    const box = new Sandbox(LIMITS, DEFAULT_SLOT_POOL, { clock });
    // 300 ms by the wall clock, of which the thread computed 30: within the 100 ms budget, also when
    // a loaded machine stretches the run around the loop to a second (it did to over 400 ms once).
    expect(await box.run(busyFor(300), NO_GRANTS)).toMatchObject({ ok: true, value: true });
    box.close();
  });

  it('is spent by the time the thread computed', async () => {
    const { clock } = sharedCore(1);
    const box = new Sandbox(LIMITS, DEFAULT_SLOT_POOL, { clock });
    expect(await box.run(busyFor(2000), NO_GRANTS)).toMatchObject({ ok: false, kind: 'timeout' });
    box.close();
  });

  it('reads the clock once per run that stays within its budget by the wall clock', async () => {
    const { clock, reads } = sharedCore(1);
    const box = new Sandbox(LIMITS, DEFAULT_SLOT_POOL, { clock });
    for (let i = 0; i < 50; i++) await box.run('async () => 1', NO_GRANTS, 'one');
    expect(reads()).toBe(50);
    box.close();
  });
});

describe('threadCpuClock', () => {
  it.runIf(process.platform === 'linux')("reads this thread's CPU time, which grows while it computes, never faster than the wall clock, and not while it sleeps", async () => {
    const clock = threadCpuClock()!;
    const first = clock()!;
    const started = performance.now();
    // Computes until the clock says 20 ms (however long a busy machine makes that take).
    while (clock()! - first < 20);
    // Within a scheduler tick (4 ms at 250 Hz): the kernel's count of the running thread can lag by
    // up to one, and `first` was such a reading (24.0 ms of CPU against 22.8 ms of wall time, once).
    expect(clock()! - first).toBeLessThanOrEqual(performance.now() - started + 5);
    // Blocked, not awaiting: while this thread awaits a timer, the suite's process runs other work
    // on it (servers of earlier files wind down), which its clock rightly counts (71 ms once).
    const before = clock()!;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    expect(clock()! - before).toBeLessThan(50);
  });

  it.runIf(process.platform === 'linux')('reads the clock of the thread that made it: a worker’s does not count the server thread’s computing', async () => {
    // The worker makes its clock, then reports it before and after this thread computes 50 ms of CPU.
    const source = `
      const { parentPort } = require('node:worker_threads');
      const { openSync, readSync } = require('node:fs');
      const fd = openSync('/proc/thread-self/schedstat', 'r');
      const read = () => { const b = Buffer.alloc(64); const n = readSync(fd, b, 0, 64, 0); return Number(b.toString('latin1', 0, n).split(' ')[0]) / 1e6; };
      parentPort.on('message', () => parentPort.postMessage(read()));
      parentPort.postMessage(read());`;
    const worker = new Worker(source, { eval: true });
    const next = () => new Promise<number>((resolve) => worker.once('message', resolve));
    const first = await next();
    const mine = threadCpuClock()!;
    const start = mine()!;
    while (mine()! - start < 50);
    worker.postMessage('read');
    const second = await next();
    await worker.terminate();
    expect(second - first).toBeLessThan(25);
  });
});
