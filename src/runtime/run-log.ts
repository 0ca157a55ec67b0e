import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { HookRunOutcome } from '../hooks/schema.js';
import type { Db } from '../platform/db/index.js';
import { RunSampler } from './run-sampler.js';
import { RunStats, storeRunStats } from './run-stats.js';

/** One `hook_runs` row; console lines and error already redacted. */
export interface HookRunRecord {
  hookId: string;
  hookName: string;
  trigger: string;
  startedAt: Date;
  durationMs: number;
  outcome: HookRunOutcome;
  console: string[];
  error: string | null;
  /** What the run received and answered, redacted and cut to RUN_DETAIL_MAX_CHARS of JSON. */
  input: unknown;
  output: unknown;
  /** How long it waited for a hook worker. */
  queuedMs: number;
  /** The id of the HTTP request that caused the run (its `x-request-id`); null when none did. */
  requestId: string | null;
  /** The HTTP status a webhook answered (500 when its code failed); null for save hooks. */
  httpStatus: number | null;
}

/** The most JSON of a run's input or output kept in its row: a run log, not an archive of payloads. */
export const RUN_DETAIL_MAX_CHARS = 4000;

/**
 * A value as the run log keeps it: JSON with the secrets redacted; a longer one becomes
 * { truncated: true, preview } with its first RUN_DETAIL_MAX_CHARS characters.
 */
export function runDetail(value: unknown, redactText: (text: string) => string): unknown {
  if (value === undefined) return null;
  let json: string;
  try {
    json = JSON.stringify(value) ?? 'null';
  } catch {
    return { unserializable: true };
  }
  const redacted = redactText(json);
  if (redacted.length > RUN_DETAIL_MAX_CHARS) return { truncated: true, preview: redacted.slice(0, RUN_DETAIL_MAX_CHARS) };
  // Nothing redacted: the value itself (a copy out of the sandbox) serves; no second parse per run.
  if (redacted === json) return value;
  try {
    return JSON.parse(redacted);
  } catch {
    // A redaction that cut through JSON syntax: keep the text.
    return { redacted: redacted };
  }
}

/** The row of one run as `jsonb_to_recordset` reads it; `position` keeps the batch's order (ids follow it). */
function asRow(run: HookRunRecord, position: number) {
  return {
    position,
    hook_id: run.hookId,
    hook_name: run.hookName,
    trigger: run.trigger,
    started_at: run.startedAt.toISOString(),
    duration_ms: Math.round(run.durationMs),
    outcome: run.outcome,
    console: run.console,
    error: run.error,
    input: run.input ?? null,
    output: run.output ?? null,
    queued_ms: Math.round(run.queuedMs),
    request_id: run.requestId,
    http_status: run.httpStatus,
  };
}

/** How long records gather before an insert: under load one insert serves every run of the window. */
export const RUN_LOG_WINDOW_MS = 25;
/** Runs per insert: on the embedded database an insert of 100 holds the thread for about 2 ms. */
export const RUN_LOG_BATCH = 100;

/** What the run log keeps (see RunSampler) and the period of its aggregates. */
export interface RunLogPolicy {
  samplesPerMinute: number;
  periodMs: number;
}

/**
 * Keeps the run log bounded: every run is counted in `hook_run_stats` (per hook and period), and
 * only the runs the sampler chooses are stored whole in `hook_runs` (every failure, a few successes
 * per hook and period, and the latest run of each hook at the end of each period). Both are written
 * in the background, several runs per insert. A run never waits for its row: a `beforeSave` hook
 * runs inside the record's transaction, and on the embedded database (one connection) an insert
 * awaited there would wait for that same transaction. A batch is one statement with one parameter
 * (`jsonb_to_recordset`): on the embedded database that costs less than half of a multi-row VALUES
 * list. A hook deleted in the meantime leaves its rows with `hook_id` null.
 */
export class HookRunLog {
  private queue: HookRunRecord[] = [];
  private draining: Promise<void> | undefined;
  private readonly sampler: RunSampler;
  private readonly stats: RunStats;
  private periodTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    policy: RunLogPolicy,
  ) {
    this.sampler = new RunSampler(policy);
    this.stats = new RunStats(policy.periodMs);
  }

  /** Counts `run`, and stores it whole when the sampler keeps it (`always`: a run someone asked to see). */
  record(run: HookRunRecord, always = false): void {
    this.stats.add(run);
    if (this.sampler.keep(run, always)) this.enqueue([run]);
    if (!this.periodTimer && !this.closed) this.schedulePeriodEnd();
  }

  /**
   * Resolves when everything recorded so far is stored (or its failure logged): the kept runs, the
   * latest run of each hook, and the counts of every period, the current one included.
   */
  async flush(): Promise<void> {
    await this.endPeriods(Date.now(), true);
    while (this.draining) await this.draining;
  }

  /** Stops the period timer and stores everything recorded, as `flush`; for a graceful stop. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.periodTimer);
    this.periodTimer = undefined;
    await this.flush();
  }

  /** Runs `endPeriods` just after each period ends, while runs are recorded; the timer does not keep the process alive. */
  private schedulePeriodEnd(): void {
    const { periodMs } = this.stats;
    // A little after the end, so that runs that started in the period and end just after it are counted in its write.
    const delay = periodMs - (Date.now() % periodMs) + Math.min(1000, periodMs / 4);
    this.periodTimer = setTimeout(() => {
      this.periodTimer = undefined;
      void this.endPeriods(Date.now(), false).then(() => {
        if (this.stats.counting && !this.closed && !this.periodTimer) this.schedulePeriodEnd();
      });
    }, delay);
    this.periodTimer.unref();
  }

  /** Stores the latest run of each hook not stored yet and the counts of the periods ended by `now` (of all with `all`). */
  private async endPeriods(now: number, all: boolean): Promise<void> {
    this.enqueue(this.sampler.takeLatest());
    this.sampler.forgetEnded(now);
    const rows = this.stats.take(now, all);
    try {
      await storeRunStats(this.db, rows);
    } catch (error) {
      this.logger.error({ err: error, periods: rows.length }, 'could not store hook run counts');
    }
  }

  private enqueue(runs: HookRunRecord[]): void {
    if (runs.length === 0) return;
    this.queue.push(...runs);
    this.draining ??= new Promise<void>((resolve) => setTimeout(resolve, RUN_LOG_WINDOW_MS)).then(() => this.drain());
  }

  private async drain(): Promise<void> {
    for (let first = true; this.queue.length > 0; first = false) {
      // The embedded database runs on this thread: let requests through between two inserts.
      if (!first) await new Promise((resolve) => setImmediate(resolve));
      const batch = this.queue.splice(0, RUN_LOG_BATCH);
      try {
        await sql`
          insert into hook_runs (hook_id, hook_name, trigger, started_at, duration_ms, outcome, console, error, input, output, queued_ms, request_id, http_status)
          select hooks.id, run.hook_name, run.trigger, run.started_at, run.duration_ms, run.outcome, run.console, run.error, run.input, run.output, run.queued_ms, run.request_id, run.http_status
          from jsonb_to_recordset(${JSON.stringify(batch.map(asRow))}::jsonb) as run(
            position integer, hook_id text, hook_name text, trigger text, started_at timestamptz, duration_ms integer, outcome text, console jsonb, error text,
            input jsonb, output jsonb, queued_ms integer, request_id text, http_status integer)
          left join hooks on hooks.id = run.hook_id
          order by run.position`.execute(this.db);
      } catch (error) {
        this.logger.error({ err: error, runs: batch.length }, 'could not store hook runs');
      }
    }
    this.draining = undefined;
  }
}
