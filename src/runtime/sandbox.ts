import {
  newQuickJSWASMModule,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
  type VmCallResult,
} from 'quickjs-emscripten';
import { randomFillSync } from 'node:crypto';
import { HARDEN_REALM } from './realm.js';

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
  /** Whether the outcome carries `instance` as the run left it (default true); only a `beforeSave` hook's is used. */
  readInstance?: boolean;
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

/** The outcome of a run stopped at one of its limits, worded the same wherever it was stopped (engine, worker or watchdog). */
export function stoppedAt(limit: 'cpu' | 'wall' | 'memory', limits: SandboxLimits): Extract<SandboxOutcome, { ok: false }> {
  if (limit === 'memory') return { ok: false, kind: 'memory', message: `Hook stopped: it used more than ${limits.memoryBytes / 1024 / 1024} MB of memory` };
  const message = limit === 'cpu' ? `Hook stopped: it computed for more than ${limits.cpuMs} ms` : `Hook stopped: it ran for more than ${limits.wallMs} ms`;
  return { ok: false, kind: 'timeout', message };
}

/** A webhook answer chosen by the code with `respond(status, body, headers)`. */
export interface HookResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: unknown;
}

export type SandboxOutcome =
  | { ok: true; value: unknown; instance: unknown; response?: HookResponse }
  | { ok: false; kind: SandboxFailureKind; message: string };

/** How many hardened contexts are kept between runs, and how long one serves. */
export interface SandboxPoolOptions {
  /** Idle slots kept for the next runs; a run finding none creates one (a few milliseconds). */
  maxIdle: number;
  /** Runs after which a slot is disposed and replaced by a new one. */
  maxRunsPerSlot: number;
  /** Compiled hooks kept per slot (least recently used dropped first). */
  maxCompiledPerSlot: number;
}

/** Characters the arguments of one host call (console.log, fetch, db, ...) may copy out of the guest: 2 MB, the request limit. */
export const HOST_CALL_MAX_CHARS = 2 * 1024 * 1024;

export const DEFAULT_POOL: SandboxPoolOptions = { maxIdle: 8, maxRunsPerSlot: 10_000, maxCompiledPerSlot: 64 };

/** Where the engine comes from, and where a run reports its computing time. */
export interface SandboxEngineOptions {
  /** Loads a WebAssembly module of the engine; called again after an engine failure. Default: the library's shared module. */
  loadModule?: () => Promise<QuickJSWASMModule>;
  /**
   * Written while runs compute, for a watchdog on another thread: `[0]` is the absolute time
   * (`performance.timeOrigin + performance.now()`) the current slice of guest code started, or 0
   * between slices; `[1]` is the computing time of the current run before that slice, in ms.
   */
  meter?: Float64Array;
}

/**
 * Runs guest code in QuickJS compiled to WebAssembly, never in the server's own V8 context. One
 * WebAssembly module per process; runs take a slot (a QuickJS runtime and context, hardened once
 * by `HARDEN_REALM`: built-ins frozen, code generation from strings disabled) from a pool and
 * give it back, so a run pays neither for a new context nor for compiling code the slot has
 * compiled before (cached by the caller's key, the code's sha256). Nothing a run creates is
 * reachable by the next: the realm is frozen, hook code runs in strict mode, the granted values
 * are fresh copies passed as parameters, and a slot whose run was stopped, failed in the engine,
 * or left jobs or host calls pending is disposed instead of reused. A module whose engine failed
 * (Node's own stack exhausted inside it, or a handle leak caught at dispose) is dropped with its
 * idle slots and the next run loads a new one.
 */
export class Sandbox {
  private module: Promise<QuickJSWASMModule> | undefined;
  /** The module of the last slot created. */
  private loaded: QuickJSWASMModule | undefined;
  private readonly idle: SandboxSlot[] = [];
  private warmed = false;
  private readonly counters = { slotsCreated: 0, compiles: 0, modules: 0 };

  constructor(
    private readonly limits: SandboxLimits,
    private readonly pool: SandboxPoolOptions = DEFAULT_POOL,
    private readonly engine: SandboxEngineOptions = {},
  ) {}

  /**
   * Passes `globals` to `code` (it must be a single function expression), calls it with
   * `instance` and waits for the outcome. `cacheKey` names the code in the compiled-code cache:
   * the same key must always mean the same code (give its sha256). Never throws.
   */
  async run(code: string, globals: SandboxGlobals, cacheKey: string = code): Promise<SandboxOutcome> {
    const loading = this.loadingModule();
    let slot: SandboxSlot;
    try {
      slot = this.idle.pop() ?? this.newSlot(loading, await loading);
    } catch {
      this.drop(loading);
      return { ok: false, kind: 'thrown', message: 'The hook runtime failed' };
    }
    const run = new SandboxRun(slot, this.limits, this.engine.meter);
    let outcome: SandboxOutcome;
    try {
      outcome = await run.execute(code, globals, cacheKey);
    } catch (error) {
      this.drop(loading);
      outcome =
        error instanceof RangeError
          ? { ok: false, kind: 'memory', message: 'Hook stopped: it exhausted the stack' }
          : { ok: false, kind: 'thrown', message: 'The hook runtime failed' };
    }
    try {
      const clean = run.end() && (outcome.ok || (outcome.kind !== 'timeout' && outcome.kind !== 'memory'));
      this.release(slot, clean);
    } catch {
      // The engine failed while releasing the run (a broken module): never reuse it.
      this.drop(loading);
    }
    return outcome;
  }

  /** Loads the engine and hardens a first slot ahead of the first run. */
  async warm(): Promise<void> {
    const loading = this.loadingModule();
    const module = await loading;
    if (this.warmed || this.module !== loading) return;
    this.warmed = true;
    if (this.idle.length === 0) this.idle.push(this.newSlot(loading, module));
  }

  /** Slots created, hook codes compiled and engine modules loaded since the start, and slots idle now. */
  stats(): { slotsCreated: number; compiles: number; modules: number; idle: number } {
    return { ...this.counters, idle: this.idle.length };
  }

  /** Disposes the idle slots; runs in progress dispose theirs when they end. */
  close(): void {
    for (const slot of this.idle.splice(0)) slot.dispose();
  }

  /**
   * Whether the engine's heap can still give a run `bytes` in one piece, tried with a real
   * allocation (given back at once). False when the module is not loaded. In this build QuickJS
   * starts a garbage collection by the number of allocations, not their size, so a few large
   * cycles a run leaves behind can hold the heap of a reused context: see `recycle`.
   */
  hasRoom(bytes: number): boolean {
    const heap = this.loaded ? (this.loaded as unknown as { module: EngineHeap }).module : undefined;
    if (!heap) return false;
    const pointer = heap._malloc(bytes);
    if (!pointer) return false;
    heap._free(pointer);
    return true;
  }

  /** Disposes the idle slots: freeing a QuickJS runtime collects all its garbage. The next run hardens a new slot. */
  recycle(): void {
    for (const slot of this.idle.splice(0)) if (!slot.dispose()) this.drop(slot.origin);
  }

  private loadingModule(): Promise<QuickJSWASMModule> {
    if (!this.module) {
      this.module = (this.engine.loadModule ?? newQuickJSWASMModule)();
      this.counters.modules += 1;
    }
    return this.module;
  }

  private newSlot(origin: Promise<QuickJSWASMModule>, module: QuickJSWASMModule): SandboxSlot {
    this.loaded = module;
    const slot = new SandboxSlot(origin, module, this.limits, this.pool.maxCompiledPerSlot, this.counters);
    this.counters.slotsCreated += 1;
    return slot;
  }

  private release(slot: SandboxSlot, clean: boolean): void {
    const reusable = clean && !slot.tainted && slot.origin === this.module && slot.runs < this.pool.maxRunsPerSlot && this.idle.length < this.pool.maxIdle;
    if (reusable) this.idle.push(slot);
    else if (!slot.dispose()) this.drop(slot.origin);
  }

  private drop(module: Promise<QuickJSWASMModule>): void {
    if (this.module !== module) return;
    this.module = undefined;
    this.loaded = undefined;
    this.warmed = false;
    for (const slot of this.idle.splice(0)) slot.dispose();
  }
}

/** The Emscripten module's allocator (the library keeps the module as `module` of the QuickJSWASMModule). */
interface EngineHeap {
  _malloc(bytes: number): number;
  _free(pointer: number): void;
}

/** Functions of the hardened context, taken before any guest code runs. */
interface Intrinsics {
  parse: QuickJSHandle;
  stringify: QuickJSHandle;
  string: QuickJSHandle;
  promise: QuickJSHandle;
  resolve: QuickJSHandle;
  freeze: QuickJSHandle;
  functionToString: QuickJSHandle;
}

/**
 * One QuickJS runtime and context, hardened once, serving one run at a time. It keeps the
 * compiled hooks (a frozen factory per code and parameter list) and the frozen host functions,
 * which call into whichever run is current.
 */
class SandboxSlot {
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;
  readonly intrinsics: Intrinsics;
  current: SandboxRun | undefined;
  runs = 0;
  /** Set when code ran outside its wrapper: the slot must not serve another run. */
  tainted = false;
  private readonly factories = new Map<string, QuickJSHandle>();
  private readonly hostValues = new Map<string, QuickJSHandle>();

  constructor(
    readonly origin: Promise<QuickJSWASMModule>,
    module: QuickJSWASMModule,
    limits: SandboxLimits,
    private readonly maxCompiled: number,
    private readonly counters: { compiles: number },
  ) {
    this.runtime = module.newRuntime({
      memoryLimitBytes: limits.memoryBytes,
      maxStackSizeBytes: limits.stackBytes,
      interruptHandler: () => this.current?.shouldInterrupt() ?? false,
    });
    let context: QuickJSContext | undefined;
    try {
      context = this.runtime.newContext();
      const random = context.newFunction('random', () => context!.newNumber(secureRandom()));
      context.setProp(context.global, '__hostRandom', random);
      random.dispose();
      context.unwrapResult(context.evalCode(HARDEN_REALM, 'realm.js')).dispose();
      this.intrinsics = takeIntrinsics(context);
      this.context = context;
    } catch (error) {
      context?.dispose();
      this.runtime.dispose();
      throw error;
    }
  }

  /**
   * The compiled factory of `code` taking `names`: `(names) => { 'use strict'; return (code); }`,
   * frozen. Calling it evaluates the code again, so every run gets a new function and new closures.
   * The handle stays owned by the slot.
   */
  factory(cacheKey: string, names: readonly string[], code: string): VmCallResult<QuickJSHandle> {
    const key = `${cacheKey}\u0000${names.join(',')}`;
    const cached = this.factories.get(key);
    if (cached) {
      this.factories.delete(key);
      this.factories.set(key, cached);
      return { value: cached };
    }
    const factory = `(${names.join(', ')}) => { 'use strict'; return (\n${code}\n); }`;
    const compiled = this.context.evalCode(`(${factory})`, 'hook.js');
    if (compiled.error) {
      // Code that closed the wrapper may have declared global bindings before it threw.
      this.tainted = true;
      return compiled;
    }
    if (!this.hasSource(compiled.value, factory)) {
      // The code closed the wrapper and ran statements of its own (a global `let` would outlive the run).
      compiled.value.dispose();
      this.tainted = true;
      return { error: this.context.newError({ name: 'SyntaxError', message: 'Hook code must be a single async function, e.g. async function (instance) { ... }' }) };
    }
    this.counters.compiles += 1;
    this.freeze(compiled.value);
    this.factories.set(key, compiled.value);
    if (this.factories.size > this.maxCompiled) {
      const [oldest, handle] = this.factories.entries().next().value as [string, QuickJSHandle];
      this.factories.delete(oldest);
      handle.dispose();
    }
    return { value: compiled.value };
  }

  /** The frozen guest function (or object of functions) standing for host member `name`; owned by the slot. */
  hostValue(name: string, member: HostMember | Record<string, HostMember>): QuickJSHandle {
    const methods = isMember(member) ? undefined : Object.keys(member);
    const key = methods ? `${name}.{${methods.join(',')}}` : name;
    const cached = this.hostValues.get(key);
    if (cached) return cached;
    let value: QuickJSHandle;
    if (!methods) {
      value = this.hostFunction(name, undefined);
    } else {
      value = this.context.newObject();
      for (const method of methods) {
        const fn = this.hostFunction(name, method);
        this.context.setProp(value, method, fn);
        fn.dispose();
      }
    }
    this.freeze(value);
    this.hostValues.set(key, value);
    return value;
  }

  /** Releases everything; false when the engine reported a leak and the module must not be reused. */
  dispose(): boolean {
    try {
      for (const handle of [...this.factories.values(), ...this.hostValues.values(), ...Object.values(this.intrinsics)]) handle.dispose();
      this.context.dispose();
      this.runtime.dispose();
      return true;
    } catch {
      return false;
    }
  }

  private hostFunction(name: string, method: string | undefined): QuickJSHandle {
    const path = method ? `${name}.${method}` : name;
    const fn = this.context.newFunction(path, (...args) => this.current?.callHost(name, method, args) ?? { error: this.context.newError(`${path} is not available`) });
    this.freeze(fn);
    return fn;
  }

  /** Whether `fn` is the function whose source text is exactly `source` (nothing evaluated around it). */
  private hasSource(fn: QuickJSHandle, source: string): boolean {
    const text = this.context.callFunction(this.intrinsics.functionToString, fn);
    if (text.error) {
      text.error.dispose();
      return false;
    }
    const matches = this.context.typeof(text.value) === 'string' && this.context.getString(text.value) === source;
    text.value.dispose();
    return matches;
  }

  private freeze(handle: QuickJSHandle): void {
    this.context.unwrapResult(this.context.callFunction(this.intrinsics.freeze, this.context.undefined, handle)).dispose();
  }
}

function takeIntrinsics(context: QuickJSContext): Intrinsics {
  const json = context.getProp(context.global, 'JSON');
  const object = context.getProp(context.global, 'Object');
  const promise = context.getProp(context.global, 'Promise');
  const fn = context.getProp(context.global, 'Function');
  const fnPrototype = context.getProp(fn, 'prototype');
  try {
    return {
      parse: context.getProp(json, 'parse'),
      stringify: context.getProp(json, 'stringify'),
      string: context.getProp(context.global, 'String'),
      promise,
      resolve: context.getProp(promise, 'resolve'),
      freeze: context.getProp(object, 'freeze'),
      functionToString: context.getProp(fnPrototype, 'toString'),
    };
  } finally {
    for (const handle of [json, object, fn, fnPrototype]) handle.dispose();
  }
}

/** One run in a slot: its budgets, its granted host members, its pending host calls. */
class SandboxRun {
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;
  private readonly intrinsics: Intrinsics;
  private readonly wallDeadline: number;
  private readonly pending = new Set<QuickJSDeferredPromise>();
  private host: SandboxGlobals['host'] = {};
  private abort: AbortController | undefined;
  private cpuUsed = 0;
  private sliceStart: number | undefined;
  private stopped: 'cpu' | 'wall' | undefined;
  private wake: (() => void) | undefined;
  private ended = false;

  constructor(
    private readonly slot: SandboxSlot,
    private readonly limits: SandboxLimits,
    private readonly meter: Float64Array | undefined,
  ) {
    if (meter) meter[1] = meter[0] = 0;
    this.runtime = slot.runtime;
    this.context = slot.context;
    this.intrinsics = slot.intrinsics;
    this.wallDeadline = performance.now() + limits.wallMs;
    slot.current = this;
    slot.runs += 1;
  }

  async execute(code: string, globals: SandboxGlobals, cacheKey: string): Promise<SandboxOutcome> {
    // The engine reads code and strings up to a NUL character: such code could never run as written.
    if (code.includes('\0')) return { ok: false, kind: 'syntax', message: 'Hook code must not contain NUL characters' };
    this.host = globals.host;
    const copies: QuickJSHandle[] = [];
    let instance: QuickJSHandle = this.context.undefined;
    try {
      for (const [name, value] of Object.entries(globals.values)) {
        const handle = this.toGuest(value);
        if (handle.error) return this.failure(handle.error);
        copies.push(handle.value);
        if (name === 'instance') instance = handle.value;
      }
      const args = [...copies, ...Object.entries(globals.host).map(([name, member]) => this.slot.hostValue(name, member))];
      const names = [...Object.keys(globals.values), ...Object.keys(globals.host)];
      const factory = this.slice(() => this.slot.factory(cacheKey, names, code));
      if (factory.error) return this.failure(factory.error, 'syntax');
      const hook = this.slice(() => this.context.callFunction(factory.value, this.context.undefined, ...args));
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
      return await this.settle(promise.value, globals.readInstance === false ? undefined : instance);
    } finally {
      for (const handle of copies) handle.dispose();
    }
  }

  /**
   * Ends the run: the slot no longer calls into it, and host calls still in flight are abandoned.
   * True when the slot can serve another run: not stopped, no job queued, no host call pending.
   */
  end(): boolean {
    if (this.ended) return false;
    this.ended = true;
    let clean = this.stopped === undefined && this.pending.size === 0;
    try {
      clean &&= !this.runtime.hasPendingJob();
    } catch {
      clean = false;
    }
    this.slot.current = undefined;
    this.abort?.abort();
    for (const deferred of this.pending) deferred.dispose();
    this.pending.clear();
    return clean;
  }

  /** A guest call of host member `name` (or `name.method`) during this run. */
  callHost(name: string, method: string | undefined, args: QuickJSHandle[]): QuickJSHandle | VmCallResult<QuickJSHandle> {
    if (this.stopped) return { error: this.context.newError('Hook stopped') };
    const granted = this.host[name];
    const member = granted && method !== undefined ? (isMember(granted) ? undefined : granted[method]) : granted;
    if (!member || !isMember(member)) return { error: this.context.newError(`${method ? `${name}.${method}` : name} is not available`) };
    if ('sync' in member) {
      try {
        const values = this.argumentsFromGuest(args);
        if (this.stopped) return { error: this.context.newError('Hook stopped') };
        const result = this.toGuest(member.sync(values));
        return result.error ? result : result.value;
      } catch (error) {
        return { error: this.context.newError(safeMessage(error)) };
      }
    }
    const deferred = this.context.newPromise();
    this.pending.add(deferred);
    let values: unknown[];
    try {
      values = this.argumentsFromGuest(args);
      if (this.stopped) throw new Error('Hook stopped');
    } catch (error) {
      // Settled later, like every answer: the engine takes the promise's handle when this returns,
      // and settling now would dispose it first (the hook then saw "Lifetime not alive").
      const message = safeMessage(error);
      void Promise.resolve().then(() => this.finish(deferred, () => ({ error: this.context.newError(message) })));
      return deferred.handle;
    }
    const signal = (this.abort ??= new AbortController()).signal;
    Promise.resolve()
      .then(() => member.async(values, signal))
      .then(
        (value) => this.finish(deferred, () => this.toGuest(value)),
        (error: unknown) => this.finish(deferred, () => ({ error: this.context.newError(safeMessage(error)) })),
      );
    return deferred.handle;
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
    const define = (name: string, fn: QuickJSHandle) => {
      this.context.setProp(object.value, name, fn);
      fn.dispose();
    };
    define('text', this.context.newFunction('text', resolved(() => ({ value: this.context.newString(answer.body) }))));
    define(
      'json',
      this.context.newFunction('json', resolved(() => this.consume(this.context.newString(answer.body), (body) => this.slice(() => this.context.callFunction(this.intrinsics.parse, this.context.undefined, body))))),
    );
    return object;
  }

  /** Host copies of the arguments of one host call, at most HOST_CALL_MAX_CHARS characters in all. */
  private argumentsFromGuest(args: QuickJSHandle[]): unknown[] {
    const budget = { chars: HOST_CALL_MAX_CHARS };
    return args.map((arg) => this.fromGuest(arg, budget));
  }

  /**
   * A host copy of a guest value: strings and numbers directly, others through the guest's
   * JSON.stringify. Text is measured in the guest before it is copied out, so that the host never
   * holds more than `budget` allows (a hook's own memory limit does not bound the host's copies).
   */
  private fromGuest(handle: QuickJSHandle, budget: { chars: number }): unknown {
    const { context } = this;
    const type = context.typeof(handle);
    if (type === 'string') return this.copyText(handle, budget);
    if (type === 'number') return context.getNumber(handle);
    if (type === 'undefined') return undefined;
    const json = this.slice(() => context.callFunction(this.intrinsics.stringify, context.undefined, handle));
    if (!json.error) {
      const text = this.consume(json.value, (value) => (context.typeof(value) === 'string' ? this.copyText(value, budget) : undefined));
      if (text !== undefined) return JSON.parse(text);
    } else {
      json.error.dispose();
    }
    const shown = this.slice(() => context.callFunction(this.intrinsics.string, context.undefined, handle));
    if (shown.error) {
      shown.error.dispose();
      return new Unserialisable(`[${type}]`);
    }
    return new Unserialisable(this.consume(shown.value, (value) => (context.typeof(value) === 'string' ? this.copyText(value, budget) : undefined)) ?? `[${type}]`);
  }

  private copyText(handle: QuickJSHandle, budget: { chars: number }): string {
    const length = this.consume(this.context.getProp(handle, 'length'), (value) => this.context.getNumber(value));
    budget.chars -= length;
    if (budget.chars < 0) throw new Error(`the arguments of one call may hold at most ${HOST_CALL_MAX_CHARS} characters in all`);
    return this.context.getString(handle);
  }

  /** Runs the jobs until `promise` settles; `instance` (when given) is read back after it. */
  private async settle(promise: QuickJSHandle, instance: QuickJSHandle | undefined): Promise<SandboxOutcome> {
    try {
      for (;;) {
        this.slice(() => this.runtime.executePendingJobs()).dispose();
        if (this.stopped) return this.timeout();
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

  private fulfilled(result: QuickJSHandle, instance: QuickJSHandle | undefined): SandboxOutcome {
    const value = this.serialise('The returned value', result);
    if (typeof value !== 'string' && value !== undefined) return value;
    const copy = instance === undefined ? undefined : this.serialise('instance', instance);
    if (typeof copy !== 'string' && copy !== undefined) return copy;
    if (this.stopped) return this.timeout();
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
      // Every read may run guest code (getters, toString) or native work (the text of a BigInt): all inside slices.
      const type = this.context.typeof(handle);
      const isObject = type === 'object' || type === 'function';
      const name = isObject ? this.stringProp(handle, 'name') : undefined;
      const message = (isObject ? this.stringProp(handle, 'message') : this.text(handle)) ?? 'Hook failed';
      if (this.stopped) return this.timeout();
      if (name === 'InternalError' && message === 'out of memory') return stoppedAt('memory', this.limits);
      if (name === 'InternalError' && message === 'stack overflow') return { ok: false, kind: 'memory', message: 'Hook stopped: it exhausted the stack' };
      return { ok: false, kind: kind === 'syntax' && name !== 'SyntaxError' ? 'thrown' : kind, message };
    });
  }

  private timeout(): Extract<SandboxOutcome, { ok: false }> {
    return stoppedAt(this.stopped === 'cpu' ? 'cpu' : 'wall', this.limits);
  }

  private finish(deferred: QuickJSDeferredPromise, make: () => VmCallResult<QuickJSHandle>): void {
    if (this.ended || !this.pending.delete(deferred)) return;
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

  shouldInterrupt(): boolean {
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
    if (this.meter) this.meter[0] = performance.timeOrigin + this.sliceStart;
    try {
      return work();
    } finally {
      this.cpuUsed += performance.now() - this.sliceStart;
      this.sliceStart = undefined;
      if (this.meter) {
        this.meter[1] = this.cpuUsed;
        this.meter[0] = 0;
      }
      // A built-in looping natively never reaches the interrupt handler: catch the overrun here.
      if (this.cpuUsed > this.limits.cpuMs) this.stopped ??= 'cpu';
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

  /** `String(value)` of a thrown primitive, computed in the guest within the CPU budget. */
  private text(handle: QuickJSHandle): string | undefined {
    const shown = this.slice(() => this.context.callFunction(this.intrinsics.string, this.context.undefined, handle));
    if (shown.error) {
      shown.error.dispose();
      return undefined;
    }
    return this.consume(shown.value, (value) => this.asString(value));
  }

  private asString(handle: QuickJSHandle): string | undefined {
    return this.context.typeof(handle) === 'string' ? this.context.getString(handle) : undefined;
  }
}

function isMember(value: HostMember | Record<string, HostMember>): value is HostMember {
  return 'sync' in value || 'async' in value;
}

const randomWords = new Uint32Array(1024);
let nextRandomWord = randomWords.length;

/** A double in [0, 1) from 53 bits of the operating system's randomness, drawn 4 KB at a time. */
function secureRandom(): number {
  if (nextRandomWord + 2 > randomWords.length) {
    randomFillSync(randomWords);
    nextRandomWord = 0;
  }
  const high = randomWords[nextRandomWord++]! >>> 5;
  const low = randomWords[nextRandomWord++]! >>> 6;
  return (high * 67_108_864 + low) / 9_007_199_254_740_992;
}

function safeMessage(error: unknown): string {
  return error instanceof Error ? error.message : 'host operation failed';
}
