#!/usr/bin/env node
/* global fetch, performance */
// A soak run (not in CI): hooked saves at a constant rate for SOAK_MINUTES (20) on a server whose
// run log, aggregates and audit are kept only SOAK_RETENTION (5m), printing every minute the size
// of the data folder (embedded) or of the database (PostgreSQL); at the end, the size at the last
// minute against the middle one. With retention working and the space reused, the two are within
// 10 %: the folder levels off instead of growing for good.
//
//   node scripts/soak.mjs                      # embedded database, 20 minutes
//   SOAK_DATABASE=postgres node scripts/soak.mjs
//   SOAK_MINUTES=6 SOAK_RETENTION=2m SOAK_RATE=200 node scripts/soak.mjs
//
// One save in SOAK_FAILING (20) is refused by the beforeSave hook: every failure is kept, so the run
// log has rows for retention to delete.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanup } from '../bench/lib/processes.mjs';
import { OWNER_EMAIL, POSTGRES_ADMIN_URL, startTrellis } from '../bench/lib/trellis.mjs';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 20);
const RATE = Number(process.env.SOAK_RATE ?? 100);
const RETENTION = process.env.SOAK_RETENTION ?? '5m';
const FAILING = Number(process.env.SOAK_FAILING ?? 20);
const POSTGRES = process.env.SOAK_DATABASE === 'postgres';
const RECORDS = 1000;
const TABLE = 'SoakOrders';

process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));

try {
  await soak();
} finally {
  await cleanup();
}

async function soak() {
  const server = await startTrellis({
    env: {
      TRELLIS_RUN_LOG_RETENTION: RETENTION,
      TRELLIS_RUN_STATS_RETENTION: RETENTION,
      TRELLIS_AUDIT_RETENTION: RETENTION,
      TRELLIS_RETENTION_SWEEP_INTERVAL: '1m',
    },
    postgresAdminUrl: POSTGRES ? POSTGRES_ADMIN_URL : undefined,
  });
  const key = await server.createMcpKey(['config:read', 'tables:write', 'hooks:write']);
  const { entity } = await server.callTool(key, 'create_table', {
    name: TABLE,
    description: 'Soak',
    fields: [
      { name: 'total', type: 'number' },
      { name: 'note', type: 'text' },
    ],
  });
  await server.callTool(key, 'create_hook', { name: 'soak-before', type: 'beforeSave', tableId: entity._id, content: "async function (instance) { if (instance.total < 0) throw new Error('refused ' + instance.note); }" });
  await server.callTool(key, 'create_hook', { name: 'soak-after', type: 'afterSave', tableId: entity._id, content: 'async function (instance) { console.log(instance.note); }' });
  const records = graphqlOf(server.url, await server.createAccessToken('soak'));
  const owner = graphqlOf(server.url, await login(server));
  const ids = [];
  for (let n = 0; n < RECORDS; n++) ids.push((await records(`mutation($d: ${TABLE}Input!) { create${TABLE}(data: $d) { _id } }`, { d: { total: n, note: `order ${n}` } })).data[`create${TABLE}`]._id);
  console.log(`soak: ${POSTGRES ? 'PostgreSQL' : 'embedded'}, ${RATE} hooked saves/s for ${MINUTES} min, 1 in ${FAILING} refused, retention ${RETENTION}`);

  const sizes = [];
  const started = performance.now();
  const outcomes = { saved: 0, refused: 0, failed: 0 };
  const saving = saveAtRate(records, ids, started + MINUTES * 60_000, outcomes);
  for (let minute = 1; minute <= MINUTES; minute++) {
    await sleep(Math.max(0, started + minute * 60_000 - performance.now()));
    const size = await measure(server, owner);
    sizes.push(size);
    console.log(`minute ${String(minute).padStart(2)}: ${describe(size)}; ${outcomes.saved} saved, ${outcomes.refused} refused, ${outcomes.failed} failed`);
  }
  await saving;
  const middle = sizes[Math.floor(MINUTES / 2) - 1];
  const last = sizes.at(-1);
  const change = (last.bytes / middle.bytes - 1) * 100;
  console.log(`minute ${Math.floor(MINUTES / 2)}: ${describe(middle)}`);
  console.log(`minute ${MINUTES}: ${describe(last)}`);
  console.log(`change: ${change >= 0 ? '+' : ''}${change.toFixed(1)} % (${Math.abs(change) <= 10 ? 'within' : 'NOT within'} 10 %)`);
  for (const [reason, count] of outcomes.reasons ?? []) console.log(`failed ${count}×: ${reason}`);
}

/** Updates records at RATE a second (constant arrival times) until `until`; one in FAILING is refused by the hook. */
async function saveAtRate(records, ids, until, outcomes) {
  const update = `mutation($id: ID!, $d: ${TABLE}Input) { update${TABLE}(Id: $id, data: $d) { _id } }`;
  const pending = new Set();
  const begin = performance.now();
  for (let n = 0; ; n++) {
    const due = begin + (n * 1000) / RATE;
    if (due >= until) break;
    if (due > performance.now()) await sleep(due - performance.now());
    const refused = n % FAILING === 0;
    const save = records(update, { id: ids[n % ids.length], d: { total: refused ? -1 : n, note: `save ${n} ${'x'.repeat(200)}` } })
      .then((answer) => {
        if (!answer.errors) outcomes.saved++;
        else if (refused) outcomes.refused++;
        else failed(outcomes, answer.errors[0]?.message);
      })
      .catch((error) => failed(outcomes, error.message))
      .finally(() => pending.delete(save));
    pending.add(save);
  }
  await Promise.all(pending);
}

/** Counts a save that failed although it should have passed, and keeps the first few reasons. */
function failed(outcomes, message) {
  outcomes.failed++;
  outcomes.reasons ??= new Map();
  outcomes.reasons.set(message, (outcomes.reasons.get(message) ?? 0) + 1);
}

async function measure(server, owner) {
  const { storageStats } = (await owner('{ storageStats { databaseBytes dataFolderBytes runLog { rows } } }')).data;
  const folder = POSTGRES ? null : await folderBytes(server.env.TRELLIS_DATA_DIR);
  return { bytes: folder ?? storageStats.databaseBytes, databaseBytes: storageStats.databaseBytes, runLogRows: storageStats.runLog.rows };
}

function describe(size) {
  const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${POSTGRES ? 'database' : 'data folder'} ${mb(size.bytes)}${POSTGRES ? '' : ` (database ${mb(size.databaseBytes)})`}, run log ${size.runLogRows} rows`;
}

async function login(server) {
  const response = await fetch(`${server.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: OWNER_EMAIL, password: server.env.TRELLIS_ADMIN_PASSWORD }) });
  return (await response.json()).token;
}

function graphqlOf(url, token) {
  return async (query, variables = {}) => {
    const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
    return response.json();
  };
}

/** The bytes of the files under `folder` (files removed meanwhile count for nothing). */
async function folderBytes(folder) {
  let total = 0;
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) total += await folderBytes(path);
    else if (entry.isFile()) total += await stat(path).then((info) => info.size, () => 0);
  }
  return total;
}
