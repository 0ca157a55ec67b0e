import type { PlatformContext } from '../platform/context.js';
import type { Db } from '../platform/db/index.js';
import { AUDIT_RETENTION_DAYS } from './mcp-log.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** The first sweep waits a little so that start-up is not slowed by it. */
const FIRST_SWEEP_DELAY_MS = 60_000;
const SWEEP_INTERVAL_MS = DAY_MS;

export interface SweepResult {
  mcpAuditLogs: number;
  hookRuns: number;
}

/** Deletes MCP audit entries and hook runs older than the retention period, counted from `now`. */
export async function sweepExpiredAuditEntries(db: Db, now: Date = new Date()): Promise<SweepResult> {
  const cutoff = new Date(now.getTime() - AUDIT_RETENTION_DAYS * DAY_MS);
  const audit = await db.deleteFrom('mcp_audit_logs').where('at', '<', cutoff).executeTakeFirst();
  const runs = await db.deleteFrom('hook_runs').where('started_at', '<', cutoff).executeTakeFirst();
  return { mcpAuditLogs: Number(audit.numDeletedRows), hookRuns: Number(runs.numDeletedRows) };
}

/**
 * Sweeps expired entries a minute after start and then every 24 hours. The timers do not keep the
 * process alive; `stop()` cancels them, and a sweep still running when stopped fails quietly.
 */
export function startAuditRetention(ctx: PlatformContext): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const sweep = async () => {
    try {
      const result = await sweepExpiredAuditEntries(ctx.db);
      ctx.logger.info(result, 'audit retention sweep deleted expired entries');
    } catch (error) {
      if (!stopped) ctx.logger.warn({ err: error }, 'audit retention sweep failed');
    }
  };
  const schedule = (delay: number) => {
    timer = setTimeout(() => {
      void sweep().finally(() => {
        if (!stopped) schedule(SWEEP_INTERVAL_MS);
      });
    }, delay);
    timer.unref();
  };
  schedule(FIRST_SWEEP_DELAY_MS);
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
