/** Messages between the server's thread and a sandbox worker (src/runtime/sandbox-worker.ts). */
import type { SandboxLimits, SandboxOutcome } from './sandbox-types.js';

export interface WorkerData {
  limits: SandboxLimits;
  maxRunsPerSlot: number;
  maxCompiledPerSlot: number;
  /** The engine's compiled WebAssembly, shared by every worker. */
  wasmModule: WebAssembly.Module;
  initialPages: number;
  /** Maximum size of the engine's memory, in 64 KiB pages. */
  memoryPages: number;
  /** The limit of the worker's CodeCache, the same as the server's copy of it. */
  codeCacheChars: number;
  /** A SharedArrayBuffer of two float64: the `meter` of `SandboxEngineOptions`. */
  meter: SharedArrayBuffer;
  /**
   * A SharedArrayBuffer of RUN_SLOTS + 1 int32, the state of run `seq` at `seq % RUN_SLOTS`: QUEUED
   * when sent; the worker sets STARTED before it starts the run, the server WITHDRAWN to take it
   * back, each with `Atomics.compareExchange` from QUEUED, so exactly one of them wins. At
   * CURRENT_RUN, the `seq` of the run the meter is about (stored after the meter is zeroed).
   */
  runStates: SharedArrayBuffer;
}

/** Runs a worker may hold, sent or withdrawn but not yet reached, is far below this. */
export const RUN_SLOTS = 64;
export const CURRENT_RUN = RUN_SLOTS;
export const QUEUED = 0;
export const STARTED = 1;
export const WITHDRAWN = 2;

/** An argument of a host call: a JSON value, or the guest's `String(value)` of one JSON cannot copy. */
export type WireArgument = { value: unknown } | { unserialisable: string };

/** The answer to a host call: a JSON value, a fetch answer (fields and body), or an error message for the guest. */
export type HostReply = { type: 'reply'; call: number } & (
  | { ok: true; value?: unknown; fields?: Record<string, unknown>; body?: string }
  | { ok: false; message: string }
);

export type ToWorker =
  | {
      type: 'run';
      /** The run's number in this worker, counted from 0: its state is at `seq % RUN_SLOTS` of `runStates`. */
      seq: number;
      /** The hook's code; left out when the worker holds it already (see CodeCache). */
      code?: string;
      cacheKey: string;
      values: Record<string, unknown>;
      /** Host members answered by the server: `true` for a function, or the names of an object's methods. */
      host: Record<string, true | string[]>;
      /** Whether the outcome carries `instance` as the run left it. */
      readInstance: boolean;
    }
  | HostReply;

export type ToServer =
  | { type: 'ready' }
  | { type: 'call'; call: number; name: string; method: string | undefined; args: WireArgument[] }
  | { type: 'done'; outcome: SandboxOutcome; console: string[]; compiles: number; reusable: boolean };

/** The most hook code a worker keeps, in characters (a hook's code is at most 200 KB). */
export const CODE_CACHE_CHARS = 2_000_000;

/**
 * The hook code a worker holds, by cacheKey, at most `maxChars` characters, the least recently used
 * dropped first. The server keeps a copy of each worker's (the sizes, not the code) and sends a
 * run's code only when the worker does not hold it: the code would otherwise be copied to the
 * worker on every run. Both sides apply the same step for every run message, in the order the
 * messages are sent and arrive (the server after a successful send, the worker on arrival, also
 * for a run it later skips), so the two stay the same without a word between them.
 */
export class CodeCache<V> {
  private readonly entries = new Map<string, V>();
  private chars = 0;
  /**
   * The most recently used key, the Map's last. A run of the hook used last leaves the Map as it
   * is: a delete and a set per run made V8 rebuild the Map's table every other run, in the old
   * generation where a long-lived Map keeps its tables, and that garbage brought on the server
   * thread's major collections.
   */
  private newest: string | undefined;

  constructor(
    private readonly maxChars: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The value held for `key`, which becomes the most recently used; undefined when none is held. */
  use(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined && key !== this.newest) {
      this.entries.delete(key);
      this.entries.set(key, value);
      this.newest = key;
    }
    return value;
  }

  /** Holds `value` for `key` as the most recently used, then drops the least recently used past the limit (possibly this one). */
  put(key: string, value: V): void {
    const held = this.entries.get(key);
    if (held !== undefined) {
      this.entries.delete(key);
      this.chars -= this.sizeOf(held);
    }
    this.entries.set(key, value);
    this.newest = key;
    this.chars += this.sizeOf(value);
    for (const [oldest, dropped] of this.entries) {
      if (this.chars <= this.maxChars) break;
      this.entries.delete(oldest);
      this.chars -= this.sizeOf(dropped);
      if (oldest === this.newest) this.newest = undefined;
    }
  }
}
