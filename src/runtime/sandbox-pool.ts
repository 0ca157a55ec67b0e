import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Unserialisable, WithBody, type SandboxLimits, type SandboxOutcome } from './sandbox.js';
import type { HostReply, ToServer, ToWorker, WireArgument, WorkerData } from './sandbox-wire.js';

/** A host function answered on the server's thread: `fetch`, `db.find`, ... */
export type RemoteMember = (args: unknown[], signal: AbortSignal) => Promise<unknown>;

/**
 * What a run grants: `values` are JSON values (`instance` is also the hook's argument and is read
 * back after the run); `host` maps a global name to a host function or an object of host functions
 * that run on the server's thread (arguments arrive as JSON copies, or `Unserialisable`; a result is
 * a JSON value or a `WithBody`; a thrown Error reaches the guest with its message only). Every run
 * also gets `console` and `crypto`, which run in the worker (src/runtime/guest-library.ts).
 */
export interface IsolatedGlobals {
  values: Record<string, unknown>;
  host: Record<string, RemoteMember | Record<string, RemoteMember>>;
}

export interface IsolatedOutcome {
  outcome: SandboxOutcome;
  /** The run's console lines; none when its thread had to be terminated. */
  console: string[];
}

export interface SandboxPoolOptions {
  /** Runs at a time, each in a worker thread of its own; further runs wait for one. */
  maxWorkers: number;
  maxRunsPerSlot: number;
  maxCompiledPerSlot: number;
}

export const DEFAULT_WORKERS: SandboxPoolOptions = { maxWorkers: 8, maxRunsPerSlot: 10_000, maxCompiledPerSlot: 64 };

/** Time the engine gets past a limit to stop the run itself before its thread is terminated. */
export const WATCHDOG_GRACE_MS = 100;
/** Memory of the engine besides what a run allocates: its own data, the hardened context, compiled hooks. */
export const ENGINE_BASE_BYTES = 16 * 1024 * 1024;
const PAGE_BYTES = 64 * 1024;
/** The engine's memory when a worker starts: what the hardened context needs, so that few runs grow it. */
const INITIAL_BYTES = 16 * 1024 * 1024;

interface PendingRun {
  globals: IsolatedGlobals;
  abort: AbortController;
  finish: (result: IsolatedOutcome) => void;
}

interface Waiter {
  resolve: (worker: SandboxWorker) => void;
  reject: (error: Error) => void;
}

/** One worker thread: one engine module with its own fixed-size memory, one run at a time. */
interface SandboxWorker {
  thread: Worker;
  meter: Float64Array;
  current: PendingRun | undefined;
  compiles: number;
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
 * which catches built-ins that loop natively where the engine never checks. A worker serves
 * runs one at a time and keeps its hardened context and compiled hooks between them (`Sandbox`);
 * it is replaced when it was terminated, ran out of memory, or its engine failed.
 */
export class SandboxPool {
  private readonly idle: SandboxWorker[] = [];
  private readonly workers = new Set<SandboxWorker>();
  private readonly waiters: Waiter[] = [];
  private starting = 0;
  private closed = false;
  private warming: Promise<void> | undefined;
  private readonly counters = { workersStarted: 0, workersStopped: 0, compiles: 0 };

  constructor(
    private readonly limits: SandboxLimits,
    private readonly options: SandboxPoolOptions = DEFAULT_WORKERS,
  ) {}

  /**
   * Passes `globals` to `code` (a single function expression), calls it with `instance` in a
   * worker and waits for the outcome. `cacheKey` names the code in the compiled-code cache (give
   * its sha256). Never throws.
   */
  async run(code: string, globals: IsolatedGlobals, cacheKey: string = code): Promise<IsolatedOutcome> {
    let worker: SandboxWorker;
    try {
      worker = await this.acquire();
    } catch {
      return { outcome: { ok: false, kind: 'thrown', message: 'The hook runtime failed' }, console: [] };
    }
    return this.execute(worker, code, globals, cacheKey);
  }

  /** Starts a first worker ahead of the first run. */
  warm(): Promise<void> {
    this.warming ??= this.closed ? Promise.resolve() : this.start().then((worker) => this.release(worker));
    return this.warming;
  }

  /** Workers started and stopped (terminated or failed), hooks compiled, and workers idle and alive now. */
  stats(): { workersStarted: number; workersStopped: number; compiles: number; idle: number; alive: number } {
    return { ...this.counters, idle: this.idle.length, alive: this.workers.size };
  }

  /** Terminates the idle workers; a run in progress ends and then its worker. */
  close(): void {
    this.closed = true;
    for (const worker of this.idle.splice(0)) this.stop(worker);
    for (const waiter of this.waiters.splice(0)) waiter.reject(new Error('The hook runtime is closed'));
  }

  private acquire(): Promise<SandboxWorker> {
    if (this.closed) return Promise.reject(new Error('The hook runtime is closed'));
    const worker = this.idle.pop();
    if (worker) return Promise.resolve(worker);
    const waiting = new Promise<SandboxWorker>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.grow();
    return waiting;
  }

  /** Starts workers for the runs waiting, up to maxWorkers; each goes to whichever run waits first when it is ready. */
  private grow(): void {
    while (this.starting < this.waiters.length && this.workers.size + this.starting < this.options.maxWorkers) {
      this.starting += 1;
      this.start().then(
        (worker) => {
          this.starting -= 1;
          this.release(worker);
        },
        (error: unknown) => {
          this.starting -= 1;
          this.waiters.shift()?.reject(error instanceof Error ? error : new Error('worker failed to start'));
        },
      );
    }
  }

  private async start(): Promise<SandboxWorker> {
    const meter = new SharedArrayBuffer(2 * Float64Array.BYTES_PER_ELEMENT);
    const data: WorkerData = {
      limits: this.limits,
      maxRunsPerSlot: this.options.maxRunsPerSlot,
      maxCompiledPerSlot: this.options.maxCompiledPerSlot,
      wasmModule: await engineModule(),
      initialPages: INITIAL_BYTES / PAGE_BYTES,
      memoryPages: Math.ceil((this.limits.memoryBytes + ENGINE_BASE_BYTES) / PAGE_BYTES),
      meter,
    };
    // The thread's own V8 heap holds only copies of one run's values and host-call arguments.
    const thread = new Worker(workerScript(), { workerData: data, resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 } });
    thread.unref();
    const worker: SandboxWorker = { thread, meter: new Float64Array(meter), current: undefined, compiles: 0, exhausted: false, gone: false };
    this.counters.workersStarted += 1;
    this.workers.add(worker);
    return new Promise((resolve, reject) => {
      let ready = false;
      thread.on('message', (message: ToServer) => {
        if (message.type === 'ready') {
          ready = true;
          resolve(worker);
        } else if (message.type === 'call') {
          this.answer(worker, message);
        } else {
          this.done(worker, message);
        }
      });
      thread.on('error', (error: Error & { code?: string }) => {
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') worker.exhausted = true;
      });
      thread.on('exit', () => {
        this.gone(worker);
        if (!ready) reject(new Error('the sandbox worker exited before it was ready'));
      });
    });
  }

  private execute(worker: SandboxWorker, code: string, globals: IsolatedGlobals, cacheKey: string): Promise<IsolatedOutcome> {
    return new Promise((resolve) => {
      const { cpuMs, wallMs } = this.limits;
      const watchdog = () => {
        const sliceStart = worker.meter[0]!;
        const used = worker.meter[1]! + (sliceStart > 0 ? performance.timeOrigin + performance.now() - sliceStart : 0);
        if (used > cpuMs + WATCHDOG_GRACE_MS) this.overrun(worker, `Hook stopped: it computed for more than ${cpuMs} ms`);
        else cpuTimer = setTimeout(watchdog, Math.max(10, cpuMs + WATCHDOG_GRACE_MS - used));
      };
      let cpuTimer = setTimeout(watchdog, cpuMs + WATCHDOG_GRACE_MS);
      const wallTimer = setTimeout(() => this.overrun(worker, `Hook stopped: it ran for more than ${wallMs} ms`), wallMs + WATCHDOG_GRACE_MS);
      const run: PendingRun = {
        globals,
        abort: new AbortController(),
        finish: (result) => {
          if (worker.current !== run) return;
          worker.current = undefined;
          clearTimeout(cpuTimer);
          clearTimeout(wallTimer);
          run.abort.abort();
          resolve(result);
        },
      };
      worker.current = run;
      const host = Object.fromEntries(
        Object.entries(globals.host).map(([name, member]): [string, true | string[]] => [name, typeof member === 'function' ? true : Object.keys(member)]),
      );
      this.post(worker, { type: 'run', code, cacheKey, values: globals.values, host });
    });
  }

  /** A host call from the worker's current run, answered when the host function settles. */
  private answer(worker: SandboxWorker, message: Extract<ToServer, { type: 'call' }>): void {
    const run = worker.current;
    if (!run) return;
    const granted = run.globals.host[message.name];
    const member = granted && message.method !== undefined ? (typeof granted === 'function' ? undefined : granted[message.method]) : granted;
    const reply = (answer: HostReply) => {
      if (worker.current === run) this.post(worker, answer);
    };
    if (typeof member !== 'function') {
      reply({ type: 'reply', call: message.call, ok: false, message: `${message.method ? `${message.name}.${message.method}` : message.name} is not available` });
      return;
    }
    Promise.resolve()
      .then(() => member(message.args.map(fromWire), run.abort.signal))
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
    const run = worker.current;
    if (!run) return;
    run.finish({ outcome: message.outcome, console: message.console });
    if (message.reusable) return this.release(worker);
    this.stop(worker);
    this.replace();
  }

  /** Ends the current run of `worker` as a timeout and terminates its thread. */
  private overrun(worker: SandboxWorker, message: string): void {
    worker.current?.finish({ outcome: { ok: false, kind: 'timeout', message }, console: [] });
    this.stop(worker);
    this.replace();
  }

  /** Starts a worker in place of one that served and was stopped, so that the next run does not wait for a thread to start. */
  private replace(): void {
    if (this.closed || this.workers.size + this.starting > 0) return;
    this.starting += 1;
    this.start().then(
      (worker) => {
        this.starting -= 1;
        this.release(worker);
      },
      () => {
        this.starting -= 1;
      },
    );
  }

  /** A worker that exited: its run (if any) fails, and a waiting run may start a new one. */
  private gone(worker: SandboxWorker): void {
    if (worker.gone) return;
    worker.gone = true;
    this.workers.delete(worker);
    this.counters.workersStopped += 1;
    const index = this.idle.indexOf(worker);
    if (index >= 0) this.idle.splice(index, 1);
    const outcome: SandboxOutcome = worker.exhausted
      ? { ok: false, kind: 'memory', message: `Hook stopped: it used more than ${this.limits.memoryBytes / 1024 / 1024} MB of memory` }
      : { ok: false, kind: 'thrown', message: 'The hook runtime failed' };
    worker.current?.finish({ outcome, console: [] });
    this.grow();
  }

  private release(worker: SandboxWorker): void {
    if (worker.gone) return this.grow();
    if (this.closed) return this.stop(worker);
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(worker);
    else this.idle.push(worker);
  }

  private stop(worker: SandboxWorker): void {
    void worker.thread.terminate();
    this.gone(worker);
  }

  private post(worker: SandboxWorker, message: ToWorker): void {
    try {
      worker.thread.postMessage(message);
    } catch {
      // A value the structured clone cannot copy: only host functions returning non-JSON values could cause it.
      if (message.type === 'reply') this.post(worker, { type: 'reply', call: message.call, ok: false, message: 'host operation failed' });
      else {
        worker.current?.finish({ outcome: { ok: false, kind: 'thrown', message: 'The hook could not be started' }, console: [] });
        this.release(worker);
      }
    }
  }
}

function fromWire(argument: WireArgument): unknown {
  return 'unserialisable' in argument ? new Unserialisable(argument.unserialisable) : argument.value;
}
