/** Messages between the server's thread and a sandbox worker (src/runtime/sandbox-worker.ts). */
import type { SandboxLimits, SandboxOutcome } from './sandbox.js';

export interface WorkerData {
  limits: SandboxLimits;
  maxRunsPerSlot: number;
  maxCompiledPerSlot: number;
  /** The engine's compiled WebAssembly, shared by every worker. */
  wasmModule: WebAssembly.Module;
  initialPages: number;
  /** Maximum size of the engine's memory, in 64 KiB pages. */
  memoryPages: number;
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
      code: string;
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
