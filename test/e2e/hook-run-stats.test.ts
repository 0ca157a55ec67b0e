import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retentionOf, sweepExpiredEntries } from '../../src/audit/retention.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/platform/db/index.js';
import { startServer } from '../../src/server.js';
import { TEST_ENV } from '../helpers/env.js';
import { freshDataEnv, gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';

const STATS = 'query($hookId: ID, $since: DateTime) { hookRunStats(hookId: $hookId, since: $since) { periodStart periodMs runs failures refused errors durationP50Ms durationP95Ms durationMaxMs queuedP95Ms queuedMaxMs } }';
const RUNS = 'query($hookId: ID) { hookRuns(hookId: $hookId, limit: 500) { items { outcome httpStatus input error } } }';
const CALLS = 60;

let server: TestServer;
let owner: ReturnType<typeof graphqlClient>;
let hookId: string;
const database = () => server.server.services.ctx.db;

beforeAll(async () => {
  server = await startTestServer({ TRELLIS_WEBHOOK_RATE_LIMIT: '100000', TRELLIS_RUN_LOG_SAMPLES_PER_MINUTE: '3' });
  owner = graphqlClient(server.url, await login(server.url));
  const created = await gqlData(owner, 'mutation($c: String!) { createHook(name: "counted", type: "webHook", content: $c) { _id } }', {
    c: 'async function (body) { if (body.n % 20 === 7) throw new Error("refused " + body.n); if (body.n % 20 === 8) return respond(401, { no: body.n }); return { n: body.n }; }',
  });
  hookId = created.createHook._id;
  for (let n = 0; n < CALLS; n++) await postJson(`${server.url}/api/webhook/counted`, { n });
  await server.server.services.hookRuntime.flushRunLog();
});
afterAll(async () => server?.close());

describe('hookRunStats (every run counted, through builder GraphQL)', () => {
  it('counts every call while the run log keeps the failures, a sample of successes and the latest run', async () => {
    const periods = (await gqlData(owner, STATS, { hookId })).hookRunStats;
    const total = (key: string) => periods.reduce((sum: number, period: Record<string, number>) => sum + period[key]!, 0);
    expect(total('runs')).toBe(CALLS);
    expect(total('errors')).toBe(3);
    expect(total('refused')).toBe(3);
    expect(total('failures')).toBe(6);
    expect(periods[0].periodMs).toBe(60_000);

    const runs = (await gqlData(owner, RUNS, { hookId })).hookRuns.items as { outcome: string; httpStatus: number | null; input: { n: number }; error: string | null }[];
    expect(runs.filter((run) => run.outcome === 'error').map((run) => run.error).sort()).toEqual(['refused 27', 'refused 47', 'refused 7']);
    expect(runs.filter((run) => run.outcome === 'refused').map((run) => run.httpStatus)).toEqual([401, 401, 401]);
    const successes = runs.filter((run) => run.outcome === 'ok');
    // At most 3 a minute (two minutes at most elapse), and the latest call's run always.
    expect(successes.length).toBeLessThanOrEqual(3 * periods.length + 1);
    expect(successes[0]!.input).toEqual({ n: CALLS - 1 });
  });

  it('sums the hooks when no hook is named, and reads nothing before since', async () => {
    const all = (await gqlData(owner, STATS)).hookRunStats;
    expect(all.reduce((sum: number, period: { runs: number }) => sum + period.runs, 0)).toBeGreaterThanOrEqual(CALLS);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await gqlData(owner, STATS, { since: future })).hookRunStats).toEqual([]);
  });

  it('is readable by a designer (config:read) and refuses callers without a session or with a bad since', async () => {
    await gqlData(owner, 'mutation { createUser(email: "stats-designer@example.com", password: "designer-pass", role: "designer") { _id } }');
    const designer = graphqlClient(server.url, await login(server.url, 'stats-designer@example.com', 'designer-pass'));
    const periods = (await gqlData(designer, STATS, { hookId })).hookRunStats;
    expect(periods.reduce((sum: number, period: { runs: number }) => sum + period.runs, 0)).toBe(CALLS);
    expect((await postJson(`${server.url}/graphql`, { query: STATS })).status).toBe(401);
    const bad = await owner(STATS, { since: 'yesterday' });
    expect(bad.body.errors[0].message).toMatch(/since|DateTime/);
  });
});

describe('a record a user deleted', () => {
  it('leaves no copy in the run log once the run log’s retention has passed, and none in the counts', async () => {
    await gqlData(owner, 'mutation { createTable(name: "Patients", fields: [{ name: "name", type: "text" }]) { _id } }');
    const table = (await gqlData(owner, '{ tables { _id name } }')).tables.find((entry: { name: string }) => entry.name === 'Patients')._id;
    await gqlData(owner, `mutation($c: String!) { createHook(name: "patient-check", type: "beforeSave", tableId: "${table}", content: $c) { _id } }`, {
      c: 'async function (instance) { if (instance.name.includes("refuse")) throw new Error("refused"); return instance; }',
    });
    const marker = 'Ada-Lovelace-4711';
    const saved = (await gqlData(owner, 'mutation($n: String!) { createPatients(data: { name: $n }) { _id } }', { n: marker })).createPatients._id;
    expect((await owner('mutation($n: String!) { createPatients(data: { name: $n }) { _id } }', { n: `${marker} refuse` })).body.errors).toHaveLength(1);
    await gqlData(owner, `mutation { deletePatients(Id: "${saved}") }`);
    await server.server.services.hookRuntime.flushRunLog();
    const copies = async () => (await sql<{ n: number }>`select count(*)::integer as n from hook_runs where input::text like ${`%${marker}%`} or output::text like ${`%${marker}%`}`.execute(database())).rows[0]!.n;
    // The failure and the (latest) success are kept whole, for as long as the run log is kept.
    expect(await copies()).toBe(2);
    const retention = retentionOf(server.config);
    await sweepExpiredEntries(server.server.services.ctx.database, retention, new Date(Date.now() + retention.runLogMs + 60_000));
    expect(await copies()).toBe(0);
    const counted = await sql<{ n: number }>`select count(*)::integer as n from hook_run_stats where hook_name = 'patient-check'`.execute(database());
    expect(counted.rows[0]!.n).toBeGreaterThan(0);
  });
});

describe('a server that stops', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('writes the counts of the period in progress and the latest run of each hook before it closes', async () => {
    const env = { ...TEST_ENV, TRELLIS_WEBHOOK_RATE_LIMIT: '100000', TRELLIS_RUN_LOG_SAMPLES_PER_MINUTE: '0', ...(await freshDataEnv(cleanups)) };
    const config = loadConfig(env);
    const running = await startServer(config);
    const gql = graphqlClient(running.url, await login(running.url));
    await gqlData(gql, 'mutation { createHook(name: "stopping", type: "webHook", content: "async function (body) { return body.n; }") { _id } }');
    for (let n = 0; n < 25; n++) expect((await postJson(`${running.url}/api/webhook/stopping`, { n })).status).toBe(200);
    await running.close();

    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    try {
      const stats = await sql<{ runs: number }>`select sum(runs)::integer as runs from hook_run_stats where hook_name = 'stopping'`.execute(database.db);
      expect(stats.rows[0]!.runs).toBe(25);
      const runs = await database.db.selectFrom('hook_runs').select('output').where('hook_name', '=', 'stopping').execute();
      expect(runs.map((run) => run.output)).toEqual([24]);
    } finally {
      await database.close();
    }
  });
});
