import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retentionOf, sweepExpiredEntries } from '../../src/audit/retention.js';
import { runTrellis } from '../helpers/process.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, usingPostgres, type TestServer } from '../helpers/server.js';

const STATS = `{ storageStats {
  database databaseBytes dataFolderBytes
  tables { name label rows deadRows tableBytes indexBytes totalBytes partitions lastVacuum lastAutovacuum }
  indexes { name table bytes }
  runLog { rows oldest retention failures samplesPerMinute }
  runStats { rows oldest retention periodMs }
  mcpAudit { rows oldest retention }
} }`;

interface TableRow {
  name: string;
  label: string | null;
  rows: number;
  deadRows: number;
  tableBytes: number;
  indexBytes: number;
  totalBytes: number;
  partitions: number;
  lastVacuum: string | null;
}

let server: TestServer;
let owner: ReturnType<typeof graphqlClient>;

beforeAll(async () => {
  server = await startTestServer({ TRELLIS_WEBHOOK_RATE_LIMIT: '100000' });
  owner = graphqlClient(server.url, await login(server.url));
  await gqlData(owner, 'mutation { createTable(name: "Shipments", fields: [{ name: "ref", type: "text" }]) { _id } }');
  for (let n = 0; n < 20; n++) await gqlData(owner, 'mutation($r: String!) { createShipments(data: { ref: $r }) { _id } }', { r: `ship-${n}` });
  await gqlData(owner, 'mutation { createHook(name: "stored-hook", type: "webHook", content: "async function (body) { if (body.fail) throw new Error(\\"no\\"); return 1; }") { _id } }');
  for (const fail of [false, true, false]) await postJson(`${server.url}/api/webhook/stored-hook`, { fail });
  await server.server.services.hookRuntime.flushRunLog();
});
afterAll(async () => server?.close());

const table = (tables: TableRow[], name: string) => tables.find((entry) => entry.name === name)!;

describe('storageStats (admins, through builder GraphQL)', () => {
  it('gives the size of each table and index, its rows, and what the run log and the audit keep', async () => {
    const stats = (await gqlData(owner, STATS)).storageStats;
    expect(stats.database).toBe(usingPostgres ? 'postgres' : 'embedded');
    expect(stats.databaseBytes).toBeGreaterThan(1_000_000);
    if (usingPostgres) expect(stats.dataFolderBytes).toBeNull();
    else expect(stats.dataFolderBytes).toBeGreaterThan(stats.databaseBytes);

    const shipments = stats.tables.find((entry: TableRow) => entry.label === 'Shipments');
    expect(shipments.partitions).toBe(1);
    // An estimate from the statistics: the embedded database's are current; a server's other connections publish theirs within seconds.
    if (usingPostgres) expect(shipments.rows).toBeLessThanOrEqual(20);
    else expect(shipments.rows).toBe(20);
    expect(shipments.totalBytes).toBe(shipments.tableBytes + shipments.indexBytes);
    expect(stats.indexes.some((index: { table: string; bytes: number }) => index.table === shipments.name && index.bytes > 0)).toBe(true);

    const runs = table(stats.tables, 'hook_runs');
    expect(runs.totalBytes).toBeGreaterThan(0);
    // On PostgreSQL the run log is partitioned by day: its partitions are summed into one line.
    if (usingPostgres) expect(runs.partitions).toBeGreaterThanOrEqual(4);
    expect(stats.runLog).toMatchObject({ rows: 3, failures: 1, retention: '30d', samplesPerMinute: 5 });
    expect(stats.runStats).toMatchObject({ rows: 1, retention: '90d', periodMs: 60_000 });
    expect(stats.mcpAudit.retention).toBe('365d');
  });

  it('shows the dead rows of a table and its last vacuum once a sweep has deleted and vacuumed', async () => {
    const retention = retentionOf(server.config);
    await sweepExpiredEntries(server.server.services.ctx.database, retention, new Date(Date.now() + retention.runLogMs + 60_000));
    // A month later the owner's session has expired too, and the sweep deleted it: sign in again.
    owner = graphqlClient(server.url, await login(server.url));
    const stats = (await gqlData(owner, STATS)).storageStats;
    expect(stats.runLog.rows).toBe(0);
    expect(table(stats.tables, 'hook_runs').lastVacuum).not.toBeNull();
    // PGlite's statistics are flushed before they are read; PostgreSQL's collector reports a moment
    // later and the server keeps writing meanwhile, so there only the count's presence is certain.
    if (usingPostgres) expect(Number.isInteger(table(stats.tables, 'hook_runs').deadRows)).toBe(true);
    else expect(table(stats.tables, 'hook_runs').deadRows).toBe(0);
  });

  it('refuses a user who is not an admin', async () => {
    await gqlData(owner, 'mutation { createUser(email: "storage-designer@example.com", password: "designer-pass", role: "designer") { _id } }');
    const designer = graphqlClient(server.url, await login(server.url, 'storage-designer@example.com', 'designer-pass'));
    const refused = await designer(STATS);
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe(`trellis db stats ${usingPostgres ? 'on the PostgreSQL database' : 'through the running server'}`, () => {
  it('prints the database, the logs with their retention, then a line per table and per index', async () => {
    const run = await runTrellis(['db', 'stats'], server.env);
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(usingPostgres ? /^Database: PostgreSQL, [\d.]+ MB$/ : /^Database: embedded \(PGlite\), [\d.]+ MB; data folder [\d.]+ MB$/);
    expect(lines[1]).toMatch(/^Run log: \d+ runs kept \(\d+ failed\), oldest .*, kept 30d; every failure kept, successes sampled 5 per hook per minute$/);
    expect(lines[3]).toMatch(/^MCP audit: \d+ entries, oldest .*, kept 365d$/);
    expect(lines).toContainEqual(expect.stringMatching(/^Table +Rows \(est\.\) +Dead rows +Data +Indexes +Total +Last vacuum +Last autovacuum$/));
    expect(lines).toContainEqual(expect.stringMatching(/^Shipments \(\w+\) +\d+ +\d+ +[\d.]+ kB /));
    expect(lines).toContainEqual(expect.stringMatching(/^Index +Table +Size$/));
  });

  it('prints with --json what GraphQL answers', async () => {
    const run = await runTrellis(['db', 'stats', '--json'], server.env);
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout);
    const answered = (await gqlData(owner, STATS)).storageStats;
    expect(Object.keys(printed).sort()).toEqual(Object.keys(answered).sort());
    expect(printed.tables.map((entry: TableRow) => entry.name).sort()).toEqual(answered.tables.map((entry: TableRow) => entry.name).sort());
  });
});
