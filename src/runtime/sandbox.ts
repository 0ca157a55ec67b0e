import { newQuickJSWASMModule, type QuickJSWASMModule } from 'quickjs-emscripten';
import { SandboxRun } from './sandbox-run.js';
import { SandboxSlot } from './sandbox-slot.js';
import type { SandboxGlobals, SandboxLimits, SandboxOutcome } from './sandbox-types.js';
import type { ThreadClock } from './thread-clock.js';
import { withFields } from '../platform/objects.js';

/** How many hardened contexts (slots) a `Sandbox` keeps between runs, and how long one serves. */
export interface SlotPoolOptions {
  /** Idle slots kept for the next runs; a run finding none creates one (a few milliseconds). */
  maxIdle: number;
  /** Runs after which a slot is disposed and replaced by a new one. */
  maxRunsPerSlot: number;
  /** Compiled hooks kept per slot (least recently used dropped first). */
  maxCompiledPerSlot: number;
}

export const DEFAULT_SLOT_POOL: SlotPoolOptions = { maxIdle: 8, maxRunsPerSlot: 10_000, maxCompiledPerSlot: 64 };

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
  /** The CPU clock of the thread runs run on (see SandboxRun.overBudget); without it, CPU time is wall time inside guest code. */
  clock?: ThreadClock;
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
    private readonly pool: SlotPoolOptions = DEFAULT_SLOT_POOL,
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
    const run = new SandboxRun(slot, this.limits, this.engine.meter, this.engine.clock);
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
    return withFields(this.counters, { idle: this.idle.length });
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
