import { sql, type Kysely } from 'kysely';

/**
 * The embedded database (PGlite) is one backend with no background workers: no autovacuum, so the
 * space of deleted and updated rows is never marked reusable (measured in issue 22: 10 k dead rows,
 * nothing reclaimed in 95 s), and no checkpointer, so the write-ahead log's old segments are never
 * recycled (PGlite 0.5 does not checkpoint by itself even past max_wal_size). Either way its folder
 * grows for good. This does their work on a schedule: a plain VACUUM (no lock that stops reads or
 * writes, but on PGlite it holds the one thread while it runs) of each table with enough dead rows,
 * and a CHECKPOINT once enough log has been written or enough time has passed.
 */

/** Dead rows that make a table worth vacuuming, plus AUTOVACUUM_SCALE of its live rows: PostgreSQL's autovacuum defaults. */
export const AUTOVACUUM_THRESHOLD = 50;
export const AUTOVACUUM_SCALE = 0.2;

type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface DeadRows {
  table: string;
  liveRows: number;
  deadRows: number;
}

/**
 * The dead and live rows of every table, from the statistics. PGlite publishes a backend's counts
 * only when asked (`pg_stat_force_next_flush`), as a server does when a session goes idle.
 */
export async function deadRowsByTable(db: AnyDb): Promise<DeadRows[]> {
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<DeadRows>`
    select quote_ident(schemaname) || '.' || quote_ident(relname) as "table", n_live_tup::bigint as "liveRows", n_dead_tup::bigint as "deadRows"
    from pg_stat_user_tables order by n_dead_tup desc`.execute(db);
  return rows.map((row) => ({ ...row, liveRows: Number(row.liveRows), deadRows: Number(row.deadRows) }));
}

/**
 * Vacuums each table whose dead rows reach AUTOVACUUM_THRESHOLD + AUTOVACUUM_SCALE × its live rows
 * (`idle`: AUTOVACUUM_THRESHOLD alone, since nobody waits), one at a time with a pause between two.
 * Resolves with the tables vacuumed.
 */
export async function vacuumDeadRows(db: AnyDb, options: { idle?: boolean; pauseMs?: number } = {}): Promise<string[]> {
  const scale = options.idle ? 0 : AUTOVACUUM_SCALE;
  const due = (await deadRowsByTable(db)).filter((table) => table.deadRows >= AUTOVACUUM_THRESHOLD + scale * table.liveRows);
  const vacuumed: string[] = [];
  for (const { table } of due) {
    if (vacuumed.length > 0) await new Promise((resolve) => setTimeout(resolve, options.pauseMs ?? 10));
    await sql`vacuum ${sql.raw(table)}`.execute(db);
    vacuumed.push(table);
  }
  return vacuumed;
}

/** Log written since the last checkpoint that calls for the next: one 16 MB segment. */
export const CHECKPOINT_AFTER_BYTES = 16 * 1024 * 1024;
/** The longest time between two checkpoints, PostgreSQL's default checkpoint_timeout. */
export const CHECKPOINT_AFTER_MS = 5 * 60_000;

/**
 * Checkpoints when CHECKPOINT_AFTER_BYTES of log were written since the last checkpoint, or it is
 * CHECKPOINT_AFTER_MS old; the segments before it are then reused (min_wal_size of them kept).
 * Resolves whether it checkpointed.
 */
export async function checkpointIfDue(db: AnyDb): Promise<boolean> {
  const { rows } = await sql<{ bytes: number; ageMs: number }>`
    select pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::bigint as bytes, (extract(epoch from now() - checkpoint_time) * 1000)::bigint as "ageMs"
    from pg_control_checkpoint()`.execute(db);
  const { bytes, ageMs } = rows[0]!;
  if (Number(bytes) < CHECKPOINT_AFTER_BYTES && Number(ageMs) < CHECKPOINT_AFTER_MS) return false;
  await sql`checkpoint`.execute(db);
  return true;
}
