import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, QuickJSRuntime, VmCallResult } from 'quickjs-emscripten';
import type { HookFailureKind } from '../hooks/run-contract.js';
import type { CurrentRun, Intrinsics, SandboxSlot } from './sandbox-slot.js';
import {
  isHostMember,
  stoppedAt,
  Unserialisable,
  WithBody,
  type SandboxGlobals,
  type SandboxLimits,
  type SandboxOutcome,
} from './sandbox-types.js';
import type { ThreadClock } from './thread-clock.js';

/** Characters the arguments of one host call (console.log, fetch, db, ...) may copy out of the guest: 2 MB, the request limit. */
const HOST_CALL_MAX_CHARS = 2 * 1024 * 1024;

/**
 * One run in a slot: its budgets (CPU time counted per slice of guest code, a wall-clock deadline),
 * its granted host members and pending host calls, and the copies of values between host and guest.
 */
export class SandboxRun implements CurrentRun {
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;
  private readonly intrinsics: Intrinsics;
  private readonly wallDeadline: number;
  private readonly pending = new Set<QuickJSDeferredPromise>();
  private host: SandboxGlobals['host'] = {};
  private abort: AbortController | undefined;
  private cpuUsed = 0;
  private sliceStart: number | undefined;
  /** The thread's CPU clock when the run started. */
  private readonly clockStart: number | undefined;
  private stopped: 'cpu' | 'wall' | undefined;
  private wake: (() => void) | undefined;
  private ended = false;

  constructor(
    private readonly slot: SandboxSlot,
    private readonly limits: SandboxLimits,
    private readonly meter: Float64Array | undefined,
    private readonly clock?: ThreadClock,
  ) {
    if (meter) meter[1] = meter[0] = 0;
    this.runtime = slot.runtime;
    this.context = slot.context;
    this.intrinsics = slot.intrinsics;
    this.wallDeadline = performance.now() + limits.wallMs;
    this.clockStart = clock?.();
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
    const member = granted && method !== undefined ? (isHostMember(granted) ? undefined : granted[method]) : granted;
    if (!member || !isHostMember(member)) return { error: this.context.newError(`${method ? `${name}.${method}` : name} is not available`) };
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

  private failure(error: QuickJSHandle, kind: HookFailureKind = 'thrown'): Extract<SandboxOutcome, { ok: false }> {
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
    else if (this.sliceStart !== undefined && this.overBudget(now)) this.stopped = 'cpu';
    return this.stopped !== undefined;
  }

  /**
   * Whether the run has computed more than its CPU budget. It counts wall time inside slices of
   * guest code, and when that says the budget is spent, reads its thread's CPU clock (when there is
   * one): time the thread waited for a core on a busy machine is not the run's. The clock's reading
   * (never more than the wall clock's) then replaces the count, in the meter too, so that the
   * watchdog sees it. A read costs a few microseconds: one at the start of each run, others only
   * past the budget.
   */
  private overBudget(now: number): boolean {
    const counted = this.cpuUsed + (this.sliceStart === undefined ? 0 : now - this.sliceStart);
    if (counted <= this.limits.cpuMs) return false;
    const thread = this.clockStart === undefined ? undefined : this.clock?.();
    if (thread === undefined) return true;
    const corrected = Math.min(counted, thread - this.clockStart!);
    this.cpuUsed = corrected;
    if (this.sliceStart !== undefined) this.sliceStart = now;
    if (this.meter) {
      this.meter[1] = corrected;
      if (this.sliceStart !== undefined) this.meter[0] = performance.timeOrigin + now;
    }
    return corrected > this.limits.cpuMs;
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
      if (this.overBudget(performance.now())) this.stopped ??= 'cpu';
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

function safeMessage(error: unknown): string {
  return error instanceof Error ? error.message : 'host operation failed';
}
