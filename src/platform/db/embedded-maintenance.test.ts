import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, usingPostgres, type TestServer } from '../../../test/helpers/server.js';
import { AUTOVACUUM_THRESHOLD, checkpointIfDue, deadRowsByTable, vacuumDeadRows } from './embedded-maintenance.js';
import type { Db } from './index.js';

let server: TestServer;
let db: Db;

async function lastVacuum(): Promise<Date | null> {
  const { rows } = await sql<{ at: Date | null }>`select last_vacuum as at from pg_stat_user_tables where relname = 'vacuum_probe'`.execute(db);
  return rows[0]!.at;
}

// What the embedded database's missing autovacuum and checkpointer would do; a server runs its own.
describe.skipIf(usingPostgres)('the maintenance of the embedded database', () => {
  beforeAll(async () => {
    server = await startTestServer();
    db = server.server.services.ctx.db;
    await sql`create table vacuum_probe (id integer primary key, note text not null)`.execute(db);
    await sql`insert into vacuum_probe select n, 'first' from generate_series(1, 1000) as n`.execute(db);
  });
  afterAll(async () => server?.close());

  it('reads the dead rows each table holds', async () => {
    await sql`update vacuum_probe set note = 'second' where id <= 400`.execute(db);
    expect((await deadRowsByTable(db)).find((table) => table.table === 'public.vacuum_probe')).toEqual({ table: 'public.vacuum_probe', liveRows: 1000, deadRows: 400 });
  });

  it('vacuums a table whose dead rows pass 50 + 20 % of its live rows, and leaves one below that alone', async () => {
    expect(await vacuumDeadRows(db)).toContain('public.vacuum_probe');
    expect(await lastVacuum()).not.toBeNull();
    expect((await deadRowsByTable(db)).find((table) => table.table === 'public.vacuum_probe')!.deadRows).toBe(0);
    await sql`update vacuum_probe set note = 'third' where id <= ${AUTOVACUUM_THRESHOLD + 100}`.execute(db);
    expect(await vacuumDeadRows(db)).not.toContain('public.vacuum_probe');
  });

  it('vacuums any table holding 50 dead rows once the database is idle', async () => {
    expect(await vacuumDeadRows(db, { idle: true })).toContain('public.vacuum_probe');
  });

  it('checkpoints once 16 MB of log were written since the last checkpoint, so that the old log segments are reused', async () => {
    const segments = () => readdirSync(join(server.config.dataDir, 'pgdata', 'pg_wal')).filter((name) => /^[0-9A-F]{24}$/.test(name)).length;
    await sql`checkpoint`.execute(db);
    expect(await checkpointIfDue(db)).toBe(false);
    await sql`create table wal_probe (id integer primary key, note text not null)`.execute(db);
    const counts: number[] = [];
    for (let round = 0; round < 5; round++) {
      await sql`insert into wal_probe select n, repeat('x', 1000) from generate_series(1, 20000) as n`.execute(db);
      await sql`delete from wal_probe`.execute(db);
      expect(await checkpointIfDue(db)).toBe(true);
      counts.push(segments());
    }
    // Each round writes more than a segment of log; without the checkpoints every round would add one or two.
    // The log's folder levels off at a few segments (here 4 of 16 MB), however much more is written.
    expect(counts[4]).toBeLessThanOrEqual(counts[1]!);
  });
});
