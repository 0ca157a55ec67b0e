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

/** A host function reachable from the guest: synchronous, or returning a promise to the guest. */
export type HostMember =
  | { sync: (args: unknown[]) => unknown }
  | { async: (args: unknown[], signal: AbortSignal) => Promise<unknown> };

/**
 * What a run grants: `values` are JSON values copied in as globals (`instance` is also the
 * hook's argument and is read back after the run); `host` maps a global name to a host function
 * or to an object of host functions. Arguments reach a host function as JSON copies (a string
 * stays a string; a value JSON cannot copy arrives as `Unserialisable`); its result (a JSON value,
 * or a `WithBody`) goes back as a copy. A thrown Error reaches the guest with its message only.
 */
export interface SandboxGlobals {
  values: Record<string, unknown>;
  host: Record<string, HostMember | Record<string, HostMember>>;
}

/** An argument JSON cannot copy (a function, a symbol, a cycle, a BigInt): the guest's `String(value)`. */
export class Unserialisable {
  constructor(readonly text: string) {}
}

/** A host result that becomes an object with `fields` plus `text()` and `json()` reading `body` (a fetch answer). */
export class WithBody {
  constructor(
    readonly fields: Record<string, unknown>,
    readonly body: string,
  ) {}
}

export type SandboxFailureKind = 'thrown' | 'timeout' | 'memory' | 'syntax' | 'invalid-return';

export type SandboxOutcome =
  | { ok: true; value: unknown; instance: unknown }
  | { ok: false; kind: SandboxFailureKind; message: string };

/**
 * Runs guest code in QuickJS compiled to WebAssembly: one WebAssembly module for the process,
 * a fresh QuickJS runtime and context for every run, so nothing survives from one run to the
 * next. The granted globals are installed as host functions and values (no script is evaluated
 * besides the hook). A module whose engine failed (Node's own stack exhausted inside it, or a
 * handle leak caught at dispose) is dropped and the next run loads a new one.
 */
export class Sandbox {
  private module: Promise<QuickJSWASMModule> | undefined;

  constructor(private readonly limits: SandboxLimits) {}

  /**
   * Installs `globals`, evaluates `code` (wrapped in parentheses: it must be a function
   * expression), calls it with `instance` and waits for the outcome. Never throws.
   */
  async run(code: string, globals: SandboxGlobals): Promise<SandboxOutcome> {
    const loading = (this.module ??= newQuickJSWASMModule());
    const run = new SandboxRun(await loading, this.limits);
    try {
      return await run.execute(code, globals);
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

/** Functions of a fresh context taken before any guest code runs, so the guest cannot replace them. */
interface Intrinsics {
  parse: QuickJSHandle;
  stringify: QuickJSHandle;
  string: QuickJSHandle;
  promise: QuickJSHandle;
  resolve: QuickJSHandle;
}

class SandboxRun {
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;
  private readonly intrinsics: Intrinsics;
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
  ) {
    this.wallDeadline = performance.now() + limits.wallMs;
    this.runtime = module.newRuntime({
      memoryLimitBytes: limits.memoryBytes,
      maxStackSizeBytes: limits.stackBytes,
      interruptHandler: () => this.shouldInterrupt(),
    });
    this.context = this.runtime.newContext();
    const { context } = this;
    const json = context.getProp(context.global, 'JSON');
    const promise = context.getProp(context.global, 'Promise');
    this.intrinsics = {
      parse: context.getProp(json, 'parse'),
      stringify: context.getProp(json, 'stringify'),
      string: context.getProp(context.global, 'String'),
      promise,
      resolve: context.getProp(promise, 'resolve'),
    };
    json.dispose();
  }

  async execute(code: string, globals: SandboxGlobals): Promise<SandboxOutcome> {
    const instance = this.install(globals);
    if ('kind' in instance) return instance;
    try {
      const hook = this.slice(() => this.context.evalCode(`(\n${code}\n)`, 'hook.js'));
      if (hook.error) return this.failure(hook.error, 'syntax');
      if (this.context.typeof(hook.value) !== 'function') {
        hook.value.dispose();
        return { ok: false, kind: 'syntax', message: 'Hook code must be a single async function, e.g. async function (instance) { ... }' };
      }
      const called = this.slice(() => this.context.callFunction(hook.value, this.context.undefined, instance));
      hook.value.dispose();
      if (called.error) return this.failure(called.error);
      const promise = this.consume(called.value, (value) => this.slice(() => this.context.callFunction(this.intrinsics.resolve, this.intrinsics.promise, value)));
      if (promise.error) return this.failure(promise.error);
      return await this.settle(promise.value, instance);
    } finally {
      instance.dispose();
    }
  }

  /** Releases everything; false when the engine reported a leak and the module must not be reused. */
  dispose(): boolean {
    this.disposed = true;
    this.abort.abort();
    for (const deferred of this.pending) deferred.dispose();
    this.pending.clear();
    try {
      for (const handle of Object.values(this.intrinsics)) handle.dispose();
      this.context.dispose();
      this.runtime.dispose();
      return true;
    } catch {
      return false;
    }
  }

  /** Defines the granted globals; returns the handle of `instance`. */
  private install(globals: SandboxGlobals): QuickJSHandle | Extract<SandboxOutcome, { ok: false }> {
    const { context } = this;
    let instance: QuickJSHandle | undefined;
    for (const [name, value] of Object.entries(globals.values)) {
      const handle = this.toGuest(value);
      if (handle.error) {
        instance?.dispose();
        return this.failure(handle.error);
      }
      context.setProp(context.global, name, handle.value);
      if (name === 'instance') instance = handle.value;
      else handle.value.dispose();
    }
    for (const [name, member] of Object.entries(globals.host)) {
      if (isMember(member)) {
        this.define(context.global, name, this.hostFunction(name, member));
        continue;
      }
      const object = context.newObject();
      for (const [method, fn] of Object.entries(member)) this.define(object, method, this.hostFunction(`${name}.${method}`, fn));
      this.define(context.global, name, object);
    }
    return instance ?? context.undefined;
  }

  private define(target: QuickJSHandle, name: string, value: QuickJSHandle): void {
    this.context.setProp(target, name, value);
    value.dispose();
  }

  private hostFunction(name: string, member: HostMember): QuickJSHandle {
    if ('sync' in member) {
      return this.context.newFunction(name, (...args) => {
        try {
          const result = this.toGuest(member.sync(args.map((arg) => this.fromGuest(arg))));
          return result.error ? result : result.value;
        } catch (error) {
          return { error: this.context.newError(safeMessage(error)) };
        }
      });
    }
    return this.context.newFunction(name, (...args) => {
      const deferred = this.context.newPromise();
      this.pending.add(deferred);
      let values: unknown[];
      try {
        values = args.map((arg) => this.fromGuest(arg));
      } catch (error) {
        this.finish(deferred, () => ({ error: this.context.newError(safeMessage(error)) }));
        return deferred.handle;
      }
      Promise.resolve()
        .then(() => member.async(values, this.abort.signal))
        .then(
          (value) => this.finish(deferred, () => this.toGuest(value)),
          (error: unknown) => this.finish(deferred, () => ({ error: this.context.newError(safeMessage(error)) })),
        );
      return deferred.handle;
    });
  }

  /** A guest copy of a host value (JSON, or a WithBody). */
  private toGuest(value: unknown): VmCallResult<QuickJSHandle> {
    const { context } = this;
    if (value === undefined) return { value: context.undefined };
    if (value === null) return { value: context.null };
    if (typeof value === 'string') return { value: context.newString(value) };
    if (typeof value === 'number') return { value: context.newNumber(value) };
    if (typeof value === 'boolean') return { value: value ? context.true : context.false };
    if (value instanceof WithBody) return this.withBody(value);
    const json = context.newString(JSON.stringify(value));
    try {
      return this.slice(() => context.callFunction(this.intrinsics.parse, context.undefined, json));
    } finally {
      json.dispose();
    }
  }

  private withBody(answer: WithBody): VmCallResult<QuickJSHandle> {
    const object = this.toGuest(answer.fields);
    if (object.error) return object;
    const resolved = (make: () => VmCallResult<QuickJSHandle>) => () => {
      const deferred = this.context.newPromise();
      const result = make();
      if (result.error) deferred.reject(result.error);
      else deferred.resolve(result.value);
      (result.error ?? result.value).dispose();
      const promise = deferred.handle.dup();
      deferred.dispose();
      return promise;
    };
    this.define(object.value, 'text', this.context.newFunction('text', resolved(() => ({ value: this.context.newString(answer.body) }))));
    this.define(
      object.value,
      'json',
      this.context.newFunction('json', resolved(() => this.consume(this.context.newString(answer.body), (body) => this.slice(() => this.context.callFunction(this.intrinsics.parse, this.context.undefined, body))))),
    );
    return object;
  }

  /** A host copy of a guest value: strings and numbers directly, others through the guest's JSON.stringify. */
  private fromGuest(handle: QuickJSHandle): unknown {
    const { context } = this;
    const type = context.typeof(handle);
    if (type === 'string') return context.getString(handle);
    if (type === 'number') return context.getNumber(handle);
    if (type === 'undefined') return undefined;
    const json = this.slice(() => context.callFunction(this.intrinsics.stringify, context.undefined, handle));
    if (!json.error) {
      const text = this.consume(json.value, (value) => this.asString(value));
      if (text !== undefined) return JSON.parse(text);
    } else {
      json.error.dispose();
    }
    const shown = this.slice(() => context.callFunction(this.intrinsics.string, context.undefined, handle));
    if (shown.error) {
      shown.error.dispose();
      return new Unserialisable(`[${type}]`);
    }
    return new Unserialisable(this.consume(shown.value, (value) => this.asString(value)) ?? `[${type}]`);
  }

  private async settle(promise: QuickJSHandle, instance: QuickJSHandle): Promise<SandboxOutcome> {
    try {
      for (;;) {
        this.slice(() => this.runtime.executePendingJobs()).dispose();
        const state = this.context.getPromiseState(promise);
        if (state.type === 'fulfilled') return this.consume(state.value, (value) => this.fulfilled(value, instance));
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

  private fulfilled(result: QuickJSHandle, instance: QuickJSHandle): SandboxOutcome {
    const value = this.serialise('The returned value', result);
    if (typeof value !== 'string' && value !== undefined) return value;
    const copy = this.serialise('instance', instance);
    if (typeof copy !== 'string' && copy !== undefined) return copy;
    return { ok: true, value: value === undefined ? undefined : JSON.parse(value), instance: copy === undefined ? undefined : JSON.parse(copy) };
  }

  /** JSON text of a guest value through the JSON.stringify taken before the hook ran; undefined for undefined. */
  private serialise(what: string, handle: QuickJSHandle): string | undefined | Extract<SandboxOutcome, { ok: false }> {
    const type = this.context.typeof(handle);
    if (type === 'undefined') return undefined;
    const json = this.slice(() => this.context.callFunction(this.intrinsics.stringify, this.context.undefined, handle));
    if (json.error) {
      if (this.stopped) return this.failure(json.error);
      const message = this.consume(json.error, (error) => (this.context.typeof(error) === 'object' ? this.stringProp(error, 'message') : undefined));
      return { ok: false, kind: 'invalid-return', message: `${what} is not JSON-serialisable: ${message}` };
    }
    const text = this.consume(json.value, (value) => this.asString(value));
    return text ?? { ok: false, kind: 'invalid-return', message: `${what} is not JSON-serialisable: a ${type}` };
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

  private finish(deferred: QuickJSDeferredPromise, make: () => VmCallResult<QuickJSHandle>): void {
    if (this.disposed || !this.pending.delete(deferred)) return;
    try {
      const result = make();
      const handle = result.error ?? result.value;
      this.slice(() => (result.error ? deferred.reject(handle) : deferred.resolve(handle)));
      handle.dispose();
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

function isMember(value: HostMember | Record<string, HostMember>): value is HostMember {
  return 'sync' in value || 'async' in value;
}

function safeMessage(error: unknown): string {
  return error instanceof Error ? error.message : 'host operation failed';
}
