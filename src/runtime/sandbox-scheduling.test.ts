import { describe, expect, it } from 'vitest';
import {
  expiredWaits,
  FLOWING_MS,
  GROW_AFTER_MS,
  MAX_IN_FLIGHT,
  growthDueIn,
  idleToStop,
  MAX_STARTING,
  nextFair,
  overrunLimit,
  PIPELINE_DEPTH,
  waitLimitMs,
  WATCHDOG_GRACE_MS,
  WaitingLine,
  WITHDRAW_AFTER_MS,
  workerFor,
  workersToStart,
  type ScheduledRun,
  type ScheduledWorker,
} from './sandbox-scheduling.js';

// The sandbox pool's policy without threads: src/runtime/sandbox-pool.test.ts tests the workers' lifecycle.

const quick = (cacheKey = 'quick', queued = 0): ScheduledRun => ({ cacheKey, exclusive: false, queued });
const exclusive = (cacheKey = 'awaits-host', queued = 0): ScheduledRun => ({ cacheKey, exclusive: true, queued });

interface TestWorker extends ScheduledWorker {
  name: string;
  runs: ScheduledRun[];
  /** What its current run has computed, as its meter says. */
  computed: number;
}

function worker(name: string, runs: ScheduledRun[] = [], computed = 0, lastActive = 0): TestWorker {
  return { name, ready: true, runs, computed, lastActive };
}

const computing = (candidate: TestWorker) => candidate.computed;
const nameOf = (chosen: TestWorker | undefined) => chosen?.name;

/** Places waiting runs the way SandboxPool.dispatch does; returns the runs left waiting. */
function dispatch(waiting: ScheduledRun[], workers: TestWorker[], maxWorkers: number): ScheduledRun[] {
  const line = new WaitingLine<ScheduledRun>();
  for (const run of waiting) line.push(run);
  for (;;) {
    const index = nextFair(line.all, workers, maxWorkers, line.hooks);
    if (index === -1) return [...line.all];
    const taker = workerFor(line.all[index]!, workers, computing);
    if (!taker) return [...line.all];
    taker.runs.push(line.take(index));
  }
}

/** `runs` as an array that counts the reads of its elements. */
function counted(runs: ScheduledRun[]): { line: ScheduledRun[]; reads: () => number } {
  let reads = 0;
  const line = new Proxy(runs, {
    get(target, property, receiver) {
      if (typeof property === 'string' && /^\d+$/.test(property)) reads += 1;
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  return { line, reads: () => reads };
}

describe('nextFair: which waiting run is placed next', () => {
  it('takes the oldest run of a hook that holds no worker', () => {
    const waiting = [quick('flood'), quick('flood'), quick('other'), quick('third')];
    expect(nextFair(waiting, [worker('a', [quick('flood')])], 4)).toBe(2);
  });

  it('takes the oldest run when no hook holds a worker', () => {
    expect(nextFair([quick('a'), quick('b')], [worker('idle')], 4)).toBe(0);
  });

  it('prefers the hook holding the fewest workers', () => {
    const workers = [worker('1', [quick('big')]), worker('2', [quick('big')]), worker('3', [quick('small')])];
    expect(nextFair([quick('big'), quick('small')], workers, 8)).toBe(1);
  });

  it.each([
    ['4 workers: a hook holding 3 waits', 4, 3, -1],
    ['4 workers: a hook holding 2 may take a third', 4, 2, 0],
    ['1 worker: a hook in it waits until it is through', 1, 1, -1],
  ])('leaves a worker for the other hooks (%s)', (_case, maxWorkers, held, expected) => {
    const workers = Array.from({ length: held }, (_, i) => worker(String(i), [quick('flood')]));
    expect(nextFair([quick('flood'), quick('flood')], workers, maxWorkers)).toBe(expected);
    // The same when the caller counts the hooks in line (one here: the shortcut for a single hook).
    expect(nextFair([quick('flood'), quick('flood')], workers, maxWorkers, 1)).toBe(expected);
  });
});

describe('workerFor: which worker takes a run', () => {
  it('gives a run that awaits the host an idle worker of its own, never a busy one', () => {
    expect(nameOf(workerFor(exclusive(), [worker('busy', [quick()]), worker('idle')], computing))).toBe('idle');
    expect(workerFor(exclusive(), [worker('busy', [quick()])], computing)).toBeUndefined();
  });

  it('skips workers whose thread is not ready yet', () => {
    const starting = { ...worker('starting'), ready: false };
    expect(workerFor(quick(), [starting], computing)).toBeUndefined();
  });

  it('queues a quick run behind quick runs that flow (computed under FLOWING_MS) before waking an idle worker', () => {
    const workers = [worker('idle'), worker('long queue', [quick(), quick(), quick()], 0.5), worker('short queue', [quick()], FLOWING_MS - 0.1)];
    expect(nameOf(workerFor(quick(), workers, computing))).toBe('short queue');
  });

  it('prefers an idle worker to one whose current run has computed FLOWING_MS or more', () => {
    expect(nameOf(workerFor(quick(), [worker('queuing', [quick()], FLOWING_MS), worker('idle')], computing))).toBe('idle');
  });

  it('queues behind a run under WITHDRAW_AFTER_MS when no worker is idle', () => {
    expect(nameOf(workerFor(quick(), [worker('queuing', [quick()], WITHDRAW_AFTER_MS - 0.1)], computing))).toBe('queuing');
  });

  it.each([
    ['a long run', [quick()], WITHDRAW_AFTER_MS],
    ['a run that awaits the host', [exclusive()], 0],
    ['a full queue', Array.from({ length: PIPELINE_DEPTH }, () => quick()), 0],
  ])('queues nothing behind %s', (_case, runs, computed) => {
    expect(workerFor(quick(), [worker('busy', runs, computed)], computing)).toBeUndefined();
  });

  it('counts the runs a worker has not finished by its own account, not those whose answers this thread has yet to read', () => {
    // Under load the server's thread reads the answers late: a worker through all but 2 of its
    // PIPELINE_DEPTH runs still takes more, and the one with fewer runs ahead of it first.
    const late = worker('late answers', Array.from({ length: PIPELINE_DEPTH }, () => quick()));
    const behind = worker('behind', [quick(), quick(), quick()]);
    const unfinished = (candidate: TestWorker) => (candidate === late ? 2 : candidate.runs.length);
    expect(nameOf(workerFor(quick(), [behind, late], computing, unfinished))).toBe('late answers');
    expect(nameOf(workerFor(quick(), [late], computing))).toBeUndefined();
    // Whatever it says, a worker holds at most MAX_IN_FLIGHT runs (their states' slots are reused).
    const full = worker('full', Array.from({ length: MAX_IN_FLIGHT }, () => quick()));
    expect(workerFor(quick(), [full], computing, () => 0)).toBeUndefined();
  });

  it('judges a busy worker by what its meter says it computed, not by how long ago its runs were sent', () => {
    // Four runs sent 200 ms ago, while this thread was held: the worker's meter says it is not stuck.
    const busy = worker('busy', Array.from({ length: 4 }, () => quick('quick', -200)), 0.1);
    const waiting = dispatch([quick(), quick(), quick()], [busy], 4);
    expect(waiting).toEqual([]);
    expect(busy.runs).toHaveLength(7);
    expect(workersToStart(waiting, 1, 0, 4, 0)).toBe(0);
  });
});

describe('nextFair and WaitingLine under a long line', () => {
  it('reads one run of a line of one hook, however long, when told how many hooks wait', () => {
    const { line, reads } = counted(Array.from({ length: 10_000 }, () => quick('flood')));
    expect(nextFair(line, [worker('a', [quick('flood')]), worker('b')], 8, 1)).toBe(0);
    expect(reads()).toBe(1);
  });

  it('gives the same answer with and without the count of hooks', () => {
    const keys = ['a', 'b', 'c'];
    for (let seed = 1; seed <= 200; seed++) {
      let state = seed;
      const next = (below: number) => {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        return state % below;
      };
      const line = new WaitingLine<ScheduledRun>();
      for (let index = next(12); index >= 0; index--) line.push(quick(keys[next(3)]));
      const workers = Array.from({ length: 1 + next(4) }, (_, index) => worker(`w${index}`, Array.from({ length: next(3) }, () => quick(keys[next(3)]))));
      expect(nextFair(line.all, workers, 4, line.hooks), `seed ${seed}`).toBe(nextFair(line.all, workers, 4));
    }
  });

  it('counts the hooks waiting as a count of the line would, past the hooks it forgets', () => {
    const line = new WaitingLine<ScheduledRun>();
    let seed = 5;
    const next = (below: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % below;
    for (let step = 0; step < 6000; step++) {
      // Hooks of many versions: past a thousand, those with no run waiting are forgotten.
      if (line.length === 0 || next(3) > 0) line.push(quick(`hook-${next(step < 3000 ? 1500 : 4)}`));
      else if (next(2) === 0) line.take(next(line.length));
      else line.takeFront(1 + next(3));
      expect(line.hooks, `step ${step}`).toBe(new Set(line.all.map((run) => run.cacheKey)).size);
    }
  });

  it('counts the hooks waiting through every change of the line', () => {
    const line = new WaitingLine<ScheduledRun>();
    line.push(quick('a'));
    line.push(quick('b'));
    line.push(quick('a'));
    expect([line.length, line.hooks]).toEqual([3, 2]);
    expect(line.take(1).cacheKey).toBe('b');
    expect([line.length, line.hooks]).toEqual([2, 1]);
    line.putBack([quick('c'), quick('a')]);
    expect(line.all.map((run) => run.cacheKey)).toEqual(['c', 'a', 'a', 'a']);
    expect(line.hooks).toBe(2);
    expect(line.takeFront(2).map((run) => run.cacheKey)).toEqual(['c', 'a']);
    expect([line.length, line.hooks]).toEqual([2, 1]);
    expect(line.takeFront()).toHaveLength(2);
    expect([line.length, line.hooks]).toEqual([0, 0]);
  });
});

describe('workersToStart: how many workers to start', () => {
  it.each([
    ['nothing waits', [], 1, 0, 8, 0],
    ['one run that awaits the host', [exclusive()], 0, 0, 8, 1],
    ['three such runs: at most MAX_STARTING at a time', [exclusive(), exclusive(), exclusive()], 0, 0, 8, MAX_STARTING],
    ['three such runs, one worker already starting', [exclusive(), exclusive(), exclusive()], 0, 1, 8, MAX_STARTING - 1],
    ['PIPELINE_DEPTH quick runs share one worker', Array.from({ length: PIPELINE_DEPTH }, () => quick()), 0, 0, 8, 1],
    ['one quick run more needs a second', Array.from({ length: PIPELINE_DEPTH + 1 }, () => quick()), 0, 0, 8, 2],
    ['room for one more worker only', [exclusive(), exclusive()], 7, 0, 8, 1],
    ['every worker running', [exclusive()], 8, 0, 8, 0],
  ])('%s', (_case, waiting, alive, starting, maxWorkers, expected) => {
    expect(workersToStart(waiting, alive, starting, maxWorkers, GROW_AFTER_MS)).toBe(expected);
  });

  it('starts none for runs that have waited less than GROW_AFTER_MS while a worker is alive or starting', () => {
    const burst = Array.from({ length: 5 * PIPELINE_DEPTH }, () => quick('burst', 100));
    expect(workersToStart(burst, 1, 0, 8, 100 + GROW_AFTER_MS - 1)).toBe(0);
    expect(workersToStart(burst, 0, 1, 8, 100 + GROW_AFTER_MS - 1)).toBe(0);
    expect(workersToStart(burst, 1, 0, 8, 100 + GROW_AFTER_MS)).toBe(MAX_STARTING);
  });

  it('starts one at once when no worker is alive or starting', () => {
    expect(workersToStart([quick('first', 100)], 0, 0, 8, 100)).toBe(1);
  });

  it('counts only the runs due, the oldest first', () => {
    const line = [...Array.from({ length: PIPELINE_DEPTH }, () => quick('old', 0)), ...Array.from({ length: 3 * PIPELINE_DEPTH }, () => quick('new', 50))];
    expect(workersToStart(line, 1, 0, 8, GROW_AFTER_MS)).toBe(1);
  });

  it('reads no further than the workers it may start', () => {
    const { line, reads } = counted(Array.from({ length: 10_000 }, () => exclusive('awaits', 0)));
    expect(workersToStart(line, 1, 0, 8, GROW_AFTER_MS)).toBe(MAX_STARTING);
    expect(reads()).toBeLessThanOrEqual(MAX_STARTING);
  });
});

describe('growthDueIn: when runs not yet due to start a worker are looked at again', () => {
  it('is what the first run has left to wait, 0 once due, undefined for an empty line', () => {
    expect(growthDueIn([quick('a', 100), quick('a', 104)], 103)).toBe(GROW_AFTER_MS - 3);
    expect(growthDueIn([quick('a', 100)], 100 + GROW_AFTER_MS + 5)).toBe(0);
    expect(growthDueIn([], 100)).toBeUndefined();
  });
});

describe('idleToStop: which idle workers to stop', () => {
  const IDLE_STOP_MS = 1000;
  const NOW = 10_000;

  it('stops workers idle for idleStopMs or more while another works, and keeps the others', () => {
    const workers = [
      worker('busy', [quick()], 0, 0),
      worker('idle long', [], 0, NOW - IDLE_STOP_MS),
      worker('idle briefly', [], 0, NOW - IDLE_STOP_MS + 1),
      { ...worker('starting', [], 0, 0), ready: false },
    ];
    expect(idleToStop(workers, NOW, IDLE_STOP_MS).map(nameOf)).toEqual(['idle long']);
  });

  it('keeps the worker active last when all are idle, so that the next run finds one ready', () => {
    const workers = [worker('older', [], 0, 1000), worker('last', [], 0, 3000), worker('oldest', [], 0, 0)];
    expect(idleToStop(workers, NOW, IDLE_STOP_MS).map(nameOf)).toEqual(['older', 'oldest']);
    expect(idleToStop([worker('only')], NOW, IDLE_STOP_MS)).toEqual([]);
  });
});

describe('limits', () => {
  const LIMITS = { cpuMs: 200, wallMs: 5000 };

  it.each([
    ['within both', LIMITS.cpuMs + WATCHDOG_GRACE_MS, LIMITS.wallMs + WATCHDOG_GRACE_MS, undefined],
    ['past the CPU limit and its grace', LIMITS.cpuMs + WATCHDOG_GRACE_MS + 1, 0, 'cpu'],
    ['past the wall-clock limit and its grace', 0, LIMITS.wallMs + WATCHDOG_GRACE_MS + 1, 'wall'],
    ['past both: CPU is named', LIMITS.cpuMs + WATCHDOG_GRACE_MS + 1, LIMITS.wallMs + WATCHDOG_GRACE_MS + 1, 'cpu'],
  ])('names the overrun limit of a run %s', (_case, computedMs, ranMs, expected) => {
    expect(overrunLimit(computedMs, ranMs, LIMITS)).toBe(expected);
  });

  it('lets a run wait for a worker twice the wall-clock limit unless maxWaitMs says otherwise', () => {
    expect(waitLimitMs(undefined, 300)).toBe(600);
    expect(waitLimitMs(100, 300)).toBe(100);
  });

  it('counts the runs that waited too long from the oldest, up to the first that did not', () => {
    expect(expiredWaits([quick('a', 0), quick('b', 150), quick('c', 0)], 200, 100)).toBe(1);
    expect(expiredWaits([quick('a', 150)], 200, 100)).toBe(0);
  });
});
