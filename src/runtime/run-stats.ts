import { sql } from 'kysely';
import type { Db } from '../platform/db/index.js';
import type { HookRunRecord } from './run-log.js';

/** Durations kept per hook and period to estimate its percentiles: exact up to this many runs, a uniform sample beyond. */
export const RESERVOIR_SIZE = 256;

/**
 * A uniform sample of at most RESERVOIR_SIZE values (Vitter's algorithm R) and the exact maximum:
 * a period of 60 000 runs costs the same memory as one of 256.
 */
class Reservoir {
  private readonly values: number[] = [];
  private seen = 0;
  max = 0;

  add(value: number): void {
    this.seen += 1;
    if (value > this.max) this.max = value;
    if (this.values.length < RESERVOIR_SIZE) {
      this.values.push(value);
      return;
    }
    const slot = Math.floor(Math.random() * this.seen);
    if (slot < RESERVOIR_SIZE) this.values[slot] = value;
  }

  /** The nearest-rank percentile `p` (0 to 100) of the sample. */
  percentile(p: number): number {
    if (this.values.length === 0) return 0;
    const sorted = [...this.values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  }
}

/** Runs of one hook in one period, as counted in memory until they are written. */
interface PeriodCounts {
  hookId: string;
  hookName: string;
  periodStart: number;
  runs: number;
  refused: number;
  errors: number;
  timeouts: number;
  memory: number;
  durations: Reservoir;
  waits: Reservoir;
}

/** One `hook_run_stats` row as this replica counted it. */
export interface RunStatsRow {
  hookId: string;
  hookName: string;
  periodStart: Date;
  periodMs: number;
  runs: number;
  refused: number;
  errors: number;
  timeouts: number;
  memory: number;
  durationP50Ms: number;
  durationP95Ms: number;
  durationMaxMs: number;
  queuedP95Ms: number;
  queuedMaxMs: number;
}

/** The column counting runs that ended with each failed outcome. */
const FAILURE_COLUMNS = { refused: 'refused', error: 'errors', timeout: 'timeouts', memory: 'memory' } as const;

/**
 * Counts every run per hook and period (runs, failures by outcome, duration and queue-wait
 * percentiles) in memory; `take` hands over the periods to write.
 */
export class RunStats {
  private readonly periods = new Map<string, PeriodCounts>();

  constructor(readonly periodMs: number) {}

  /** Whether runs are counted that are not taken yet. */
  get counting(): boolean {
    return this.periods.size > 0;
  }

  /** The start of the period holding `time` (ms since the epoch). */
  periodOf(time: number): number {
    return time - (time % this.periodMs);
  }

  add(run: HookRunRecord): void {
    const periodStart = this.periodOf(run.startedAt.getTime());
    const key = `${periodStart} ${run.hookId}`;
    let counts = this.periods.get(key);
    if (!counts) {
      counts = { hookId: run.hookId, hookName: run.hookName, periodStart, runs: 0, refused: 0, errors: 0, timeouts: 0, memory: 0, durations: new Reservoir(), waits: new Reservoir() };
      this.periods.set(key, counts);
    }
    counts.runs += 1;
    if (run.outcome !== 'ok') counts[FAILURE_COLUMNS[run.outcome]] += 1;
    counts.durations.add(Math.round(run.durationMs));
    counts.waits.add(Math.round(run.queuedMs));
  }

  /** Removes and returns the counts of the periods that ended by `now`, or of every period with `all`. */
  take(now: number, all = false): RunStatsRow[] {
    const rows: RunStatsRow[] = [];
    for (const [key, counts] of this.periods) {
      if (!all && counts.periodStart + this.periodMs > now) continue;
      this.periods.delete(key);
      rows.push(this.toRow(counts));
    }
    return rows;
  }

  private toRow(counts: PeriodCounts): RunStatsRow {
    return {
      hookId: counts.hookId,
      hookName: counts.hookName,
      periodStart: new Date(counts.periodStart),
      periodMs: this.periodMs,
      runs: counts.runs,
      refused: counts.refused,
      errors: counts.errors,
      timeouts: counts.timeouts,
      memory: counts.memory,
      durationP50Ms: counts.durations.percentile(50),
      durationP95Ms: counts.durations.percentile(95),
      durationMaxMs: counts.durations.max,
      queuedP95Ms: counts.waits.percentile(95),
      queuedMaxMs: counts.waits.max,
    };
  }
}

/**
 * Adds `rows` to `hook_run_stats` in one statement. Several replicas (and several writes of one
 * period) add up: counts are summed and maxima kept exactly; the percentiles of two parts are
 * merged as their mean weighted by runs, an approximation (the true p95 of the union lies between
 * the parts' p95s, not necessarily at their weighted mean).
 */
export async function storeRunStats(db: Db, rows: RunStatsRow[]): Promise<void> {
  if (rows.length === 0) return;
  const weighted = (column: string) =>
    sql.raw(`round((hook_run_stats.${column}::bigint * hook_run_stats.runs + excluded.${column}::bigint * excluded.runs)::numeric / (hook_run_stats.runs + excluded.runs))::integer`);
  await sql`
    insert into hook_run_stats (hook_id, period_start, hook_name, period_ms, runs, refused, errors, timeouts, memory, duration_p50_ms, duration_p95_ms, duration_max_ms, queued_p95_ms, queued_max_ms)
    select * from jsonb_to_recordset(${JSON.stringify(rows.map(asStatsRow))}::jsonb) as row(
      hook_id text, period_start timestamptz, hook_name text, period_ms integer, runs integer, refused integer, errors integer, timeouts integer, memory integer,
      duration_p50_ms integer, duration_p95_ms integer, duration_max_ms integer, queued_p95_ms integer, queued_max_ms integer)
    on conflict (hook_id, period_start) do update set
      hook_name = excluded.hook_name,
      duration_p50_ms = ${weighted('duration_p50_ms')},
      duration_p95_ms = ${weighted('duration_p95_ms')},
      queued_p95_ms = ${weighted('queued_p95_ms')},
      runs = hook_run_stats.runs + excluded.runs,
      refused = hook_run_stats.refused + excluded.refused,
      errors = hook_run_stats.errors + excluded.errors,
      timeouts = hook_run_stats.timeouts + excluded.timeouts,
      memory = hook_run_stats.memory + excluded.memory,
      duration_max_ms = greatest(hook_run_stats.duration_max_ms, excluded.duration_max_ms),
      queued_max_ms = greatest(hook_run_stats.queued_max_ms, excluded.queued_max_ms)`.execute(db);
}

function asStatsRow(row: RunStatsRow) {
  return {
    hook_id: row.hookId,
    period_start: row.periodStart.toISOString(),
    hook_name: row.hookName,
    period_ms: row.periodMs,
    runs: row.runs,
    refused: row.refused,
    errors: row.errors,
    timeouts: row.timeouts,
    memory: row.memory,
    duration_p50_ms: row.durationP50Ms,
    duration_p95_ms: row.durationP95Ms,
    duration_max_ms: row.durationMaxMs,
    queued_p95_ms: row.queuedP95Ms,
    queued_max_ms: row.queuedMaxMs,
  };
}
