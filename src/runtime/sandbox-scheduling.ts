/**
 * The sandbox pool's scheduling policy as pure functions of what the pool holds (src/runtime/sandbox-pool.ts
 * keeps the threads, the timers and the messages): which waiting run is placed next, which worker
 * takes it, how many workers to start, which idle ones to stop, and when a run is past its limits.
 */

/** A run as the policy reads it: waiting for a worker, queued in one, or running there. */
export interface ScheduledRun {
  /** The hook's code key: the runs of one hook count together for fairness. */
  cacheKey: string;
  /** It may await host calls (it has host members), so no run may queue behind it in its worker. */
  exclusive: boolean;
  /** performance.now() when it was given to the pool. */
  queued: number;
}

/** A worker as the policy reads it. */
export interface ScheduledWorker {
  /** Its thread has started and said so: it may take runs. */
  ready: boolean;
  /** The runs sent to it and not ended, in order; `runs[0]` is the one running. */
  runs: readonly ScheduledRun[];
  /** performance.now() when it was last given a run or ended one. */
  lastActive: number;
}

/** Runs without host members a worker may hold at a time: it goes from one to the next without sleeping. */
export const PIPELINE_DEPTH = 8;
/**
 * Runs a worker may hold at most, finished by it or not, until the server has read their answers:
 * fewer than the slots of a worker's run states (RUN_SLOTS in sandbox-wire.ts).
 */
export const MAX_IN_FLIGHT = 32;
/** Workers starting at a time: a start costs ~110 ms of CPU, and eight at once starve the runs in progress. */
export const MAX_STARTING = 2;
/**
 * How long a run waits for the workers alive before one more is started for it. A start costs
 * ~110 ms of CPU, far more than a burst of small runs takes to drain, and on a machine with few
 * cores it slows the very runs it was started for (which then start more): only a line that
 * lasts starts workers.
 */
export const GROW_AFTER_MS = 10;
/** A run computing longer than this has the runs queued behind it taken back for other workers. */
export const WITHDRAW_AFTER_MS = 5;
/** A worker whose current run has computed less than this is taken to be working through its queue quickly. */
export const FLOWING_MS = 2;
/** Time the engine gets past a limit to stop the run itself before its thread is terminated. */
export const WATCHDOG_GRACE_MS = 100;

/**
 * The index in `waiting` of the run to place next: of the hooks (by code) with runs waiting, the
 * one holding the fewest workers, its oldest run first. One hook holds at most all workers but one,
 * so a flood of one hook (or of one caller's calls to it) always leaves a worker for the others,
 * who then need not wait for the flood's runs to end. -1 when every waiting run is held back by
 * that cap.
 *
 * @param hooks how many hooks have runs in `waiting`, when the caller keeps count (see
 *   `WaitingLine`): the search stops once it has met each of them, so that a long line of one
 *   hook costs as little as a short one.
 * @example nextFair([{ cacheKey: 'a', ... }, { cacheKey: 'b', ... }], workersRunningA, 4) // 1: 'b' holds no worker
 */
export function nextFair(waiting: readonly ScheduledRun[], workers: Iterable<ScheduledWorker>, maxWorkers: number, hooks = Infinity): number {
  const cap = Math.max(1, maxWorkers - 1);
  // Runs of one hook only (the usual case, and a flood's): its oldest, unless it holds the cap.
  if (hooks === 1 && waiting.length > 0) return holding(workers, waiting[0]!.cacheKey) < cap ? 0 : -1;
  const held = new Map<string, number>();
  let best = -1;
  let bestHeld = Infinity;
  for (let index = 0; index < waiting.length && held.size < hooks; index++) {
    const key = waiting[index]!.cacheKey;
    if (held.has(key)) continue;
    const count = holding(workers, key);
    held.set(key, count);
    if (count === 0) return index;
    if (count < cap && count < bestHeld) {
      best = index;
      bestHeld = count;
    }
  }
  return best;
}

/** How many workers hold a run of the hook `cacheKey`. */
function holding(workers: Iterable<ScheduledWorker>, cacheKey: string): number {
  let count = 0;
  for (const worker of workers) if (worker.runs.some((run) => run.cacheKey === cacheKey)) count += 1;
  return count;
}

/** Hooks the waiting line counts before it forgets those with no run waiting (code of earlier versions, deleted hooks). */
const FORGET_AFTER_HOOKS = 1000;

/**
 * The runs no worker has taken yet, oldest first, with a count of them per hook (by code) so that
 * placing one costs the same for a line of ten runs and one of ten thousand: under a burst the
 * line grows, and a cost that grew with it would slow the server's thread just when it is needed.
 */
export class WaitingLine<R extends ScheduledRun> {
  private runs: R[] = [];
  /**
   * Runs waiting per hook, a hook without any kept at 0: a set and a delete per run made V8 rebuild
   * the Map's table, in the old generation where a long-lived Map keeps its tables, and that garbage
   * brought on the server thread's major collections. Hooks at 0 are forgotten past FORGET_AFTER_HOOKS.
   */
  private readonly perHook = new Map<string, number>();
  private hooksWaiting = 0;

  get length(): number {
    return this.runs.length;
  }

  /** How many hooks have runs waiting. */
  get hooks(): number {
    return this.hooksWaiting;
  }

  /** The runs in line, oldest first (read only: change the line through its methods). */
  get all(): readonly R[] {
    return this.runs;
  }

  /** A run that has just arrived: at the back. */
  push(run: R): void {
    this.runs.push(run);
    this.count(run, 1);
  }

  /** Runs taken back from a worker, older than those in line: at the front. */
  putBack(runs: readonly R[]): void {
    if (runs.length === 0) return;
    this.runs.unshift(...runs);
    for (const run of runs) this.count(run, 1);
  }

  /** Takes the run at `index` out of the line. */
  take(index: number): R {
    const [run] = index === 0 ? [this.runs.shift()!] : this.runs.splice(index, 1);
    this.count(run!, -1);
    return run!;
  }

  /** Takes the first `count` runs (all when omitted) out of the line. */
  takeFront(count = this.runs.length): R[] {
    const taken = this.runs.splice(0, count);
    for (const run of taken) this.count(run, -1);
    return taken;
  }

  private count(run: R, by: number): void {
    const before = this.perHook.get(run.cacheKey) ?? 0;
    const now = before + by;
    if (before === 0 && now > 0) this.hooksWaiting += 1;
    else if (before > 0 && now === 0) this.hooksWaiting -= 1;
    this.perHook.set(run.cacheKey, now);
    if (now === 0 && this.perHook.size > FORGET_AFTER_HOOKS) {
      for (const [cacheKey, count] of this.perHook) if (count === 0) this.perHook.delete(cacheKey);
    }
  }
}

/**
 * The worker to give `run`: an idle worker for an exclusive run. For another: a worker busy with
 * such runs whose current one has computed less than FLOWING_MS (the thread is awake and gets
 * through its queue without sleeping), else an idle worker, else a worker busy with such runs
 * whose current one has computed less than WITHDRAW_AFTER_MS; each with fewer than PIPELINE_DEPTH
 * runs it has not finished, the one with the fewest first. None behind a long run. Undefined when
 * no worker may take it.
 *
 * @param computing what the current run of a worker has computed so far, in ms. Read it from the
 *   worker's own meter, not from when the pool saw the run start: under load the pool takes the
 *   workers' answers late, and a worker done with its run would look stuck.
 * @param unfinished the runs sent to a worker that it has not finished, by its own account (the run
 *   it is on and those after it). Under load the server's thread reads the workers' answers late:
 *   counted by the answers alone, workers that are keeping up look full, runs wait in the pool's
 *   line and start workers that only take more of the machine. A worker holds at most
 *   MAX_IN_FLIGHT runs whatever it says.
 */
export function workerFor<W extends ScheduledWorker>(
  run: ScheduledRun,
  workers: Iterable<W>,
  computing: (worker: W) => number,
  unfinished: (worker: W) => number = (worker) => worker.runs.length,
): W | undefined {
  let idle: W | undefined;
  let flowing: { worker: W; ahead: number } | undefined;
  let queuing: { worker: W; ahead: number } | undefined;
  for (const worker of workers) {
    if (!worker.ready) continue;
    const queued = worker.runs.length;
    if (queued === 0) {
      if (run.exclusive) return worker;
      idle ??= worker;
    } else if (!run.exclusive && queued < MAX_IN_FLIGHT && !worker.runs[0]!.exclusive) {
      const ahead = unfinished(worker);
      if (ahead >= PIPELINE_DEPTH) continue;
      const computed = computing(worker);
      if (computed < FLOWING_MS) {
        if (!flowing || ahead < flowing.ahead) flowing = { worker, ahead };
      } else if (computed < WITHDRAW_AFTER_MS && (!queuing || ahead < queuing.ahead)) {
        queuing = { worker, ahead };
      }
    }
  }
  return flowing?.worker ?? idle ?? queuing?.worker;
}

/**
 * How many workers to start now for the runs still waiting (oldest first): one per exclusive run
 * and one per PIPELINE_DEPTH others, counting only the runs that have waited GROW_AFTER_MS or more
 * (every run when no worker is alive or starting), at most MAX_STARTING starting at a time and at
 * most `maxWorkers` in all (`alive` started, `starting` on their way). It reads the line only as
 * far as it needs to.
 */
export function workersToStart(waiting: readonly ScheduledRun[], alive: number, starting: number, maxWorkers: number, now: number): number {
  // The workers starting count towards those needed.
  const cap = Math.min(MAX_STARTING, maxWorkers - alive);
  if (cap - starting <= 0) return 0;
  const anyAge = alive + starting === 0;
  let exclusive = 0;
  let others = 0;
  let needed = 0;
  for (const run of waiting) {
    if (!anyAge && now - run.queued < GROW_AFTER_MS) break;
    if (run.exclusive) exclusive += 1;
    else others += 1;
    needed = exclusive + Math.ceil(others / PIPELINE_DEPTH);
    if (needed >= cap) break;
  }
  return Math.max(0, Math.min(needed, cap) - starting);
}

/** In how many ms the first run of `waiting` (the oldest) will have waited GROW_AFTER_MS, 0 if it has; undefined when nothing waits. */
export function growthDueIn(waiting: readonly ScheduledRun[], now: number): number | undefined {
  const first = waiting[0];
  return first ? Math.max(0, first.queued + GROW_AFTER_MS - now) : undefined;
}

/**
 * The workers to stop: those that ran nothing for `idleStopMs` or more, all but the one active
 * last when every worker is idle, so that a run after a quiet spell finds a worker ready.
 */
export function idleToStop<W extends ScheduledWorker>(workers: readonly W[], now: number, idleStopMs: number): W[] {
  const idle = workers.filter((worker) => worker.ready && worker.runs.length === 0 && now - worker.lastActive >= idleStopMs);
  if (idle.length === 0 || idle.length < workers.length) return idle;
  const last = idle.reduce((latest, worker) => (worker.lastActive > latest.lastActive ? worker : latest));
  return idle.filter((worker) => worker !== last);
}

/**
 * The limit a running run has overrun by more than WATCHDOG_GRACE_MS, if any: the engine stops
 * ordinary code itself, so this catches only built-ins looping natively.
 *
 * @param computedMs what the run has computed, from its worker's meter.
 * @param ranMs the time since it became the first run of its worker.
 */
export function overrunLimit(computedMs: number, ranMs: number, limits: { cpuMs: number; wallMs: number }): 'cpu' | 'wall' | undefined {
  if (computedMs > limits.cpuMs + WATCHDOG_GRACE_MS) return 'cpu';
  if (ranMs > limits.wallMs + WATCHDOG_GRACE_MS) return 'wall';
  return undefined;
}

/** How long a run may wait for a worker before it fails without starting: `maxWaitMs`, by default twice the wall-clock limit. */
export function waitLimitMs(maxWaitMs: number | undefined, wallMs: number): number {
  return maxWaitMs ?? 2 * wallMs;
}

/** How many runs at the front of `waiting` (oldest first) have waited longer than `limitMs`. */
export function expiredWaits(waiting: readonly ScheduledRun[], now: number, limitMs: number): number {
  let count = 0;
  while (count < waiting.length && now - waiting[count]!.queued > limitMs) count += 1;
  return count;
}
