import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule, VmCallResult } from 'quickjs-emscripten';
import { randomFillSync } from 'node:crypto';
import { HARDEN_REALM } from './realm.js';
import { isHostMember, type HostMember, type SandboxLimits } from './sandbox-types.js';

/** Functions of the hardened context, taken before any guest code runs. */
export interface Intrinsics {
  parse: QuickJSHandle;
  stringify: QuickJSHandle;
  string: QuickJSHandle;
  promise: QuickJSHandle;
  resolve: QuickJSHandle;
  freeze: QuickJSHandle;
  functionToString: QuickJSHandle;
}

/** What a slot calls into while a run is current: the engine's interrupt checks and the guest's host calls. */
export interface CurrentRun {
  shouldInterrupt(): boolean;
  /** A guest call of host member `name` (or `name.method`). */
  callHost(name: string, method: string | undefined, args: QuickJSHandle[]): QuickJSHandle | VmCallResult<QuickJSHandle>;
}

/**
 * One QuickJS runtime and context, hardened once, serving one run at a time. It keeps the
 * compiled hooks (a frozen factory per code and parameter list) and the frozen host functions,
 * which call into whichever run is current.
 */
export class SandboxSlot {
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;
  readonly intrinsics: Intrinsics;
  current: CurrentRun | undefined;
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
    const methods = isHostMember(member) ? undefined : Object.keys(member);
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
