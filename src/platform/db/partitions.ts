import { sql, type Kysely } from 'kysely';

/**
 * Day partitions of the tables that only grow by time, on a PostgreSQL server (native declarative
 * partitioning): retention drops a day's partition instead of deleting its rows one by one, and the
 * space is the server's again at once. The embedded database keeps plain tables: it deletes in
 * batches and vacuums (see embedded-maintenance.ts), which its single connection handles as well.
 *
 * Layout of a partitioned table `t` on column `c` (UTC days):
 * - `t_pYYYYMMDD`: the rows of one day, created DAYS_AHEAD days ahead by every retention sweep;
 * - `t_default`: a safety net for rows of a day without a partition (a clock far ahead, sweeps
 *   stopped); the day's partition, once created, takes them over;
 * - `t_legacy` (from MINVALUE to the day of the conversion): the rows the table held when it was
 *   converted, attached without being copied; dropped whole once its last day has expired.
 * The primary key gains the partition column (PostgreSQL requires it); ids still come from the
 * table's sequence, so they stay unique and ordered.
 */

/** A table partitioned by day on `column`. */
export interface TimeTable {
  table: string;
  column: string;
}

/** The tables that only grow by time: the run log, its aggregates and the MCP audit log. */
export const TIME_TABLES: readonly TimeTable[] = [
  { table: 'hook_runs', column: 'started_at' },
  { table: 'hook_run_stats', column: 'period_start' },
  { table: 'mcp_audit_logs', column: 'at' },
];

const DAY_MS = 24 * 60 * 60 * 1000;
/** Days after today whose partitions exist: a day of sweeps may fail before a row lands in the default partition. */
export const DAYS_AHEAD = 2;
/** The first key of the advisory locks that make replicas convert and create partitions one at a time. */
const PARTITION_LOCK = 0x7472_6c73;
/** How long creating or dropping a partition waits for its locks: never long, the next sweep tries again. */
const LOCK_TIMEOUT = '5s';

type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The start (UTC midnight) of the day holding `time`. */
export function dayStart(time: number): number {
  return time - (((time % DAY_MS) + DAY_MS) % DAY_MS);
}

/** The name of the partition of `table` holding the day that starts at `day`: hook_runs_p20261126. */
export function partitionName(table: string, day: number): string {
  return `${table}_p${new Date(day).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** Whether `table` is partitioned (relkind 'p'). */
export async function isPartitioned(db: AnyDb, table: string): Promise<boolean> {
  const { rows } = await sql<{ kind: string }>`select relkind as kind from pg_class where oid = to_regclass(${table})`.execute(db);
  return rows[0]?.kind === 'p';
}

/**
 * Converts every TIME_TABLES table that is still a plain table, then makes sure the partitions of
 * today and DAYS_AHEAD days ahead exist. Safe from several replicas at once; for PostgreSQL only.
 */
export async function partitionTimeTables(db: AnyDb, now = new Date()): Promise<void> {
  for (const spec of TIME_TABLES) {
    await partitionByDay(db, spec, now);
    await ensureDayPartitions(db, spec, now);
  }
}

/**
 * Turns the plain table `spec.table` into a table partitioned by day, in one transaction: the old
 * table becomes the `_legacy` partition (no row is copied but those of today and later, which move
 * to their day's partition), with the same columns, defaults, indexes and sequence. Does nothing
 * when the table is already partitioned.
 */
export async function partitionByDay(db: AnyDb, spec: TimeTable, now = new Date()): Promise<void> {
  const { table, column } = spec;
  // Every start after the first: one read, no transaction, no lock.
  if (await isPartitioned(db, table)) return;
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${PARTITION_LOCK}, hashtext(${table}))`.execute(trx);
    if (await isPartitioned(trx, table)) return;
    const legacy = `${table}_legacy`;
    const today = dayStart(now.getTime());
    const indexes = await indexesOf(trx, table);
    const primary = indexes.find((index) => index.primary);
    await run(trx, `alter table ${table} rename to ${legacy}`);
    for (const index of indexes) await run(trx, `alter index ${index.name} rename to ${legacyName(index.name)}`);
    await run(trx, `create table ${table} (like ${legacy} including defaults including storage including comments) partition by range (${column})`);
    const key = [...(primary?.columns ?? []).filter((name) => name !== column), column];
    await run(trx, `alter table ${table} add primary key (${key.join(', ')})`);
    // Each index as it was defined on the plain table, now on the parent (and so on every partition).
    for (const index of indexes) if (!index.primary) await run(trx, index.definition);
    await run(trx, `create table ${table}_default partition of ${table} default`);
    for (let day = today; day <= today + DAYS_AHEAD * DAY_MS; day += DAY_MS) {
      await run(trx, `create table ${partitionName(table, day)} partition of ${table} for values from ('${iso(day)}') to ('${iso(day + DAY_MS)}')`);
    }
    await run(trx, `with moved as (delete from ${legacy} where ${column} >= '${iso(today)}' returning *) insert into ${table} select * from moved`);
    // The constraint proves the range, so that attaching does not scan the old table again; the
    // partition takes the parent's primary key (with the partition column) in place of its own.
    await run(trx, `alter table ${legacy} add constraint ${legacy}_range check (${column} < '${iso(today)}')`);
    if (primary) await dropPrimaryKey(trx, legacy);
    await run(trx, `alter table ${table} attach partition ${legacy} for values from (minvalue) to ('${iso(today)}')`);
    await run(trx, `alter table ${legacy} drop constraint ${legacy}_range`);
    await moveSequences(trx, legacy, table);
  });
}

/**
 * Creates the partitions of `spec.table` from the day of `now` to DAYS_AHEAD days later that do not
 * exist yet. A day's rows that landed in the default partition move into its new partition.
 */
export async function ensureDayPartitions(db: AnyDb, spec: TimeTable, now = new Date()): Promise<string[]> {
  const created: string[] = [];
  const today = dayStart(now.getTime());
  for (let day = today; day <= today + DAYS_AHEAD * DAY_MS; day += DAY_MS) {
    if (await createDayPartition(db, spec, day)) created.push(partitionName(spec.table, day));
  }
  return created;
}

/** Creates the partition of the day starting at `day` unless it exists; resolves whether it created it. */
export async function createDayPartition(db: AnyDb, spec: TimeTable, day: number): Promise<boolean> {
  const { table, column } = spec;
  const name = partitionName(table, day);
  if (await exists(db, name)) return false;
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${PARTITION_LOCK}, hashtext(${table}))`.execute(trx);
    if (await exists(trx, name)) return false;
    await run(trx, `set local lock_timeout = '${LOCK_TIMEOUT}'`);
    const [from, to] = [iso(day), iso(day + DAY_MS)];
    await run(trx, `create table ${name} (like ${table} including defaults including storage)`);
    if (await exists(trx, `${table}_default`)) {
      await run(trx, `with moved as (delete from ${table}_default where ${column} >= '${from}' and ${column} < '${to}' returning *) insert into ${name} select * from moved`);
    }
    await run(trx, `alter table ${table} attach partition ${name} for values from ('${from}') to ('${to}')`);
    return true;
  });
}

/** A partition of a table with the end of its range (null for the default partition). */
export interface Partition {
  name: string;
  /** The exclusive upper bound of its range; null for the default partition. */
  until: Date | null;
}

/** The partitions of `table`, oldest first (the default partition last); none for a plain table. */
export async function partitionsOf(db: AnyDb, table: string): Promise<Partition[]> {
  const { rows } = await sql<Partition>`
    select c.relname as name, (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz as until
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = to_regclass(${table})
    order by until nulls last`.execute(db);
  return rows;
}

/**
 * Drops the partitions of `table` whose every row is older than `cutoff` (their range ends by it).
 * Each drop waits at most LOCK_TIMEOUT for its lock; one that cannot get it is left to the next
 * sweep. Resolves with the names dropped.
 */
export async function dropExpiredPartitions(db: AnyDb, table: string, cutoff: Date): Promise<string[]> {
  const dropped: string[] = [];
  for (const partition of await partitionsOf(db, table)) {
    if (!partition.until || partition.until.getTime() > cutoff.getTime()) continue;
    try {
      await db.transaction().execute(async (trx) => {
        await run(trx, `set local lock_timeout = '${LOCK_TIMEOUT}'`);
        await run(trx, `drop table ${partition.name}`);
      });
      dropped.push(partition.name);
    } catch (error) {
      if ((error as { code?: string }).code !== '55P03') throw error;
    }
  }
  return dropped;
}

interface IndexInfo {
  name: string;
  primary: boolean;
  columns: string[];
  definition: string;
}

async function indexesOf(db: AnyDb, table: string): Promise<IndexInfo[]> {
  const { rows } = await sql<IndexInfo>`
    select c.relname as name, i.indisprimary as primary, pg_get_indexdef(i.indexrelid) as definition,
      array(select a.attname from unnest(i.indkey) with ordinality as k(attnum, position) join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum order by k.position)::text[] as columns
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = to_regclass(${table})`.execute(db);
  return rows;
}

async function dropPrimaryKey(db: AnyDb, table: string): Promise<void> {
  const { rows } = await sql<{ name: string }>`select conname as name from pg_constraint where conrelid = to_regclass(${table}) and contype = 'p'`.execute(db);
  for (const row of rows) await run(db, `alter table ${table} drop constraint ${quoteIdent(row.name)}`);
}

/** Makes the sequences of `from`'s serial columns belong to `to`, so that dropping `from` keeps them. */
async function moveSequences(db: AnyDb, from: string, to: string): Promise<void> {
  const { rows } = await sql<{ column: string; sequence: string }>`
    select a.attname as column, pg_get_serial_sequence(${from}, a.attname) as sequence
    from pg_attribute a where a.attrelid = to_regclass(${from}) and a.attnum > 0 and not a.attisdropped and pg_get_serial_sequence(${from}, a.attname) is not null`.execute(db);
  for (const row of rows) await run(db, `alter sequence ${row.sequence} owned by ${to}.${quoteIdent(row.column)}`);
}

async function exists(db: AnyDb, name: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`select to_regclass(${name}) is not null as found`.execute(db);
  return rows[0]?.found === true;
}

/** The legacy partition's name for an index of the plain table, within PostgreSQL's 63 characters. */
function legacyName(index: string): string {
  return `${index.slice(0, 56)}_legacy`;
}

function iso(time: number): string {
  return new Date(time).toISOString();
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Runs one statement built from this module's own names (never from input). */
async function run(db: AnyDb, statement: string): Promise<void> {
  await sql.raw(statement).execute(db);
}
