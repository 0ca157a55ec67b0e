import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { writeMcpAuditEntry, type McpAuditEntry } from '../../src/audit/mcp-log.js';
import { startRetention, sweepExpiredEntries } from '../../src/audit/retention.js';
import type { PlatformContext } from '../../src/platform/context.js';
import { runTrellis } from '../helpers/process.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, usingPostgres, type TestServer } from '../helpers/server.js';

const ENTRY_FIELDS = '_id at keyId keyName keyPrefix userId userEmail tool arguments outcome error durationMs codeSha256 requestId';
const LIST = `query($tool: String, $keyId: ID, $userId: ID, $outcome: AuditOutcome, $since: DateTime, $until: DateTime, $limit: Int, $before: ID) {
  mcpAuditLogs(tool: $tool, keyId: $keyId, userId: $userId, outcome: $outcome, since: $since, until: $until, limit: $limit, before: $before) {
    items { ${ENTRY_FIELDS} }
    nextCursor
  }
}`;

const MCP_KEY = `trellis_${'Q'.repeat(43)}`;
const ENV_SECRET = 'sk_live_never_in_the_log';
const HOOK_CODE = `// uses ${MCP_KEY}\n${'export default function run(instance) { return instance; }\n'.repeat(60)}`;
const HOOK_SHA = createHash('sha256').update(HOOK_CODE).digest('hex');
const DAY_MS = 24 * 60 * 60 * 1000;

/** Seeded in this order, so ids grow down the list; the first is moved 400 days back. */
const SEED: McpAuditEntry[] = [
  { keyId: 'key-1', userId: 'user-1', tool: 'list_features', arguments: {}, outcome: 'ok', error: null, durationMs: 3, codeSha256: null },
  {
    keyId: 'key-1',
    userId: 'user-1',
    tool: 'set_environment_variable',
    arguments: { name: 'STRIPE_KEY', value: ENV_SECRET },
    outcome: 'ok',
    error: null,
    durationMs: 12,
    codeSha256: null,
  },
  {
    keyId: 'key-2',
    userId: 'user-2',
    tool: 'create_hook',
    arguments: { name: 'stamp', type: 'beforeSave', code: HOOK_CODE },
    outcome: 'ok',
    error: null,
    durationMs: 40.6,
    codeSha256: HOOK_SHA,
  },
  {
    keyId: 'key-2',
    userId: 'user-1',
    tool: 'delete_feature',
    arguments: { _id: 'f1', confirm: true },
    outcome: 'denied',
    error: "This tool needs the 'config:delete' scope",
    durationMs: 1,
    codeSha256: null,
  },
  {
    keyId: 'key-1',
    userId: 'user-2',
    tool: 'edit_feature_code',
    arguments: { _id: 'f2', old_str: 'a', new_str: 'b' },
    outcome: 'error',
    error: 'old_str does not match the current code',
    durationMs: 7,
    codeSha256: null,
  },
];
const NEWEST_FIRST = ['edit_feature_code', 'delete_feature', 'create_hook', 'set_environment_variable', 'list_features'];

let server: TestServer;
let ownerGql: ReturnType<typeof graphqlClient>;
let designerGql: ReturnType<typeof graphqlClient>;
let oldEntryId: string;

const db = () => server.server.services.ctx.db;

async function list(variables: Record<string, unknown> = {}) {
  return (await gqlData(ownerGql, LIST, variables)).mcpAuditLogs as { items: Record<string, unknown>[]; nextCursor: string | null };
}

async function auditRowCount(): Promise<number> {
  const row = await db().selectFrom('mcp_audit_logs').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
  await gqlData(ownerGql, 'mutation { createUser(email: "audit-designer@example.com", password: "designer-pass", role: "designer") { _id } }');
  designerGql = graphqlClient(server.url, await login(server.url, 'audit-designer@example.com', 'designer-pass'));
  for (const entry of SEED) await writeMcpAuditEntry(db(), entry);
  const oldest = await db().selectFrom('mcp_audit_logs').select('id').orderBy('id', 'asc').executeTakeFirstOrThrow();
  oldEntryId = String(oldest.id);
  await sql`update mcp_audit_logs set at = now() - interval '400 days' where id = ${oldEntryId}`.execute(db());
});
afterAll(async () => server?.close());

describe('mcpAuditLogs', () => {
  it('lists every entry newest first with the fields the MCP server wrote', async () => {
    const page = await list();
    expect(page.items.map((entry) => entry.tool)).toEqual(NEWEST_FIRST);
    expect(page.nextCursor).toBeNull();
    expect(page.items[1]).toMatchObject({
      keyId: 'key-2',
      userId: 'user-1',
      outcome: 'denied',
      error: "This tool needs the 'config:delete' scope",
      durationMs: 1,
      codeSha256: null,
      arguments: { _id: 'f1', confirm: true },
    });
    expect(Date.parse(page.items[0]!.at as string)).toBeGreaterThan(Date.now() - 60_000);
    expect(page.items[4]!.at).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);
  });

  it('shows the name of an environment variable but never its value, in the answer or the database', async () => {
    const [entry] = (await list({ tool: 'set_environment_variable' })).items;
    expect(entry!.arguments).toEqual({ name: 'STRIPE_KEY', value: '[redacted]' });
    const stored = await sql<{ text: string }>`select string_agg(arguments::text, ' ') as text from mcp_audit_logs`.execute(db());
    expect(stored.rows[0]!.text).not.toContain(ENV_SECRET);
    expect(stored.rows[0]!.text).not.toContain(MCP_KEY.slice(8));
  });

  it('stores long hook code as a preview with its SHA-256, and carries the hash of the persisted code', async () => {
    const [entry] = (await list({ tool: 'create_hook' })).items;
    expect(entry).toMatchObject({ codeSha256: HOOK_SHA, durationMs: 41 });
    expect(entry!.arguments).toEqual({
      name: 'stamp',
      type: 'beforeSave',
      code: { preview: expect.stringMatching(/^\/\/ uses \[redacted-key\]\n/), sha256: HOOK_SHA, bytes: Buffer.byteLength(HOOK_CODE) },
    });
    expect((entry!.arguments as { code: { preview: string } }).code.preview.length).toBeLessThanOrEqual(512);
  });

  it.each([
    ['tool', () => ({ tool: 'create_hook' }), ['create_hook']],
    ['keyId', () => ({ keyId: 'key-2' }), ['delete_feature', 'create_hook']],
    ['userId', () => ({ userId: 'user-2' }), ['edit_feature_code', 'create_hook']],
    ['outcome', () => ({ outcome: 'denied' }), ['delete_feature']],
    ['since (inclusive)', () => ({ since: new Date(Date.now() - DAY_MS).toISOString() }), NEWEST_FIRST.slice(0, 4)],
    ['until (exclusive)', () => ({ until: new Date(Date.now() - DAY_MS).toISOString() }), ['list_features']],
    ['keyId and userId together', () => ({ keyId: 'key-1', userId: 'user-1' }), ['set_environment_variable', 'list_features']],
    ['a tool no call used', () => ({ tool: 'delete_hook' }), []],
  ])('filters by %s', async (_case, variables, tools) => {
    const page = await list(variables());
    expect(page.items.map((entry) => entry.tool)).toEqual(tools);
  });

  it('pages with limit and the before cursor, in order, without gaps or repeats', async () => {
    const all = (await list()).items;
    const first = await list({ limit: 2 });
    expect(first.items).toEqual(all.slice(0, 2));
    expect(first.nextCursor).toBe(all[1]!._id);
    const second = await list({ limit: 2, before: first.nextCursor });
    expect(second.items).toEqual(all.slice(2, 4));
    const third = await list({ limit: 2, before: second.nextCursor });
    expect(third.items).toEqual(all.slice(4));
    expect(third.nextCursor).toBeNull();
  });

  it('keeps answering the deprecated entries list, the same as items', async () => {
    const { mcpAuditLogs } = await gqlData(ownerGql, '{ mcpAuditLogs(limit: 3) { items { _id } entries { _id } } }');
    expect(mcpAuditLogs.items).toHaveLength(3);
    expect(mcpAuditLogs.entries).toEqual(mcpAuditLogs.items);
  });

  it('applies filters on every page', async () => {
    const first = await list({ keyId: 'key-1', limit: 1 });
    const second = await list({ keyId: 'key-1', limit: 1, before: first.nextCursor });
    expect([...first.items, ...second.items].map((entry) => entry.tool)).toEqual(['edit_feature_code', 'set_environment_variable']);
  });

  it.each([
    ['limit 0', { limit: 0 }, 'limit: must be a whole number from 1 to 500'],
    ['limit 501', { limit: 501 }, 'limit: must be at most 500'],
    ['an unknown outcome', { outcome: 'maybe' }, 'Variable "$outcome" got invalid value "maybe"; AuditOutcome must be one of ok, error, denied'],
    ['a since that is not a date', { since: 'yesterday' }, 'since: must be an ISO-8601 date and time'],
    ['a cursor that is not one', { before: 'abc' }, 'before: must be the nextCursor of a previous page'],
  ])('refuses %s with BAD_INPUT naming the argument', async (_case, variables, message) => {
    const result = await ownerGql(LIST, variables);
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'BAD_INPUT', status: 400 });
    expect(result.body.errors[0].message).toBe(message);
  });

  it('is refused to a user who is not an admin', async () => {
    const result = await designerGql(LIST);
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(result.body.data).toBeNull();
  });

  it('is refused without a session', async () => {
    const result = await postJson(`${server.url}/graphql`, { query: LIST });
    expect(result.status).toBe(401);
    expect(JSON.stringify(result.body)).not.toContain('set_environment_variable');
  });
});

describe(`trellis audit list ${usingPostgres ? 'on the PostgreSQL database' : 'through the running server'}`, () => {
  it('prints with --json the page GraphQL returns', async () => {
    const run = await runTrellis(['audit', 'list', '--json'], server.env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(await list());
  });

  it('passes the filters and the limit', async () => {
    const run = await runTrellis(['audit', 'list', '--key', 'key-1', '--user', 'user-2', '--outcome', 'error', '--tool', 'edit_feature_code', '--limit', '1', '--json'], server.env);
    expect(run.code).toBe(0);
    const page = JSON.parse(run.stdout);
    expect(page.items.map((entry: { tool: string }) => entry.tool)).toEqual(['edit_feature_code']);
    expect(page.nextCursor).toBeNull();
  });

  it('prints one line per entry: time, outcome, tool, key, user and duration', async () => {
    const run = await runTrellis(['audit', 'list', '--key', 'key-2'], server.env);
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\S+Z {2}denied {2}delete_feature {2}key=key-2 {2}user=user-1 {2}1ms$/);
    expect(lines[1]).toMatch(/ok {6}create_hook {2}key=key-2 {2}user=user-2 {2}41ms$/);
  });

  it('prints how to read the next page when there is one', async () => {
    const run = await runTrellis(['audit', 'list', '--limit', '2'], server.env);
    const all = (await list()).items;
    expect(run.stdout.trim().split('\n').at(-1)).toBe(`More entries: --before ${all[1]!._id}`);
  });

  it('exits with 1 and a clear message for an unknown outcome', async () => {
    const run = await runTrellis(['audit', 'list', '--outcome', 'maybe'], server.env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Error: outcome: must be one of ok, error, denied');
  });
});

describe('audit retention', () => {
  /** The audit's year (the default), and a year for the run log too. */
  const A_YEAR = { runLogMs: 365 * DAY_MS, runStatsMs: 365 * DAY_MS, auditMs: 365 * DAY_MS };
  const database = () => server.server.services.ctx.database;

  async function insertHookRun(name: string, daysAgo: number) {
    await sql`insert into hook_runs (hook_name, trigger, started_at, duration_ms, outcome, console)
      values (${name}, 'webhook', now() - make_interval(days => ${daysAgo}), 1, 'ok', '[]'::jsonb)`.execute(db());
  }

  it('deletes audit entries and hook runs older than a year and keeps the recent ones', async () => {
    await insertHookRun('ancient', 366);
    await insertHookRun('recent', 364);
    const before = await auditRowCount();
    expect(await sweepExpiredEntries(database(), A_YEAR)).toMatchObject({ mcpAuditLogs: 1, hookRuns: 1 });
    expect(await auditRowCount()).toBe(before - 1);
    const ids = (await db().selectFrom('mcp_audit_logs').select('id').execute()).map((row) => String(row.id));
    expect(ids).not.toContain(oldEntryId);
    expect((await list()).items.map((entry) => entry.tool)).toEqual(NEWEST_FIRST.slice(0, 4));
    const runs = await db().selectFrom('hook_runs').select('hook_name').execute();
    expect(runs.map((run) => run.hook_name)).toEqual(['recent']);
  });

  it('deletes nothing when nothing has expired', async () => {
    expect(await sweepExpiredEntries(database(), A_YEAR)).toMatchObject({ mcpAuditLogs: 0, hookRuns: 0 });
  });

  it('sweeps a minute after the server starts and logs how many entries it deleted', async () => {
    await insertHookRun('expired', 400);
    const info = vi.fn();
    const config = { retentionSweepIntervalMs: DAY_MS, runLogRetentionMs: A_YEAR.runLogMs, runStatsRetentionMs: A_YEAR.runStatsMs, auditRetentionMs: A_YEAR.auditMs };
    const ctx = { db: db(), database: database(), config, logger: { info, warn: vi.fn() } } as unknown as PlatformContext;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const retention = startRetention(ctx);
    try {
      vi.advanceTimersByTime(59_000);
      expect(info).not.toHaveBeenCalled();
      vi.advanceTimersByTime(1_000);
    } finally {
      vi.useRealTimers();
    }
    await vi.waitFor(() => expect(info).toHaveBeenCalledWith(expect.objectContaining({ mcpAuditLogs: 0, hookRuns: 1 }), 'retention sweep deleted expired entries'));
    retention.stop();
    expect(await db().selectFrom('hook_runs').select('hook_name').execute()).toEqual([{ hook_name: 'recent' }]);
  });
});
