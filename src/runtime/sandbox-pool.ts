import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SlotPoolOptions } from './sandbox.js';
import {
  expiredWaits,
  idleToStop,
  nextFair,
  overrunLimit,
  waitLimitMs,
  WITHDRAW_AFTER_MS,
  workerFor,
  workersToStart,
  growthDueIn,
  WaitingLine,
  type ScheduledRun,
  type ScheduledWorker,
} from './sandbox-scheduling.js';
import { stoppedAt, Unserialisable, WithBody, type SandboxLimits, type SandboxOutcome } from './sandbox-types.js';
import { CODE_CACHE_CHARS, CodeCache, CURRENT_RUN, QUEUED, RUN_SLOTS, WITHDRAWN, type HostReply, type ToServer, type ToWorker, type WireArgument, type WorkerData } from './sandbox-wire.js';
import { withFields } from '../platform/objects.js';

/** A host function answered on the server's thread: `fetch`, `db.find`, ... */
export type RemoteMember = (args: unknown[], signal: AbortSignal) => Promise<unknown>;

/**
 * What a run grants: `values` are JSON values (`instance` is also the hook's argument and is read
 * back after the run); `host` maps a global name to a host function or an object of host functions
 * that run on the server's thread (arguments arrive as JSON copies, or `Unserialisable`; a result is
 * a JSON value or a `WithBody`; a thrown Error reaches the guest with its message only). Every run
 * also gets `console` and `crypto`, which run in the worker (src/runtime/guest-library.ts).
 */
export interface SandboxPoolGlobals {
  values: Record<string, unknown>;
  host: Record<string, RemoteMember | Record<string, RemoteMember>>;
  /** Whether the outcome carries `instance` as the run left it (default true): see SandboxGlobals. */
  readInstance?: boolean;
}

/** What `SandboxPool.run` answers: the run's outcome with what it printed. */
export interface SandboxPoolResult {
  outcome: SandboxOutcome;
  /** The run's console lines; none when its thread had to be terminated. */
  console: string[];
  /** How long it waited for a worker (milliseconds), as the run log shows it. */
  queuedMs?: number;
}

/** How many worker threads a `SandboxPool` runs, and how each worker's `Sandbox` keeps its slot (see SlotPoolOptions). */
export interface SandboxPoolOptions extends Pick<SlotPoolOptions, 'maxRunsPerSlot' | 'maxCompiledPerSlot'> {
  /** Worker threads at most; a run that may await the host has one to itself, others may queue PIPELINE_DEPTH deep. */
  maxWorkers: number;
  /** How long a run may wait for a worker before it fails without starting; default twice the wall-clock limit. */
  maxWaitMs?: number;
  /** How long a worker beyond the last one may run nothing before it is stopped; default IDLE_STOP_MS. */
  idleStopMs?: number;
  /** The most hook code, in characters, each worker keeps so that it is not sent again; default CODE_CACHE_CHARS. */
  codeCacheChars?: number;
}

export const DEFAULT_SANDBOX_POOL: SandboxPoolOptions = { maxWorkers: 8, maxRunsPerSlot: 10_000, maxCompiledPerSlot: 64 };

/**
 * A worker that ran nothing for this long is stopped, all but the last one: the pool grows for a
 * burst and gives its memory back after it (each worker holds its own V8 heap and engine memory,
 * 10 to 20 MB idle). The last one stays, so a run after a quiet spell finds a worker ready.
 */
export const IDLE_STOP_MS = 60_000;

/** How often the watchdog looks at the runs in progress (one timer for all of them). */
const WATCHDOG_TICK_MS = 20;
/** Memory of the engine besides what a run allocates: its own data, the hardened context, compiled hooks. */
export const ENGINE_BASE_BYTES = 16 * 1024 * 1024;
const PAGE_BYTES = 64 * 1024;
/** The engine's memory when a worker starts: what the hardened context needs, so that few runs grow it. */
const INITIAL_BYTES = 16 * 1024 * 1024;

/** A run given to the pool: waiting for a worker, queued in one, or running there. */
interface PendingRun extends ScheduledRun {
  /** Its number in the worker it was last sent to. */
  seq: number;
  code: string;
  globals: SandboxPoolGlobals;
  /** performance.now() when it became the first run of its worker's queue: the start of its wall-clock limit. */
  started: number;
  /** Aborted when the run ends; made by the first host call (an AbortController costs more than a small run). */
  abort: AbortController | undefined;
  resolve: (result: SandboxPoolResult) => void;
}

/**
 * One worker thread: one engine module with its own fixed-size memory. It runs the runs sent to
 * it one after the other, in order; `runs[0]` is the one running.
 */
interface SandboxWorker extends ScheduledWorker {
  thread: Worker;
  meter: Float64Array;
  runStates: Int32Array;
  /** The number of the next run sent to it. */
  nextSeq: number;
  /** Set while runs are queued behind its running run: see `watchQueue`. */
  withdrawTimer: NodeJS.Timeout | undefined;
  runs: PendingRun[];
  compiles: number;
  /** The sizes of the code it holds: a copy of its own CodeCache, kept in step with it. */
  codes: CodeCache<number>;
  /** The thread ran out of its own (V8) memory. */
  exhausted: boolean;
  gone: boolean;
}

let compiledEngine: Promise<WebAssembly.Module> | undefined;

/** The engine's WebAssembly, compiled once per process and shared with every worker. */
function engineModule(): Promise<WebAssembly.Module> {
  compiledEngine ??= (async () => {
    const fromLibrary = createRequire(createRequire(import.meta.url).resolve('quickjs-emscripten'));
    return WebAssembly.compile(readFileSync(fromLibrary.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')));
  })();
  return compiledEngine;
}

/** dist/sandbox-worker.js: beside the bundle in production, or built by scripts/build.mjs when running from sources. */
function workerScript(): URL {
  const beside = new URL('./sandbox-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL('../../dist/sandbox-worker.js', import.meta.url);
}

/**
 * Runs hook code in QuickJS in worker threads, never in the server's own thread or V8 context.
 * Each worker holds one engine module whose WebAssembly memory is capped (the run's memory limit
 * plus ENGINE_BASE_BYTES), so a run allocating without bound, in small pieces or large, fails
 * with "out of memory" inside its own worker. The engine stops loops at its CPU and wall-clock
 * limits; a watchdog here terminates the thread of a run that overruns them by WATCHDOG_GRACE_MS,
 * which catches built-ins that loop natively where the engine never checks. A worker runs the
 * runs sent to it one at a time, in order, and keeps its hardened context and compiled hooks
 * between them (`Sandbox`); it is replaced when it was terminated, its engine failed, or a full
 * heap left it damaged (docs/decisions.md D9).
 */
export class SandboxPool {
  private readonly workers = new Set<SandboxWorker>();
  /** Runs no worker has taken yet, in order of arrival. */
  private readonly waiting = new WaitingLine<PendingRun>();
  private starting = 0;
  private closed = false;
  private warming: Promise<void> | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private idleCheck: NodeJS.Timeout | undefined;
  private growthCheck: NodeJS.Timeout | undefined;
  private readonly counters = { workersStarted: 0, workersStopped: 0, compiles: 0, codesSent: 0 };

  constructor(
    private readonly limits: SandboxLimits,
    private readonly options: SandboxPoolOptions = DEFAULT_SANDBOX_POOL,
  ) {}

  /**
   * Passes `globals` to `code` (a single function expression), calls it with `instance` in a
   * worker and waits for the outcome. `cacheKey` names the code in the compiled-code cache (give
   * its sha256). Grant only the host members the code names: a run without any cannot wait for
   * the host, so it may queue behind other such runs in a busy worker instead of taking an idle
   * one (a thread woken per run costs more than a small run). Never throws.
   */
  run(code: string, globals: SandboxPoolGlobals, cacheKey: string = code): Promise<SandboxPoolResult> {
    if (this.closed) return Promise.resolve(RUNTIME_FAILED);
    return new Promise((resolve) => {
      const now = performance.now();
      const pending: PendingRun = {
        seq: -1,
        code,
        cacheKey,
        globals,
        exclusive: Object.keys(globals.host).length > 0,
        queued: now,
        started: 0,
        abort: undefined,
        resolve: (result) => resolve({ outcome: result.outcome, console: result.console, queuedMs: Math.round((pending.started || performance.now()) - pending.queued) }),
      };
      this.waiting.push(pending);
      this.dispatch();
      this.watchdog ??= setInterval(() => this.watch(), WATCHDOG_TICK_MS);
    });
  }

  private codeCacheChars(): number {
    return this.options.codeCacheChars ?? CODE_CACHE_CHARS;
  }

  /** Starts a first worker ahead of the first run. */
  warm(): Promise<void> {
    this.warming ??= this.closed
      ? Promise.resolve()
      : this.launch().catch((error: unknown) => {
          this.warming = undefined;
          throw error;
        });
    return this.warming;
  }

  /** Workers started and stopped (terminated or failed), hooks compiled, runs sent with their code, and workers idle and alive now. */
  stats(): { workersStarted: number; workersStopped: number; compiles: number; codesSent: number; idle: number; alive: number } {
    const idle = [...this.workers].filter((worker) => worker.ready && worker.runs.length === 0).length;
    return withFields(this.counters, { idle, alive: this.workers.size });
  }

  /** Terminates the idle workers and fails the runs no worker has taken; runs in workers end, then their workers. */
  close(): void {
    this.closed = true;
    clearInterval(this.idleCheck);
    clearTimeout(this.growthCheck);
    for (const run of this.waiting.takeFront()) run.resolve(RUNTIME_FAILED);
    for (const worker of this.workers) if (worker.runs.length === 0) this.stop(worker);
  }

  /** Gives waiting runs, in fair order (see `nextFair`), to workers that may take them (see `workerFor`), and starts workers for the rest. */
  private dispatch(): void {
    if (this.closed) {
      for (const run of this.waiting.takeFront()) run.resolve(RUNTIME_FAILED);
      return;
    }
    while (this.waiting.length > 0) {
      const now = performance.now();
      const computing = (candidate: SandboxWorker) => this.computing(candidate, now);
      // A worker that would take no run at all takes none of these: the line is not read.
      if (!workerFor(ANY_RUN, this.workers, computing, unfinished)) break;
      const index = nextFair(this.waiting.all, this.workers, this.options.maxWorkers, this.waiting.hooks);
      if (index === -1) break;
      const worker = workerFor(this.waiting.all[index]!, this.workers, computing, unfinished);
      if (!worker) break;
      this.send(worker, this.waiting.take(index));
    }
    this.grow();
  }

  /**
   * Starts the workers `workersToStart` asks for; each ready one takes runs and lets the next
   * start. Runs that have not waited long enough to start one are looked at again when they have.
   */
  private grow(): void {
    if (this.closed) return;
    const now = performance.now();
    const count = workersToStart(this.waiting.all, this.workers.size, this.starting, this.options.maxWorkers, now);
    // Runs not yet due to start a worker: looked at again when the first is (a run already due and
    // none started means the starting ones or the maximum hold them back; a ready worker dispatches).
    const dueIn = count === 0 && this.workers.size + this.starting < this.options.maxWorkers ? growthDueIn(this.waiting.all, now) : undefined;
    if (dueIn !== undefined && dueIn > 0 && !this.growthCheck) {
      this.growthCheck = setTimeout(() => {
        this.growthCheck = undefined;
        this.dispatch();
      }, dueIn);
    }
    for (let started = 0; started < count; started++) {
      void this.launch().catch(() => {
        // Without any worker the runs would wait for good: fail the first (each failed start fails one).
        if (this.workers.size === 0 && this.waiting.length > 0) this.waiting.take(0).resolve(RUNTIME_FAILED);
      });
    }
  }

  /** Starts a worker that takes waiting runs once it is ready. */
  private launch(): Promise<void> {
    this.starting += 1;
    return this.start().then(
      (worker) => {
        this.starting -= 1;
        this.ready(worker);
      },
      (error: unknown) => {
        this.starting -= 1;
        throw error;
      },
    );
  }

  private async start(): Promise<SandboxWorker> {
    const meter = new SharedArrayBuffer(2 * Float64Array.BYTES_PER_ELEMENT);
    const runStates = new SharedArrayBuffer((RUN_SLOTS + 1) * Int32Array.BYTES_PER_ELEMENT);
    Atomics.store(new Int32Array(runStates), CURRENT_RUN, -1);
    const data: WorkerData = {
      limits: this.limits,
      maxRunsPerSlot: this.options.maxRunsPerSlot,
      maxCompiledPerSlot: this.options.maxCompiledPerSlot,
      wasmModule: await engineModule(),
      initialPages: INITIAL_BYTES / PAGE_BYTES,
      memoryPages: Math.ceil((this.limits.memoryBytes + ENGINE_BASE_BYTES) / PAGE_BYTES),
      codeCacheChars: this.codeCacheChars(),
      meter,
      runStates,
    };
    // The thread's own V8 heap holds only copies of the values and host-call arguments of its runs.
    const thread = new Worker(workerScript(), { workerData: data, resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 } });
    thread.unref();
    const worker: SandboxWorker = { thread, meter: new Float64Array(meter), runStates: new Int32Array(runStates), nextSeq: 0, withdrawTimer: undefined, lastActive: performance.now(), ready: false, runs: [], compiles: 0, codes: new CodeCache<number>(this.codeCacheChars(), (size) => size), exhausted: false, gone: false };
    this.counters.workersStarted += 1;
    this.workers.add(worker);
    return new Promise((resolve, reject) => {
      thread.on('message', (message: ToServer) => {
        if (message.type === 'ready') resolve(worker);
        else if (message.type === 'call') this.answer(worker, message);
        else this.done(worker, message);
      });
      thread.on('error', (error: Error & { code?: string }) => {
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') worker.exhausted = true;
      });
      thread.on('exit', () => {
        this.gone(worker);
        reject(new Error('the sandbox worker exited before it was ready'));
      });
    });
  }

  private ready(worker: SandboxWorker): void {
    if (worker.gone) return;
    worker.ready = true;
    if (this.closed) return this.stop(worker);
    const idleStopMs = this.options.idleStopMs ?? IDLE_STOP_MS;
    this.idleCheck ??= setInterval(() => this.stopIdle(idleStopMs), Math.max(10, idleStopMs / 4)).unref();
    this.dispatch();
  }

  /** Stops the workers idle for `idleStopMs` or more, all but the one that ran last (see `idleToStop`). */
  private stopIdle(idleStopMs: number): void {
    for (const worker of idleToStop([...this.workers], performance.now(), idleStopMs)) this.stop(worker);
  }

  private send(worker: SandboxWorker, run: PendingRun): void {
    run.seq = worker.nextSeq++;
    worker.lastActive = performance.now();
    Atomics.store(worker.runStates, run.seq % RUN_SLOTS, QUEUED);
    worker.runs.push(run);
    if (worker.runs.length === 1) run.started = performance.now();
    else this.watchQueue(worker);
    const host = run.exclusive
      ? Object.fromEntries(
          Object.entries(run.globals.host).map(([name, member]): [string, true | string[]] => [name, typeof member === 'function' ? true : Object.keys(member)]),
        )
      : NO_HOST_MEMBERS;
    const held = worker.codes.has(run.cacheKey);
    try {
      worker.thread.postMessage({
        type: 'run',
        seq: run.seq,
        code: held ? undefined : run.code,
        cacheKey: run.cacheKey,
        values: run.globals.values,
        host,
        readInstance: run.globals.readInstance !== false,
      } satisfies ToWorker);
      // After the send only: a message that was never sent must not change the copy of the worker's cache.
      if (held) worker.codes.use(run.cacheKey);
      else {
        worker.codes.put(run.cacheKey, run.code.length);
        this.counters.codesSent += 1;
      }
    } catch {
      // Values the structured clone cannot copy: callers pass JSON values, so this is a caller's bug.
      worker.runs.pop();
      if (worker.runs.length === 0) this.dispatch();
      run.resolve({ outcome: { ok: false, kind: 'thrown', message: 'The hook could not be started' }, console: [] });
    }
  }

  /** Ends the first run of `worker` with `result`; the next one (if any) starts its clock. */
  private finishFirst(worker: SandboxWorker, result: SandboxPoolResult): void {
    const run = worker.runs.shift();
    if (!run) return;
    worker.lastActive = performance.now();
    run.abort?.abort();
    const next = worker.runs[0];
    if (next) {
      next.started = performance.now();
      this.watchQueue(worker);
    }
    run.resolve(result);
  }

  /**
   * Terminates the worker of each run past its CPU or wall-clock limit (see `overrunLimit`); CPU
   * time is read from the meter the worker writes. A run that waited for a worker longer than
   * `maxWaitMs` fails without starting.
   */
  private watch(): void {
    const now = performance.now();
    const maxWaitMs = waitLimitMs(this.options.maxWaitMs, this.limits.wallMs);
    for (const run of this.waiting.takeFront(expiredWaits(this.waiting.all, now, maxWaitMs))) {
      const message = `Hook not started: all ${this.options.maxWorkers} hook workers were busy for ${maxWaitMs} ms`;
      run.resolve({ outcome: { ok: false, kind: 'timeout', message }, console: [] });
    }
    let busy = this.waiting.length;
    for (const worker of this.workers) {
      const run = worker.runs[0];
      if (!run) continue;
      busy += 1;
      const limit = overrunLimit(this.computed(worker, run, now), now - run.started, this.limits);
      if (limit) this.overrun(worker, limit);
    }
    if (busy === 0) {
      clearInterval(this.watchdog);
      this.watchdog = undefined;
    }
  }

  /**
   * The time `run` has computed, from the worker's meter; 0 while the meter is about another run
   * (the one before, if the worker has not started this one; the one after, if this one's `done`
   * is still on its way).
   */
  private computed(worker: SandboxWorker, run: PendingRun, now: number): number {
    return Atomics.load(worker.runStates, CURRENT_RUN) === run.seq ? this.computing(worker, now) : 0;
  }

  /**
   * The time the run `worker` is on now (or ended last) has computed, from the worker's meter: that
   * of `computed` without asking which run it is. A worker that has just started a run reads 0.
   */
  private computing(worker: SandboxWorker, now: number): number {
    const sliceStart = worker.meter[0]!;
    return worker.meter[1]! + (sliceStart > 0 ? performance.timeOrigin + now - sliceStart : 0);
  }

  /** Looks again at `worker` once its current run may have computed WITHDRAW_AFTER_MS, if runs are queued behind it. */
  private watchQueue(worker: SandboxWorker): void {
    if (worker.withdrawTimer || worker.runs.length < 2) return;
    const delay = WITHDRAW_AFTER_MS - this.computing(worker, performance.now());
    worker.withdrawTimer = setTimeout(
      () => {
        worker.withdrawTimer = undefined;
        if (worker.gone || worker.runs.length < 2) return;
        if (this.computing(worker, performance.now()) >= WITHDRAW_AFTER_MS) this.withdraw(worker);
        else this.watchQueue(worker);
      },
      Math.max(1, delay),
    );
  }

  /**
   * Takes back the runs queued behind a long run, those the worker has not started, and gives
   * them to other workers (or to this one again, once it is through).
   */
  private withdraw(worker: SandboxWorker): void {
    const taken = worker.runs.slice(1).filter((run) => Atomics.compareExchange(worker.runStates, run.seq % RUN_SLOTS, QUEUED, WITHDRAWN) === QUEUED);
    if (taken.length === 0) return;
    worker.runs = worker.runs.filter((run) => !taken.includes(run));
    this.waiting.putBack(taken);
    this.dispatch();
  }

  /** A host call from the worker's running run, answered when the host function settles. */
  private answer(worker: SandboxWorker, message: Extract<ToServer, { type: 'call' }>): void {
    const run = worker.runs[0];
    if (!run) return;
    const granted = run.globals.host[message.name];
    const member = granted && message.method !== undefined ? (typeof granted === 'function' ? undefined : granted[message.method]) : granted;
    const reply = (answer: HostReply) => {
      if (worker.runs[0] !== run) return;
      try {
        worker.thread.postMessage(answer);
      } catch {
        // A result the structured clone cannot copy: host functions return JSON values, so this is a host bug.
        worker.thread.postMessage({ type: 'reply', call: answer.call, ok: false, message: 'host operation failed' } satisfies HostReply);
      }
    };
    if (typeof member !== 'function') {
      reply({ type: 'reply', call: message.call, ok: false, message: `${message.method ? `${message.name}.${message.method}` : message.name} is not available` });
      return;
    }
    Promise.resolve()
      .then(() => member(message.args.map(fromWire), (run.abort ??= new AbortController()).signal))
      .then(
        (value) =>
          reply(
            value instanceof WithBody
              ? { type: 'reply', call: message.call, ok: true, fields: value.fields, body: value.body }
              : { type: 'reply', call: message.call, ok: true, value },
          ),
        (error: unknown) => reply({ type: 'reply', call: message.call, ok: false, message: error instanceof Error ? error.message : 'host operation failed' }),
      );
  }

  private done(worker: SandboxWorker, message: Extract<ToServer, { type: 'done' }>): void {
    this.counters.compiles += message.compiles - worker.compiles;
    worker.compiles = message.compiles;
    this.finishFirst(worker, { outcome: message.outcome, console: message.console });
    if (!message.reusable) {
      // The worker starts no further run after this one: they go back to the front of the line.
      this.stop(worker);
      this.replace();
    } else if (this.closed && worker.runs.length === 0) {
      this.stop(worker);
    } else {
      this.dispatch();
    }
  }

  /** Ends the running run of `worker` as a timeout and terminates its thread. */
  private overrun(worker: SandboxWorker, limit: 'cpu' | 'wall'): void {
    this.finishFirst(worker, { outcome: stoppedAt(limit, this.limits), console: [] });
    this.stop(worker);
    this.replace();
  }

  /** Starts a worker in place of one that served and was stopped, so that the next run does not wait for a thread to start. */
  private replace(): void {
    if (this.closed || this.workers.size + this.starting > 0) return;
    this.launch().catch(() => {
      // The next run starts a worker again, and fails if that fails too.
    });
  }

  /** Terminates a worker whose running run has ended (or that has none). */
  private stop(worker: SandboxWorker): void {
    void worker.thread.terminate();
    this.gone(worker, false);
  }

  /**
   * A worker that exited or was stopped: its running run fails if it had not ended, and the runs
   * queued behind it, which never started (only runs without host members queue, and they cannot
   * have done anything outside their worker), wait for another.
   */
  private gone(worker: SandboxWorker, unexpected = true): void {
    if (worker.gone) return;
    worker.gone = true;
    this.workers.delete(worker);
    this.counters.workersStopped += 1;
    if (unexpected) {
      this.finishFirst(worker, worker.exhausted ? { outcome: stoppedAt('memory', this.limits), console: [] } : RUNTIME_FAILED);
    }
    const queued = worker.runs.splice(0);
    if (this.closed) for (const run of queued) run.resolve(RUNTIME_FAILED);
    else this.waiting.putBack(queued);
    this.dispatch();
  }
}

/**
 * The runs sent to `worker` that it has not finished by its own account: from the run it is on
 * (its CURRENT_RUN) to the last sent. The runs before that one have ended and their answers are on
 * their way to the server's thread (see `workerFor`).
 */
function unfinished(worker: SandboxWorker): number {
  const { runs } = worker;
  if (runs.length === 0) return 0;
  const current = Atomics.load(worker.runStates, CURRENT_RUN);
  return current > runs[0]!.seq ? runs.at(-1)!.seq - current + 1 : runs.length;
}

/** The host members of a run that has none. */
const NO_HOST_MEMBERS: Readonly<Record<string, true | string[]>> = Object.freeze({});

/** A run without host members, as `workerFor` reads it: any worker that would take no such run takes none. */
const ANY_RUN: ScheduledRun = { cacheKey: '', exclusive: false, queued: 0 };

const RUNTIME_FAILED: SandboxPoolResult = { outcome: { ok: false, kind: 'thrown', message: 'The hook runtime failed' }, console: [] };

function fromWire(argument: WireArgument): unknown {
  return 'unserialisable' in argument ? new Unserialisable(argument.unserialisable) : argument.value;
}
