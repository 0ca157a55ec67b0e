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
});
