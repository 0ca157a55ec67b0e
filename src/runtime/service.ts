import { decryptEnvironment } from '../envvars/service.js';
import { namesCapability } from '../hooks/code-validation.js';
import type { HookCode, HookInvocation, HookResult, HookRunner } from '../hooks/run-contract.js';
import type { PlatformContext } from '../platform/context.js';
import { ReadValue } from '../platform/read-cache.js';
import { HookCapabilities, redact, redactable, type Grants } from './capabilities.js';
import { DEFAULT_EGRESS_LIMITS, EgressPolicy, type EgressLimits } from './egress.js';
import { unsendableResponse } from './guest-library.js';
import { HookRunLog, runDetail, type HookRunRecord } from './run-log.js';
import type { SandboxOutcome } from './sandbox-types.js';
import { DEFAULT_SANDBOX_POOL, SandboxPool } from './sandbox-pool.js';
import { withFields } from '../platform/objects.js';

export const ERROR_MESSAGE_MAX_CHARS = 500;
/** QuickJS's stack limit: 1 MB would exhaust Node's own ~1 MB stack first (docs/decisions.md D9). */
export const HOOK_STACK_BYTES = 256 * 1024;

/**
 * Runs hook code in the QuickJS sandbox with the granted capabilities, counts every run in
 * `hook_run_stats` and keeps in `hook_runs` the runs the run log's policy keeps (failures, samples,
 * the latest of each hook; see HookRunLog). Environment values are read once and kept until the
 * next configuration change.
 */
export class HookRuntime implements HookRunner {
  private readonly sandbox: SandboxPool;
  private readonly egress: EgressPolicy;
  private readonly runLog: HookRunLog;
  private readonly environment: ReadValue<Record<string, string>>;

  constructor(
    private readonly ctx: PlatformContext,
    private readonly egressLimits: EgressLimits = DEFAULT_EGRESS_LIMITS,
  ) {
    const { config } = ctx;
    this.egress = new EgressPolicy(config.hookEgressAllow);
    this.sandbox = new SandboxPool({ cpuMs: config.hookCpuMs, wallMs: config.hookTimeoutMs, memoryBytes: config.hookMemoryMb * 1024 * 1024, stackBytes: HOOK_STACK_BYTES }, withFields(DEFAULT_SANDBOX_POOL, { maxWorkers: config.hookWorkers }));
    this.runLog = new HookRunLog(ctx.db, ctx.logger, { samplesPerMinute: config.runLogSamplesPerMinute, periodMs: config.runStatsPeriodMs });
    this.environment = new ReadValue(ctx.changes, { topics: ['config'] });
  }

  /**
   * Loads the engine and the environment values. Call it before running a hook inside a
   * database transaction: on the embedded database (one connection) reading the values there
   * would wait for that transaction.
   */
  async prepare(): Promise<void> {
    await Promise.all([this.sandbox.warm(), this.loadEnvironment()]);
  }

  /**
   * Runs one hook: `async function (instance) { ... }` called with a copy of `instance`. Never
   * throws: failures come back as `{ ok: false, error }` with a message that is the thrown
   * error's message only (no stack), at most 500 characters, environment values redacted.
   * Records the run in the run log without waiting for it (see `flushRunLog`).
   *
   * @example await runtime.run({ hook, trigger: 'webHook', instance: body, headers })
   */
  async run(invocation: HookInvocation): Promise<HookResult> {
    const startedAt = new Date();
    const started = performance.now();
    let env: Record<string, string> = {};
    let consoleLines: string[] = [];
    let queuedMs = 0;
    let outcome: SandboxOutcome;
    try {
      env = namedIn(invocation.hook).has('env') ? await this.loadEnvironment() : {};
      const capabilities = new HookCapabilities({ db: invocation.db, egress: this.egress, egressLimits: this.egressLimits });
      // Only a beforeSave hook's instance is used after the run (it is the record to save).
      const globals = capabilities.globals(grantsOf(invocation, env), invocation.trigger === 'beforeSave');
      const ran = await this.sandbox.run(invocation.hook.content, globals, invocation.hook.contentSha256);
      outcome = ran.outcome;
      consoleLines = ran.console;
      queuedMs = ran.queuedMs ?? 0;
    } catch (error) {
      this.ctx.logger.error({ err: error, hook: invocation.hook.name }, 'hook run failed outside the sandbox');
      outcome = { ok: false, kind: 'thrown', message: 'The hook could not be started' };
    }
    if (outcome.ok && outcome.response) {
      const unsendable = unsendableResponse(outcome.response);
      if (unsendable) outcome = { ok: false, kind: 'invalid-return', message: unsendable };
    }
    const durationMs = performance.now() - started;
    const secrets = redactable(env);
    // Objects on this path are built whole, not spread from others: object spreads per run sent
    // their copies to the old generation (seen with --trace-gc-nvp), which brought on the server
    // thread's major collections and the slowest answers under load.
    let result: HookResult;
    if (!outcome.ok) result = { ok: false, error: { kind: outcome.kind, message: safeError(outcome.message, secrets) }, durationMs };
    else if (outcome.response) result = { ok: true, value: outcome.value, instance: outcome.instance, durationMs, response: outcome.response };
    else result = { ok: true, value: outcome.value, instance: outcome.instance, durationMs };
    const record = runRecord(invocation, startedAt, result, consoleLines.map((line) => redact(line, secrets)), (text) => redact(text, secrets), queuedMs);
    // A designer's test run is kept whatever the sample: the designer is waiting to read it.
    this.runLog.record(record, invocation.testRun === true);
    const { metrics } = this.ctx;
    metrics.hookRuns.inc({ type: invocation.hook.type, outcome: record.outcome });
    metrics.hookDuration.observe({ type: invocation.hook.type }, durationMs / 1000);
    metrics.hookQueueWait.observe({ type: invocation.hook.type }, queuedMs / 1000);
    return result;
  }

  /** Resolves when every run recorded so far is stored or counted (the current period's counts included). */
  flushRunLog(): Promise<void> {
    return this.runLog.flush();
  }

  /** Stores the runs recorded so far and releases the idle sandbox contexts. */
  async close(): Promise<void> {
    await this.runLog.close();
    this.sandbox.close();
  }

  private loadEnvironment(): Promise<Record<string, string>> {
    return this.environment.load(() => decryptEnvironment(this.ctx));
  }

}

const CAPABILITIES = ['headers', 'request', 'user', 'env', 'fetch', 'db'] as const;
/** Hooks whose named capabilities are kept: more than an application has, few enough to bound the memory. */
const NAMED_CACHE_ENTRIES = 512;
const namedCache = new Map<string, ReadonlySet<string>>();

/** The capabilities a hook's code names, found once per version of its code (a scan of up to 200 KB per name). */
function namedIn(hook: HookCode): ReadonlySet<string> {
  let named = namedCache.get(hook.contentSha256);
  if (!named) {
    named = new Set(CAPABILITIES.filter((name) => namesCapability(hook.content, name)));
    if (namedCache.size >= NAMED_CACHE_ENTRIES) namedCache.delete(namedCache.keys().next().value!);
    namedCache.set(hook.contentSha256, named);
  }
  return named;
}

/**
 * The capabilities of one run: only those the code names, since it can reach no other (each copy
 * into the engine and each host member costs time on every run).
 */
function grantsOf(invocation: HookInvocation, env: Record<string, string>): Grants {
  const named = namedIn(invocation.hook);
  return {
    instance: invocation.instance ?? null,
    headers: named.has('headers') ? (invocation.headers ?? {}) : undefined,
    request: named.has('request') ? (invocation.request ?? null) : undefined,
    user: named.has('user') ? (invocation.user ?? null) : undefined,
    env: named.has('env') ? env : undefined,
    // Code that names neither cannot wait for the server, so the sandbox may queue it in a busy worker.
    fetch: named.has('fetch'),
    db: invocation.db !== undefined && named.has('db'),
  };
}

function safeError(message: string, secrets: readonly string[]): string {
  const longest = secrets[0]?.length ?? 0;
  return redact(message.slice(0, ERROR_MESSAGE_MAX_CHARS + longest), secrets).slice(0, ERROR_MESSAGE_MAX_CHARS);
}

/** The run log's trigger of a designer's test run. */
export const TEST_RUN_TRIGGER = 'webHook (test run)';

/**
 * The HTTP status a webhook's caller gets for this result: what respond() chose, 204 for no return
 * value, 200 for one, and 500 when the code failed (HOOK_FAILED).
 */
export function webhookStatus(result: HookResult): number {
  if (!result.ok) return 500;
  return result.response?.status ?? (result.value === undefined ? 204 : 200);
}

function outcomeOf(result: HookResult, httpStatus: number | null): HookRunRecord['outcome'] {
  if (!result.ok) return result.error.kind === 'timeout' || result.error.kind === 'memory' ? result.error.kind : 'error';
  return httpStatus !== null && httpStatus >= 400 ? 'refused' : 'ok';
}

function runRecord(invocation: HookInvocation, startedAt: Date, result: HookResult, console: string[], redactText: (text: string) => string, queuedMs: number): HookRunRecord {
  const httpStatus = invocation.trigger === 'webHook' ? webhookStatus(result) : null;
  return {
    hookId: invocation.hook._id,
    hookName: invocation.hook.name,
    trigger: invocation.testRun ? TEST_RUN_TRIGGER : invocation.trigger,
    startedAt,
    durationMs: result.durationMs,
    outcome: outcomeOf(result, httpStatus),
    httpStatus,
    console,
    error: result.ok ? null : result.error.message,
    input: runDetail(invocation.instance, redactText),
    // A webhook's answer, or what a save hook returned (the record to save), or nothing.
    output: result.ok ? runDetail(result.response?.body ?? result.value ?? null, redactText) : null,
    queuedMs,
    requestId: invocation.requestId ?? null,
  };
}
