import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase, usingPostgres } from '../../../test/helpers/server.js';
import { migrateToLatest } from './migrations.js';
import { dayStart, partitionName, partitionsOf, partitionTimeTables, TIME_TABLES } from './partitions.js';

const DAY_MS = 24 * 60 * 60 * 1000;

// Partitions are made on a PostgreSQL server only; the embedded database keeps plain tables.
describe.runIf(usingPostgres)('converting the time tables of an existing database to day partitions', () => {
  let database: { url: string; drop(): Promise<void> };
  const replicas: Kysely<any>[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any
  const db = () => replicas[0]!;
  const today = dayStart(Date.now());

  beforeAll(async () => {
    database = await createPostgresDatabase();
    for (let i = 0; i < 3; i++) {
      const pool = new pg.Pool({ connectionString: database.url, max: 2 });
      // As the server's own pool does (platform/db/index.ts): a backend ended by the server is not an uncaught exception.
      pool.on('connect', (client) => client.on('error', () => {}));
      replicas.push(new Kysely({ dialect: new PostgresDialect({ pool }) }));
    }
    // A database as the version before partitions left it: migrated, plain tables holding rows.
    await migrateToLatest(db());
    await sql`insert into hook_runs (hook_name, trigger, started_at, duration_ms, outcome, console, input) values
      ('last-month', 'webHook', now() - interval '30 days', 1, 'ok', '[]', '{"n": 1}'),
      ('yesterday', 'webHook', now() - interval '1 day', 1, 'error', '[]', '{"n": 2}'),
      ('today', 'webHook', now(), 1, 'ok', '[]', '{"n": 3}')`.execute(db());
    await sql`insert into mcp_audit_logs (at, tool, arguments, outcome, duration_ms) values (now() - interval '200 days', 'old_call', '{}', 'ok', 1), (now(), 'new_call', '{}', 'ok', 1)`.execute(db());
  });
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.destroy()));
    await database?.drop();
  });

  it('converts each table once while three replicas start at the same time, keeping every row where its day belongs', async () => {
    const before = await sql<{ id: number; hook_name: string }>`select id, hook_name from hook_runs order by id`.execute(db());
    await Promise.all(replicas.map((replica) => partitionTimeTables(replica)));
    for (const { table } of TIME_TABLES) {
      const names = (await partitionsOf(db(), table)).map((partition) => partition.name);
      expect(names).toEqual([`${table}_legacy`, ...[0, 1, 2].map((days) => partitionName(table, today + days * DAY_MS)), `${table}_default`]);
    }
    const after = await sql<{ id: number; hook_name: string; relation: string }>`select id, hook_name, tableoid::regclass::text as relation from hook_runs order by id`.execute(db());
    expect(after.rows.map(({ id, hook_name }) => ({ id, hook_name }))).toEqual(before.rows);
    expect(after.rows.map((row) => row.relation)).toEqual(['hook_runs_legacy', 'hook_runs_legacy', partitionName('hook_runs', today)]);
    expect((await sql<{ tool: string }>`select tool from mcp_audit_logs order by id`.execute(db())).rows.map((row) => row.tool)).toEqual(['old_call', 'new_call']);
  });

  it('keeps the ids coming from the same sequence, the defaults and the indexes', async () => {
    const inserted = await sql<{ id: number }>`insert into hook_runs (hook_name, trigger, duration_ms, outcome, console) values ('after', 'webHook', 1, 'ok', '[]') returning id`.execute(db());
    expect(Number(inserted.rows[0]!.id)).toBe(4);
    const indexes = await sql<{ definition: string }>`select pg_get_indexdef(indexrelid) as definition from pg_index where indrelid = 'hook_runs'::regclass order by 1`.execute(db());
    expect(indexes.rows.map((row) => row.definition)).toEqual([
      'CREATE INDEX hook_runs_hook ON ONLY public.hook_runs USING btree (hook_id, started_at)',
      'CREATE INDEX hook_runs_started ON ONLY public.hook_runs USING btree (started_at)',
      'CREATE UNIQUE INDEX hook_runs_pkey ON ONLY public.hook_runs USING btree (id, started_at)',
    ]);
    // Dropping the old rows' partition leaves the sequence to the table.
    await sql`drop table hook_runs_legacy`.execute(db());
    const next = await sql<{ id: number }>`insert into hook_runs (hook_name, trigger, duration_ms, outcome, console) values ('later', 'webHook', 1, 'ok', '[]') returning id`.execute(db());
    expect(Number(next.rows[0]!.id)).toBe(5);
  });

  it('lets the migrations that come later change the table as before', async () => {
    await sql`alter table hook_runs add column probe integer`.execute(db());
    await sql`update hook_runs set probe = 1 where hook_name = 'today'`.execute(db());
    expect((await sql<{ probe: number | null }>`select probe from hook_runs where hook_name = 'today'`.execute(db())).rows).toEqual([{ probe: 1 }]);
  });
});
