import { sql } from 'kysely';
import type { Config } from '../config.js';
import type { PlatformContext } from '../platform/context.js';
import { checkpointIfDue, vacuumDeadRows } from '../platform/db/embedded-maintenance.js';
import type { DatabaseHandle } from '../platform/db/index.js';
import { dropExpiredPartitions, ensureDayPartitions, isPartitioned, TIME_TABLES, type TimeTable } from '../platform/db/partitions.js';

/**
 * How long each kind of entry is kept, in ms (TRELLIS_RUN_LOG_RETENTION, TRELLIS_RUN_STATS_RETENTION,
 * TRELLIS_AUDIT_RETENTION for both audits, TRELLIS_MAIL_RETENTION for e-mail once sent).
 */
export interface RetentionPeriods {
  runLogMs: number;
  runStatsMs: number;
  auditMs: number;
  /** Sent e-mail; unsent e-mail stays until it is sent. Default 30 days when absent. */
  mailMs?: number;
}

export function retentionOf(config: Config): RetentionPeriods {
  return { runLogMs: config.runLogRetentionMs, runStatsMs: config.runStatsRetentionMs, auditMs: config.auditRetentionMs, mailMs: config.mailRetentionMs };
}

const DEFAULT_MAIL_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** Rows one DELETE removes at most: on the embedded database a batch holds the thread for tens of ms. */
export const DELETE_BATCH = 5000;
/** The first sweep waits a little so that start-up is not slowed by it. */
const FIRST_SWEEP_DELAY_MS = 60_000;
/** How often the embedded database is checked for tables to vacuum. */
const EMBEDDED_VACUUM_INTERVAL_MS = 60_000;
/** The embedded database counts as idle after this long without a statement. */
const IDLE_AFTER_MS = 5000;


type Counted = 'hookRuns' | 'hookRunStats' | 'mcpAuditLogs' | 'auditEvents' | 'sentMail' | 'sessions' | 'accessTokens';

/**
 * What expires, by the column that dates it: the time tables (partitioned on PostgreSQL), the
 * builder's audit with the MCP audit's retention, e-mail once sent, and sessions and integration
 * tokens once they have expired (they can no longer be used: `period` null, the cutoff is now).
 */
const EXPIRING: readonly { spec: TimeTable; period: keyof RetentionPeriods | null; result: Counted; partitioned?: true }[] = [
  { spec: TIME_TABLES[0]!, period: 'runLogMs', result: 'hookRuns', partitioned: true },
  { spec: TIME_TABLES[1]!, period: 'runStatsMs', result: 'hookRunStats', partitioned: true },
  { spec: TIME_TABLES[2]!, period: 'auditMs', result: 'mcpAuditLogs', partitioned: true },
  { spec: { table: 'audit_events', column: 'at' }, period: 'auditMs', result: 'auditEvents' },
  { spec: { table: 'mail_outbox', column: 'sent_at' }, period: 'mailMs', result: 'sentMail' },
  { spec: { table: 'user_sessions', column: 'expires_at' }, period: null, result: 'sessions' },
  { spec: { table: 'access_tokens', column: 'expires_at' }, period: null, result: 'accessTokens' },
];

export interface SweepResult {
  /** Rows deleted (rows of dropped partitions are not counted: see partitionsDropped). */
  mcpAuditLogs: number;
  hookRuns: number;
  hookRunStats: number;
  /** The builder's audit entries (audit_events), kept as long as the MCP audit. */
  auditEvents: number;
  /** E-mail sent longer ago than its retention. */
  sentMail: number;
  /** Expired sign-in sessions and integration access tokens. */
  sessions: number;
  accessTokens: number;
  /** PostgreSQL: the partitions dropped whole, and those created ahead. */
  partitionsDropped: string[];
  partitionsCreated: string[];
  /** The tables (or partitions) vacuumed because rows were deleted from them. */
  vacuumed: string[];
}

export interface SweepOptions {
  /** Rows per DELETE (default DELETE_BATCH). */
  batchSize?: number;
  /** Pause between two batches, in ms, for the requests waiting for the database (default 10). */
  pauseMs?: number;
}

/**
 * Deletes the run-log rows, run aggregates, both audits' entries and sent e-mail older than their
 * retention, and expired sessions and access tokens,
 * counted back from `now`. On PostgreSQL it first creates the day partitions ahead and drops the
 * partitions that have expired whole (a short lock, waited for at most 5 s). The rest goes in
 * batches of `batchSize` rows, one statement each with a pause between two, so that no statement
 * holds its locks (or, on the embedded database, the thread) for long. Every table or partition
 * rows were deleted from is vacuumed, so that the space is reused: the embedded database has no
 * autovacuum, and on a server it saves waiting for one.
 */
export async function sweepExpiredEntries(database: Pick<DatabaseHandle, 'db' | 'kind'>, retention: RetentionPeriods, now = new Date(), options: SweepOptions = {}): Promise<SweepResult> {
  const result: SweepResult = { mcpAuditLogs: 0, hookRuns: 0, hookRunStats: 0, auditEvents: 0, sentMail: 0, sessions: 0, accessTokens: 0, partitionsDropped: [], partitionsCreated: [], vacuumed: [] };
  for (const { spec, period, result: counted, partitioned } of EXPIRING) {
    const kept = period === null ? 0 : (retention[period] ?? DEFAULT_MAIL_RETENTION_MS);
    const cutoff = new Date(now.getTime() - kept);
    if (partitioned && database.kind === 'postgres' && (await isPartitioned(database.db, spec.table))) {
      result.partitionsCreated.push(...(await ensureDayPartitions(database.db, spec, now)));
      result.partitionsDropped.push(...(await dropExpiredPartitions(database.db, spec.table, cutoff)));
    }
    const deleted = await deleteInBatches(database, spec, cutoff, options);
    result[counted] = deleted.rows;
    // The embedded database publishes the deletes' counts only when asked: before the vacuum, or they would outlive it as dead rows.
    if (database.kind === 'pglite' && deleted.relations.size > 0) await sql`select pg_stat_force_next_flush()`.execute(database.db);
    for (const relation of deleted.relations) {
      await sql`vacuum ${sql.raw(relation)}`.execute(database.db);
      result.vacuumed.push(relation);
    }
  }
  return result;
}

/**
 * Deletes the rows of `spec.table` older than `cutoff`, `batchSize` at a time. A batch picks rows by
 * `ctid`, which is unique within one table or partition: the second `cutoff` condition makes sure a
 * row of another partition that shares a picked `ctid` is one that has expired too.
 */
async function deleteInBatches(database: Pick<DatabaseHandle, 'db'>, spec: TimeTable, cutoff: Date, options: SweepOptions): Promise<{ rows: number; relations: Set<string> }> {
  const batchSize = options.batchSize ?? DELETE_BATCH;
  const table = sql.table(spec.table);
  const column = sql.ref(spec.column);
  const relations = new Set<string>();
  let rows = 0;
  for (;;) {
    const { rows: gone } = await sql<{ relation: string; rows: number }>`
      with gone as (
        delete from ${table}
        where ctid = any(array(select ctid from ${table} where ${column} < ${cutoff} limit ${batchSize})) and ${column} < ${cutoff}
        returning tableoid::regclass::text as relation)
      select relation, count(*)::integer as rows from gone group by relation`.execute(database.db);
    const batch = gone.reduce((sum, part) => sum + part.rows, 0);
    for (const part of gone) relations.add(part.relation);
    rows += batch;
    if (batch < batchSize) return { rows, relations };
    await new Promise((resolve) => setTimeout(resolve, options.pauseMs ?? 10));
  }
}

/**
 * Sweeps expired entries a minute after start and then every TRELLIS_RETENTION_SWEEP_INTERVAL; on
 * the embedded database, which runs neither autovacuum nor a checkpointer, also vacuums every
 * minute the tables with many dead rows (any number once it has been idle for IDLE_AFTER_MS) and
 * checkpoints once 16 MB of log or 5 minutes have passed since the last checkpoint. The timers do not keep the process alive; `stop()` cancels them,
 * and a task still running when stopped fails quietly.
 */
export function startRetention(ctx: PlatformContext): { stop(): void } {
  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  const every = (firstDelay: number, interval: number, task: () => Promise<void>) => {
    const schedule = (delay: number) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        void task()
          .catch((error: unknown) => {
            if (!stopped) ctx.logger.warn({ err: error }, 'storage maintenance failed');
          })
          .finally(() => {
            if (!stopped) schedule(interval);
          });
      }, delay);
      timer.unref();
      timers.add(timer);
    };
    schedule(firstDelay);
  };
  every(FIRST_SWEEP_DELAY_MS, ctx.config.retentionSweepIntervalMs, async () => {
    const result = await sweepExpiredEntries(ctx.database, retentionOf(ctx.config));
    ctx.logger.info(result, 'retention sweep deleted expired entries');
  });
  const { database } = ctx;
  if (database.kind === 'pglite') {
    every(EMBEDDED_VACUUM_INTERVAL_MS, EMBEDDED_VACUUM_INTERVAL_MS, async () => {
      const vacuumed = await vacuumDeadRows(database.db, { idle: (database.idleMs?.() ?? 0) >= IDLE_AFTER_MS });
      if (vacuumed.length > 0) ctx.logger.info({ vacuumed }, 'vacuumed tables with dead rows');
      await checkpointIfDue(database.db);
    });
  }
  return {
    stop: () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
