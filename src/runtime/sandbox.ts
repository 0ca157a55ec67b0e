import {
  newQuickJSWASMModule,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
  type VmCallResult,
} from 'quickjs-emscripten';

/** Limits of one run. */
export interface SandboxLimits {
  /** Time spent executing guest code (awaited host calls excluded). */
  cpuMs: number;
  /** Time from start to result, awaited host calls included. */
  wallMs: number;
  memoryBytes: number;
  /** QuickJS's own stack limit; must stay well below Node's native stack (see docs/decisions.md D9). */
  stackBytes: number;
}

/** Functions the guest reaches through the prelude's bridges; arguments and results are JSON values. */
export interface SandboxHost {
  /** Synchronous; a thrown Error reaches the guest as an Error with the same message. */
  call(op: string, args: unknown[]): unknown;
  /** Asynchronous; the signal aborts when the run ends first. */
  callAsync(op: string, args: unknown[], signal: AbortSignal): Promise<unknown>;
}

export type SandboxFailureKind = 'thrown' | 'timeout' | 'memory' | 'syntax' | 'invalid-return';

export type SandboxOutcome =
  | { ok: true; value: unknown; instance: unknown }
  | { ok: false; kind: SandboxFailureKind; message: string };

/**
 * Runs guest code in QuickJS compiled to WebAssembly: one WebAssembly module for the process,
 * a fresh QuickJS runtime and context for every run, so nothing survives from one run to the
 * next. A module whose engine failed (Node's own stack exhausted inside it, or a handle leak
 * caught at dispose) is dropped and the next run loads a new one.
 */
export class Sandbox {
  private module: Promise<QuickJSWASMModule> | undefined;

  constructor(
    private readonly limits: SandboxLimits,
    private readonly prelude: string,
  ) {}

  /**
   * Evaluates the prelude with the two host bridges and `grantsJson`, evaluates `code` (wrapped
   * in parentheses: it must be a function expression), calls the prelude's runner with it and
   * waits for the outcome. Never throws.
   */
  async run(code: string, grantsJson: string, host: SandboxHost): Promise<SandboxOutcome> {
    const loading = (this.module ??= newQuickJSWASMModule());
    const run = new SandboxRun(await loading, this.limits, host);
    try {
      return await run.execute(this.prelude, code, grantsJson);
    } catch (error) {
      this.drop(loading);
      if (error instanceof RangeError) return { ok: false, kind: 'memory', message: 'Hook stopped: it exhausted the stack' };
      return { ok: false, kind: 'thrown', message: 'The hook runtime failed' };
    } finally {
      if (!run.dispose()) this.drop(loading);
    }
  }

  /** Loads the engine ahead of the first run. */
  async warm(): Promise<void> {
    await (this.module ??= newQuickJSWASMModule());
  }

  private drop(module: Promise<QuickJSWASMModule>): void {
    if (this.module === module) this.module = undefined;
  }
}

class SandboxRun {
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;
  private readonly wallDeadline: number;
  private readonly pending = new Set<QuickJSDeferredPromise>();
  private readonly abort = new AbortController();
  private cpuUsed = 0;
  private sliceStart: number | undefined;
  private stopped: 'cpu' | 'wall' | undefined;
  private wake: (() => void) | undefined;
  private disposed = false;

  constructor(
    module: QuickJSWASMModule,
    private readonly limits: SandboxLimits,
    private readonly host: SandboxHost,
  ) {
    this.wallDeadline = performance.now() + limits.wallMs;
    this.runtime = module.newRuntime({
      memoryLimitBytes: limits.memoryBytes,
      maxStackSizeBytes: limits.stackBytes,
      interruptHandler: () => this.shouldInterrupt(),
    });
    this.context = this.runtime.newContext();
  }

  async execute(prelude: string, code: string, grantsJson: string): Promise<SandboxOutcome> {
    const runner = this.start(prelude, grantsJson);
    if ('kind' in runner) return runner;
    const hook = this.slice(() => this.context.evalCode(`(\n${code}\n)`, 'hook.js'));
    if (hook.error) {
      runner.dispose();
      return this.failure(hook.error, 'syntax');
    }
    if (this.context.typeof(hook.value) !== 'function') {
      runner.dispose();
      hook.value.dispose();
      return { ok: false, kind: 'syntax', message: 'Hook code must be a single async function, e.g. async function (instance) { ... }' };
    }
    const promise = this.slice(() => this.context.callFunction(runner, this.context.undefined, hook.value));
    runner.dispose();
    hook.value.dispose();
    if (promise.error) return this.failure(promise.error);
    return this.settle(promise.value);
  }

  /** Releases everything; false when the engine reported a leak and the module must not be reused. */
  dispose(): boolean {
    this.disposed = true;
    this.abort.abort();
    for (const deferred of this.pending) deferred.dispose();
    this.pending.clear();
    try {
      this.context.dispose();
      this.runtime.dispose();
      return true;
    } catch {
      return false;
    }
  }

  private start(prelude: string, grantsJson: string): QuickJSHandle | Extract<SandboxOutcome, { ok: false }> {
    const factory = this.slice(() => this.context.evalCode(prelude, 'prelude.js'));
    if (factory.error) return this.failure(factory.error);
    const hostCall = this.context.newFunction('hostCall', (op, args) => this.hostCall(op, args));
    const hostCallAsync = this.context.newFunction('hostCallAsync', (op, args) => this.hostCallAsync(op, args));
    const grants = this.context.newString(grantsJson);
    const runner = this.slice(() => this.context.callFunction(factory.value, this.context.undefined, hostCall, hostCallAsync, grants));
    for (const handle of [factory.value, hostCall, hostCallAsync, grants]) handle.dispose();
    return runner.error ? this.failure(runner.error) : runner.value;
  }

  private async settle(promise: QuickJSHandle): Promise<SandboxOutcome> {
    try {
      for (;;) {
        this.slice(() => this.runtime.executePendingJobs()).dispose();
        const state = this.context.getPromiseState(promise);
        if (state.type === 'fulfilled') return this.consume(state.value, (value) => this.fulfilled(value));
        if (state.type === 'rejected') return this.failure(state.error);
        if (this.stopped) return this.timeout();
        const remaining = this.wallDeadline - performance.now();
        if (remaining <= 0) {
          this.stopped = 'wall';
          return this.timeout();
        }
        if (this.pending.size === 0) return { ok: false, kind: 'timeout', message: 'Hook never finished: it awaits a promise that nothing settles' };
        await this.nextSettlement(remaining);
      }
    } finally {
      promise.dispose();
    }
  }

  private nextSettlement(remainingMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, remainingMs);
      this.wake = done;
    });
  }

  private fulfilled(result: QuickJSHandle): SandboxOutcome {
    const invalid = this.stringProp(result, 'invalid');
    if (invalid !== undefined) return { ok: false, kind: 'invalid-return', message: invalid };
    const value = this.stringProp(result, 'value');
    const instance = this.stringProp(result, 'instance');
    try {
      return { ok: true, value: value === undefined ? undefined : JSON.parse(value), instance: instance === undefined ? undefined : JSON.parse(instance) };
    } catch {
      return { ok: false, kind: 'invalid-return', message: 'The returned value is not JSON-serialisable' };
    }
  }

  private failure(error: QuickJSHandle, kind: SandboxFailureKind = 'thrown'): Extract<SandboxOutcome, { ok: false }> {
    if (this.stopped) {
      error.dispose();
      return this.timeout();
    }
    return this.consume(error, (handle) => {
      const isObject = this.context.typeof(handle) === 'object';
      const name = isObject ? this.stringProp(handle, 'name') : undefined;
      const message = (isObject ? this.stringProp(handle, 'message') : String(this.context.dump(handle))) ?? 'Hook failed';
      if (name === 'InternalError' && message === 'out of memory') {
        return { ok: false, kind: 'memory', message: `Hook stopped: it used more than ${this.limits.memoryBytes / 1024 / 1024} MB of memory` };
      }
      if (name === 'InternalError' && message === 'stack overflow') return { ok: false, kind: 'memory', message: 'Hook stopped: it exhausted the stack' };
      return { ok: false, kind: kind === 'syntax' && name !== 'SyntaxError' ? 'thrown' : kind, message };
    });
  }

  private timeout(): Extract<SandboxOutcome, { ok: false }> {
    const message =
      this.stopped === 'cpu'
        ? `Hook stopped: it computed for more than ${this.limits.cpuMs} ms`
        : `Hook stopped: it ran for more than ${this.limits.wallMs} ms`;
    return { ok: false, kind: 'timeout', message };
  }

  private hostCall(opHandle: QuickJSHandle, argsHandle: QuickJSHandle): QuickJSHandle | VmCallResult<QuickJSHandle> | undefined {
    try {
      const value = this.host.call(this.context.getString(opHandle), parseArgs(this.context.getString(argsHandle)));
      return value === undefined ? undefined : this.context.newString(JSON.stringify(value));
    } catch (error) {
      return { error: this.context.newError(safeMessage(error)) };
    }
  }

  private hostCallAsync(opHandle: QuickJSHandle, argsHandle: QuickJSHandle): QuickJSHandle {
    const op = this.context.getString(opHandle);
    const argsJson = this.context.getString(argsHandle);
    const deferred = this.context.newPromise();
    this.pending.add(deferred);
    Promise.resolve()
      .then(() => this.host.callAsync(op, parseArgs(argsJson), this.abort.signal))
      .then(
        (value) => this.finish(deferred, () => (value === undefined ? this.context.undefined : this.context.newString(JSON.stringify(value))), true),
        (error: unknown) => this.finish(deferred, () => this.context.newError(safeMessage(error)), false),
      );
    return deferred.handle;
  }

  private finish(deferred: QuickJSDeferredPromise, make: () => QuickJSHandle, fulfil: boolean): void {
    if (this.disposed || !this.pending.delete(deferred)) return;
    try {
      const value = make();
      this.slice(() => (fulfil ? deferred.resolve(value) : deferred.reject(value)));
      if (value !== this.context.undefined) value.dispose();
    } catch {
      this.stopped ??= 'wall';
    } finally {
      deferred.dispose();
      this.wake?.();
    }
  }

  private shouldInterrupt(): boolean {
    if (this.stopped) return true;
    const now = performance.now();
    if (now >= this.wallDeadline) this.stopped = 'wall';
    else if (this.sliceStart !== undefined && this.cpuUsed + (now - this.sliceStart) > this.limits.cpuMs) this.stopped = 'cpu';
    return this.stopped !== undefined;
  }

  /** Runs guest code, counting the time toward the CPU budget. */
  private slice<T>(work: () => T): T {
    if (this.sliceStart !== undefined) return work();
    this.sliceStart = performance.now();
    try {
      return work();
    } finally {
      this.cpuUsed += performance.now() - this.sliceStart;
      this.sliceStart = undefined;
    }
  }

  private consume<T>(handle: QuickJSHandle, read: (handle: QuickJSHandle) => T): T {
    try {
      return read(handle);
    } finally {
      handle.dispose();
    }
  }

  private stringProp(handle: QuickJSHandle, name: string): string | undefined {
    return this.consume(this.slice(() => this.context.getProp(handle, name)), (prop) => this.asString(prop));
  }

  private asString(handle: QuickJSHandle): string | undefined {
    return this.context.typeof(handle) === 'string' ? this.context.getString(handle) : undefined;
  }
}

function parseArgs(json: string): unknown[] {
  const args: unknown = JSON.parse(json);
  return Array.isArray(args) ? args : [];
}

function safeMessage(error: unknown): string {
  return error instanceof Error ? error.message : 'host operation failed';
}
