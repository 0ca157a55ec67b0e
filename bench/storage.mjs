/* global fetch, performance */
// The storage benchmark: bytes the database grows per hooked save at steady state, beyond the
// records' own table, on the embedded database and on PostgreSQL. A table of 5 fields with a
// beforeSave and an afterSave hook; saves are updates rotating over 1000 records.
import { setTimeout as sleep } from 'node:timers/promises';
import { OWNER_EMAIL, POSTGRES_ADMIN_URL, startTrellis } from './lib/trellis.mjs';

const TARGET_BYTES = 10;
const RECORDS = 1000;
const SAVES = Number(process.env.BENCH_STORAGE_SAVES ?? 10_000);
const CONCURRENCY = 16;
/** A short aggregate period, so that steady state (every hook past its first period) comes in seconds. */
const PERIOD_MS = 5000;
const TABLE = 'BenchStored';
const FIELDS = [
  { name: 'total', type: 'number' },
  { name: 'quantity', type: 'number' },
  { name: 'note', type: 'text' },
  { name: 'status', type: 'text' },
  { name: 'ref', type: 'text' },
];
const BEFORE_SAVE = "async function (instance) { if (instance.total < 0) throw new Error('total must not be negative'); }";
const AFTER_SAVE = 'async function (instance) { console.log(instance.ref); }';

/**
 * `storage: embedded 1.2 B, PostgreSQL 0.9 B per hooked save (...)`: the growth of every table but
 * the records' own (the run log, its aggregates and the rest, with indexes and TOAST) over SAVES
 * saves made after the first aggregate period, divided by SAVES. The period is 3 s here (a minute by
 * default), and the sample budget scales with it (5 a minute makes 1 per 5 s period, so 12 a
 * minute, and a latest run of each hook every 5 s): a pessimistic reading of the default.
 */
export const storage = {
  name: 'storage',
  async run() {
    const embedded = await bytesPerSave(await startTrellis({ env: serverEnv() }));
    const postgres = await bytesPerSave(await startTrellis({ env: serverEnv(), postgresAdminUrl: POSTGRES_ADMIN_URL }));
    const worst = Math.max(embedded.bytesPerSave, postgres.bytesPerSave);
    const line = `embedded ${describe(embedded)}; PostgreSQL ${describe(postgres)}; ${SAVES} saves after the first ${PERIOD_MS / 1000} s aggregate period`;
    return { line: worst > TARGET_BYTES ? `${line}; above target ${TARGET_BYTES} B` : line };
  },
};

function serverEnv() {
  return { TRELLIS_RUN_STATS_PERIOD_MS: String(PERIOD_MS) };
}

function describe(result) {
  const runLog = `run log +${formatKb(result.grownBytes.hook_runs ?? 0)}, aggregates +${formatKb(result.grownBytes.hook_run_stats ?? 0)}`;
  return `${result.bytesPerSave.toFixed(2)} B per hooked save (${runLog}, records' table +${formatKb(result.recordsGrownBytes)} not counted; ${Math.round(result.savesPerSecond)} saves/s)`;
}

function formatKb(bytes) {
  return `${(bytes / 1024).toFixed(0)} kB`;
}

async function bytesPerSave(server) {
  const key = await server.createMcpKey(['config:read', 'tables:write', 'hooks:write']);
  const { entity } = await server.callTool(key, 'create_table', { name: TABLE, description: 'Storage benchmark', fields: FIELDS });
  await server.callTool(key, 'create_hook', { name: 'bench-stored-before', type: 'beforeSave', tableId: entity._id, content: BEFORE_SAVE });
  await server.callTool(key, 'create_hook', { name: 'bench-stored-after', type: 'afterSave', tableId: entity._id, content: AFTER_SAVE });
  const records = graphqlOf(server.url, await server.createAccessToken('bench storage'));
  const owner = graphqlOf(server.url, await ownerToken(server));
  const ids = await seed(records);
  // Past the first period, each hook has had its first samples and its first aggregate row.
  await saveFor(records, ids, PERIOD_MS * 1.2);
  await sleep(PERIOD_MS + 1500);
  const before = await sizes(owner);
  const started = performance.now();
  await saveTimes(records, ids, SAVES);
  const seconds = (performance.now() - started) / 1000;
  // The last period ends and is written (with the latest run of each hook).
  await sleep(PERIOD_MS + 1500);
  const after = await sizes(owner);
  const grownBytes = {};
  for (const [name, bytes] of Object.entries(after.tables)) grownBytes[name] = bytes - (before.tables[name] ?? 0);
  const grown = Object.entries(grownBytes).reduce((sum, [name, bytes]) => (name === after.records ? sum : sum + bytes), 0);
  await server.stop();
  return { bytesPerSave: grown / SAVES, grownBytes, recordsGrownBytes: grownBytes[after.records] ?? 0, savesPerSecond: SAVES / seconds };
}

/** Total bytes of each table (indexes and TOAST included), from storageStats; `records` names the benchmark's table. */
async function sizes(owner) {
  const { storageStats } = await owner('{ storageStats { tables { name label totalBytes } } }');
  const tables = Object.fromEntries(storageStats.tables.map((table) => [table.name, table.totalBytes]));
  return { tables, records: storageStats.tables.find((table) => table.label === TABLE).name };
}

async function seed(gql) {
  const create = `mutation($data: ${TABLE}Input!) { create${TABLE}(data: $data) { _id } }`;
  const ids = [];
  await inParallel(RECORDS, async (n) => {
    const data = await gql(create, { data: { total: n, quantity: n % 7, note: `record ${n}`, status: 'open', ref: `R-${n}` } });
    ids.push(data[`create${TABLE}`]._id);
  });
  return ids;
}

const UPDATE = `mutation($id: ID!, $data: ${TABLE}Input) { update${TABLE}(Id: $id, data: $data) { _id } }`;

async function saveTimes(gql, ids, count) {
  await inParallel(count, (n) => gql(UPDATE, { id: ids[n % ids.length], data: { total: n + 0.5, note: `save ${n}` } }));
}

async function saveFor(gql, ids, ms) {
  const until = performance.now() + ms;
  let n = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const i = n++;
        await gql(UPDATE, { id: ids[i % ids.length], data: { total: i + 0.25 } });
      }
    }),
  );
}

/** Runs `task(0)` … `task(count - 1)` with CONCURRENCY at a time. */
async function inParallel(count, task) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

async function ownerToken(server) {
  const response = await fetch(`${server.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: OWNER_EMAIL, password: server.env.TRELLIS_ADMIN_PASSWORD }) });
  const answer = await response.json();
  if (response.status !== 200) throw new Error(`login answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer.token;
}

function graphqlOf(url, token) {
  return async (query, variables = {}) => {
    const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
    const answer = await response.json();
    if (response.status !== 200 || answer.errors) throw new Error(`/graphql answered ${response.status}: ${JSON.stringify(answer).slice(0, 500)}`);
    return answer.data;
  };
}
