import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { requireAdmin, type Principal } from '../access/permissions.js';
import { describeDuration } from '../config.js';
import type { PlatformContext } from '../platform/context.js';
import { deadRowsByTable } from '../platform/db/embedded-maintenance.js';

/** One table (its partitions summed) as the storage view shows it. */
export interface TableStorage {
  /** The SQL name; an application table's also has `label`, the name people gave it. */
  name: string;
  label: string | null;
  /** Estimated from the statistics, like PostgreSQL's own views. */
  rows: number;
  deadRows: number;
  /** The table with its TOAST, its indexes, and both. */
  tableBytes: number;
  indexBytes: number;
  totalBytes: number;
  /** 1 for a plain table; the number of day partitions for a partitioned one. */
  partitions: number;
  lastVacuum: Date | null;
  lastAutovacuum: Date | null;
}

export interface IndexStorage {
  name: string;
  table: string;
  bytes: number;
}

/** Rows kept of one kind of log, exactly counted, the oldest, and how long they are kept. */
export interface LogStorage {
  rows: number;
  oldest: Date | null;
  retention: string;
}

export interface StorageStats {
  database: 'embedded' | 'postgres';
  /** pg_database_size: every relation's files. */
  databaseBytes: number;
  /** The embedded database: the whole data folder (write-ahead log included); null on a server. */
  dataFolderBytes: number | null;
  tables: TableStorage[];
  indexes: IndexStorage[];
  runLog: LogStorage & { failures: number; samplesPerMinute: number };
  runStats: LogStorage & { periodMs: number };
  mcpAudit: LogStorage;
}

/**
 * The database's storage for `trellis db stats` and the designer's Settings › Storage (admins):
 * size per table and index, rows and dead rows, last vacuums, the run log's, aggregates' and MCP
 * audit's rows with their retention, and the embedded data folder's size on disk.
 */
export async function storageStats(ctx: PlatformContext, principal: Principal): Promise<StorageStats> {
  requireAdmin(principal);
  const embedded = ctx.database.kind === 'pglite';
  // The embedded database publishes its statistics only when asked (see deadRowsByTable).
  if (embedded) await deadRowsByTable(ctx.db);
  const [tables, indexes, databaseBytes, runLog, runStats, mcpAudit, failures, dataFolderBytes] = await Promise.all([
    tableStorage(ctx),
    indexStorage(ctx),
    sql<{ bytes: number }>`select pg_database_size(current_database())::bigint as bytes`.execute(ctx.db).then(({ rows }) => Number(rows[0]!.bytes)),
    logStorage(ctx, 'hook_runs', 'started_at', ctx.config.runLogRetentionMs),
    logStorage(ctx, 'hook_run_stats', 'period_start', ctx.config.runStatsRetentionMs),
    logStorage(ctx, 'mcp_audit_logs', 'at', ctx.config.auditRetentionMs),
    ctx.db.selectFrom('hook_runs').select((eb) => eb.fn.countAll<string | number>().as('n')).where('outcome', '<>', 'ok').executeTakeFirstOrThrow(),
    embedded ? folderBytes(ctx.config.dataDir) : Promise.resolve(null),
  ]);
  return {
    database: embedded ? 'embedded' : 'postgres',
    databaseBytes,
    dataFolderBytes,
    tables,
    indexes,
    runLog: { ...runLog, failures: Number(failures.n), samplesPerMinute: ctx.config.runLogSamplesPerMinute },
    runStats: { ...runStats, periodMs: ctx.config.runStatsPeriodMs },
    mcpAudit,
  };
}

async function tableStorage(ctx: PlatformContext): Promise<TableStorage[]> {
  const { rows } = await sql<Omit<TableStorage, 'label'> & { label: string | null }>`
    with parts as (
      select coalesce(pg_partition_root(s.relid), s.relid) as root, s.*
      from pg_stat_user_tables s where s.schemaname = current_schema())
    select root::regclass::text as name, max(t.name) as label, count(*)::integer as partitions,
      sum(n_live_tup)::bigint as rows, sum(n_dead_tup)::bigint as "deadRows",
      sum(pg_table_size(relid))::bigint as "tableBytes", sum(pg_indexes_size(relid))::bigint as "indexBytes",
      sum(pg_total_relation_size(relid))::bigint as "totalBytes",
      max(last_vacuum) as "lastVacuum", max(last_autovacuum) as "lastAutovacuum"
    from parts left join app_tables t on t.sql_name = parts.root::regclass::text
    group by root
    order by "totalBytes" desc, name`.execute(ctx.db);
  return rows.map((row) => ({ ...row, rows: Number(row.rows), deadRows: Number(row.deadRows), tableBytes: Number(row.tableBytes), indexBytes: Number(row.indexBytes), totalBytes: Number(row.totalBytes) }));
}

async function indexStorage(ctx: PlatformContext): Promise<IndexStorage[]> {
  const { rows } = await sql<IndexStorage>`
    select coalesce(pg_partition_root(i.indexrelid), i.indexrelid)::regclass::text as name,
      coalesce(pg_partition_root(i.indrelid), i.indrelid)::regclass::text as "table",
      sum(pg_relation_size(i.indexrelid))::bigint as bytes
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where c.relnamespace = current_schema()::regnamespace and c.relkind = 'i'
    group by 1, 2
    order by bytes desc, name`.execute(ctx.db);
  return rows.map((row) => ({ ...row, bytes: Number(row.bytes) }));
}

async function logStorage(ctx: PlatformContext, table: 'hook_runs' | 'hook_run_stats' | 'mcp_audit_logs', column: string, retentionMs: number): Promise<LogStorage> {
  const { rows } = await sql<{ rows: number; oldest: Date | null }>`select count(*)::bigint as rows, min(${sql.ref(column)}) as oldest from ${sql.table(table)}`.execute(ctx.db);
  return { rows: Number(rows[0]!.rows), oldest: rows[0]!.oldest, retention: describeDuration(retentionMs) };
}

/** The bytes of the files under `folder`, walked asynchronously (a few thousand files). */
export async function folderBytes(folder: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) total += await folderBytes(path);
    // A file the database removed meanwhile (a dropped table, a recycled log segment) counts for nothing.
    else if (entry.isFile()) total += await stat(path).then((info) => info.size, () => 0);
  }
  return total;
}
