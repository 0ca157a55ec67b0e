/** What a sandboxed run is given and what it answers, shared by the engine, its worker and the pool. */

import type { HookFailureKind, HookResponse } from '../hooks/run-contract.js';

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

/** Whether a granted host entry is one function rather than an object of them. */
export function isHostMember(value: HostMember | Record<string, HostMember>): value is HostMember {
  return 'sync' in value || 'async' in value;
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

export type SandboxOutcome =
  | { ok: true; value: unknown; instance: unknown; response?: HookResponse }
  | { ok: false; kind: HookFailureKind; message: string };

/** The outcome of a run stopped at one of its limits, worded the same wherever it was stopped (engine, worker or watchdog). */
export function stoppedAt(limit: 'cpu' | 'wall' | 'memory', limits: SandboxLimits): Extract<SandboxOutcome, { ok: false }> {
  if (limit === 'memory') return { ok: false, kind: 'memory', message: `Hook stopped: it used more than ${limits.memoryBytes / 1024 / 1024} MB of memory` };
  const message = limit === 'cpu' ? `Hook stopped: it computed for more than ${limits.cpuMs} ms` : `Hook stopped: it ran for more than ${limits.wallMs} ms`;
  return { ok: false, kind: 'timeout', message };
}
