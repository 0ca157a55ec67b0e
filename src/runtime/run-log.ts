import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../platform/db/index.js';

/** One `hook_runs` row; console lines and error already redacted. */
export interface HookRunRecord {
  hookId: string;
  hookName: string;
  trigger: string;
  startedAt: Date;
  durationMs: number;
  outcome: 'ok' | 'error' | 'timeout' | 'memory';
  console: string[];
  error: string | null;
  /** What the run received and answered, redacted and cut to RUN_DETAIL_MAX_CHARS of JSON. */
  input: unknown;
  output: unknown;
  /** How long it waited for a hook worker. */
  queuedMs: number;
  /** The id of the HTTP request that caused the run (its `x-request-id`); null when none did. */
  requestId: string | null;
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
  };
}

/** How long records gather before an insert: under load one insert serves every run of the window. */
export const RUN_LOG_WINDOW_MS = 25;
/** Runs per insert: on the embedded database an insert of 100 holds the thread for about 2 ms. */
export const RUN_LOG_BATCH = 100;

/**
 * Stores run records in the background, several per insert. A run never waits for its row: a
 * `beforeSave` hook runs inside the record's transaction, and on the embedded database (one
 * connection) an insert awaited there would wait for that same transaction. A batch is one
 * statement with one parameter (`jsonb_to_recordset`): on the embedded database that costs
 * less than half of a multi-row VALUES list. A hook deleted in the meantime leaves its rows with
 * `hook_id` null.
 */
export class HookRunLog {
  private queue: HookRunRecord[] = [];
  private draining: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  record(run: HookRunRecord): void {
    this.queue.push(run);
    this.draining ??= new Promise<void>((resolve) => setTimeout(resolve, RUN_LOG_WINDOW_MS)).then(() => this.drain());
  }

  /** Resolves when every record given so far is stored (or its failure logged). */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    for (let first = true; this.queue.length > 0; first = false) {
      // The embedded database runs on this thread: let requests through between two inserts.
      if (!first) await new Promise((resolve) => setImmediate(resolve));
      const batch = this.queue.splice(0, RUN_LOG_BATCH);
      try {
        await sql`
          insert into hook_runs (hook_id, hook_name, trigger, started_at, duration_ms, outcome, console, error, input, output, queued_ms, request_id)
          select hooks.id, run.hook_name, run.trigger, run.started_at, run.duration_ms, run.outcome, run.console, run.error, run.input, run.output, run.queued_ms, run.request_id
          from jsonb_to_recordset(${JSON.stringify(batch.map(asRow))}::jsonb) as run(
            position integer, hook_id text, hook_name text, trigger text, started_at timestamptz, duration_ms integer, outcome text, console jsonb, error text,
            input jsonb, output jsonb, queued_ms integer, request_id text)
          left join hooks on hooks.id = run.hook_id
          order by run.position`.execute(this.db);
      } catch (error) {
        this.logger.error({ err: error, runs: batch.length }, 'could not store hook runs');
      }
    }
    this.draining = undefined;
  }
}
