import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureApplication } from '../../src/access/bootstrap.js';
import { openDatabase } from '../../src/platform/db/index.js';
import { createPostgresDatabase, startTestServer, usingPostgres, type TestServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe('migrations and first-start bootstrap', () => {
  it('have created every table of the data model', async () => {
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = 'public' order by table_name`.execute(server.server.services.ctx.db);
    expect(tables.rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining([
        'app', 'users', 'roles', 'user_sessions', 'role_features', 'features', 'feature_versions', 'hooks',
        'hook_versions', 'app_tables', 'app_fields', 'menus', 'env_vars', 'mcp_api_keys', 'integration_keys',
        'access_tokens', 'audit_events', 'mcp_audit_logs', 'hook_runs', 'mail_outbox',
      ]),
    );
  });

  it.runIf(usingPostgres)('run once when several replicas start at the same time on an empty database', async () => {
    const fresh = await createPostgresDatabase();
    try {
      const replicas = await Promise.all([1, 2, 3].map(() => openDatabase({ databaseUrl: fresh.url, dataDir: server.config.dataDir })));
      const apps = await Promise.all(replicas.map((r) => ensureApplication(r.db, server.config)));
      expect(new Set(apps.map((a) => a.appId)).size).toBe(1);
      expect(apps.filter((a) => a.owner)).toHaveLength(1);
      const db = replicas[0]!.db;
      expect(await db.selectFrom('users').select('id').where('is_owner', '=', true).execute()).toHaveLength(1);
      expect(await db.selectFrom('roles').select('name').orderBy('name').execute()).toHaveLength(3);
      await Promise.all(replicas.map((r) => r.close()));
    } finally {
      await fresh.drop();
    }
  });

  it('keep exactly one application and one owner across restarts', async () => {
    const db = server.server.services.ctx.db;
    expect(await db.selectFrom('app').select('id').execute()).toHaveLength(1);
    const again = await ensureApplication(db, server.config);
    expect(again).toEqual({ appId: server.server.services.ctx.appId, appName: 'Test app' });
    expect(await db.selectFrom('users').select('id').where('is_owner', '=', true).execute()).toHaveLength(1);
  });

  // A start on an up-to-date database skips Kysely's migrator (it reads the whole catalog first);
  // anything else must still go through it.
  it('apply a migration missing from an existing database at the next open, and refuse one this version does not know', async () => {
    const { options, cleanup } = await freshDatabaseOptions();
    try {
      let database = await openDatabase(options);
      const names = (await sql<{ name: string }>`select name from trellis_migrations order by name`.execute(database.db)).rows.map((row) => row.name);
      // The migrations undone below, newest first: a migration added after them adds its undo to UNDONE.
      const undone = Object.keys(UNDONE);
      expect(names.slice(-undone.length).reverse()).toEqual(undone);
      for (const [name, statements] of Object.entries(UNDONE)) {
        for (const statement of statements) await sql.raw(statement).execute(database.db);
        await sql`delete from trellis_migrations where name = ${name}`.execute(database.db);
      }
      // What a deployment of the version before data access holds: a table, an admin role and another.
      await sql`insert into roles (id, name, permissions) values ('r-admin', 'admin', '["admin"]'), ('r-clerk', 'clerk', '["config:read"]')`.execute(database.db);
      await sql`insert into app_tables (id, name, sql_name, description, updated_at) values ('t-legacy', 'Legacy', 'legacy_records', '', now())`.execute(database.db);
      await database.close();

      database = await openDatabase(options);
      const after = await sql<{ name: string }>`select name from trellis_migrations order by name`.execute(database.db);
      expect(after.rows.map((row) => row.name)).toEqual(names);
      // The upgrade keeps the table open to every non-admin role, written out where it can be changed (D32).
      const rules = await sql<{ table_id: string; role_id: string; rules: { read: { level: string }; delete: { level: string } } }>`select table_id, role_id, rules from table_access`.execute(database.db);
      expect(rules.rows.map((row) => [row.table_id, row.role_id, row.rules.read.level, row.rules.delete.level])).toEqual([['t-legacy', 'r-clerk', 'ALL', 'ALL']]);
      // The run log's status column is back, empty for the runs stored before it.
      await sql`insert into hook_runs (hook_name, trigger, duration_ms, outcome, console) values ('legacy', 'webHook', 1, 'ok', '[]')`.execute(database.db);
      expect((await sql<{ http_status: number | null }>`select http_status from hook_runs`.execute(database.db)).rows).toEqual([{ http_status: null }]);
      // Opened again with nothing to do: nothing changes.
      await database.close();
      database = await openDatabase(options);
      expect((await sql<{ name: string }>`select name from trellis_migrations order by name`.execute(database.db)).rows.map((row) => row.name)).toEqual(names);

      // A database a newer version migrated: this one does not know its last migration.
      await sql`insert into trellis_migrations (name, timestamp) values ('9999_from_a_newer_version', now()::text)`.execute(database.db);
      await database.close();
      await expect(openDatabase(options)).rejects.toThrow(/Database migration failed/);
    } finally {
      await cleanup();
    }
  });
});

/** What undoes each migration since data access (0005), newest first: the database of the version before it. */
const UNDONE: Record<string, string[]> = {
  '0008_hook_run_stats': ['drop table hook_run_stats', 'drop index hook_runs_started'],
  '0007_field_labels': ['alter table app_fields drop column label'],
  '0006_hook_run_http_status': ['alter table hook_runs drop column http_status'],
  '0005_table_access': ['drop function trellis_access_check(boolean, text)', 'drop table table_access', 'alter table integration_keys drop column role_id'],
};

/** Options opening a new, empty database of the suite's kind (a folder, or a database of the PostgreSQL server). */
async function freshDatabaseOptions(): Promise<{ options: Parameters<typeof openDatabase>[0]; cleanup: () => Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'trellis-migrations-'));
  if (!usingPostgres) return { options: { databaseUrl: undefined, dataDir }, cleanup: () => rm(dataDir, { recursive: true, force: true }) };
  const fresh = await createPostgresDatabase();
  return {
    options: { databaseUrl: fresh.url, dataDir },
    cleanup: async () => {
      await fresh.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

