import { sql } from 'kysely';
import { z } from 'zod';
import { requirePermission, type Principal } from '../access/permissions.js';
import type { PlatformContext } from '../platform/context.js';
import { idSchema, parseInput } from '../platform/validation.js';
import type { RunStatsRow } from '../runtime/run-stats.js';

/** Periods one answer holds at most: a day of minutes. */
export const RUN_STATS_MAX_PERIODS = 1440;
/** The periods read when `since` is not given: the last hour. */
const DEFAULT_WINDOW_MS = 60 * 60 * 1000;

export const hookRunStatsInput = z.object({
  hookId: idSchema.optional(),
  since: z.coerce.date({ error: 'must be an ISO-8601 date and time' }).optional(),
});
export type HookRunStatsInput = z.input<typeof hookRunStatsInput>;

/** The runs of one period, of one hook or of all hooks together: a stored row without its hook, and the failures summed. */
export interface HookRunPeriod extends Omit<RunStatsRow, 'hookId' | 'hookName'> {
  /** Runs that did not end `ok`: refused + errors + timeouts + memory. */
  failures: number;
}

/**
 * The run counts of every period since `since` (default: the last hour), oldest first, at most
 * RUN_STATS_MAX_PERIODS (the newest), of one hook or summed over all hooks. Counts are exact; the
 * percentiles of several hooks (or replicas) are merged as their mean weighted by runs, an
 * approximation. Needs config:read, like the run log.
 */
export async function listHookRunStats(ctx: PlatformContext, principal: Principal, input: HookRunStatsInput = {}): Promise<HookRunPeriod[]> {
  requirePermission(principal, 'config:read');
  const filter = parseInput(hookRunStatsInput, input);
  const since = filter.since ?? new Date(Date.now() - DEFAULT_WINDOW_MS);
  const weighted = (column: string) => sql.raw(`round(sum(${column}::bigint * runs)::numeric / sum(runs))::integer`);
  const { rows } = await sql<HookRunPeriod>`
    select period_start as "periodStart", max(period_ms) as "periodMs", sum(runs)::integer as runs,
      sum(refused + errors + timeouts + memory)::integer as failures, sum(refused)::integer as refused, sum(errors)::integer as errors,
      sum(timeouts)::integer as timeouts, sum(memory)::integer as memory,
      ${weighted('duration_p50_ms')} as "durationP50Ms", ${weighted('duration_p95_ms')} as "durationP95Ms", max(duration_max_ms) as "durationMaxMs",
      ${weighted('queued_p95_ms')} as "queuedP95Ms", max(queued_max_ms) as "queuedMaxMs"
    from hook_run_stats
    where period_start >= ${since} ${filter.hookId === undefined ? sql`` : sql`and hook_id = ${filter.hookId}`}
    group by period_start
    order by period_start desc
    limit ${RUN_STATS_MAX_PERIODS}`.execute(ctx.db);
  return rows.reverse();
}
