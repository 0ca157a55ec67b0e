/* global fetch */
// The record benchmarks, on PostgreSQL: generated GraphQL updates against the same UPDATE through
// `pg`, and saves with a `beforeSave` hook against saves without one.
import { setTimeout as sleep } from 'node:timers/promises';
import { URL, fileURLToPath } from 'node:url';
import pg from 'pg';
import { accessToken, builderKey, postgresTrellis } from './lib/fixtures.mjs';
import { describeOpenLoop, measure, measureAlternately, measureOpenLoop } from './lib/load.mjs';
import { startNode } from './lib/processes.mjs';

const RECORD_COUNT = 1000;
const SEED_CONCURRENCY = 16;
const PG_UPDATE = fileURLToPath(new URL('./servers/pg-update.mjs', import.meta.url));
const FIELDS = [
  { name: 'total', type: 'number' },
  { name: 'note', type: 'text' },
];
/** The trivial `beforeSave` hook of `save-hook`: it reads the instance and lets the save through. */
const BEFORE_SAVE = "async function (instance) { if (instance.total < 0) throw new Error('total must not be negative'); }";

/** `update<Table>(Id, data)` through POST /graphql with an access token vs one UPDATE through a pg Pool behind node:http. */
export const graphqlUpdate = {
  name: 'graphql-update',
  target: 0.5,
  async run() {
    const server = await postgresTrellis();
    const table = await benchTable(server, 'BenchOrder');
    const headers = await graphqlHeaders(server);
    const ids = await seed(server, headers, table.name);
    const ours = updateBodies(table.name, ids);
    await checkedGraphql(server, headers, ours[0]);

    const bare = await startNode([PG_UPDATE], { env: { BENCH_DATABASE: server.env.TRELLIS_DATABASE_URL, BENCH_SQL_TABLE: table.sqlName }, label: 'pg UPDATE server' });
    let baseline;
    try {
      const bodies = ids.map((_id, i) => JSON.stringify({ _id, total: i + 0.5 }));
      const response = await fetch(bare.match, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies[0] });
      const answer = await response.text();
      if (response.status !== 200 || JSON.parse(answer).data.update._id !== ids[0]) throw new Error(`the pg UPDATE server answered ${response.status}: ${answer}`);
      baseline = await measure(bare.match, { headers: { 'content-type': 'application/json' }, bodies });
    } finally {
      await bare.stop();
    }
    return { ours: await measure(`${server.url}/graphql`, { headers, bodies: ours }), baseline };
  },
};

/** `update<Table>` of a table with a trivial `beforeSave` hook vs the same on an identical table without hooks. */
export const saveHook = {
  name: 'save-hook',
  target: 0.7,
  async run() {
    const server = await postgresTrellis();
    const headers = await graphqlHeaders(server);
    const hooked = await benchTable(server, 'BenchHooked');
    const plainTable = await benchTable(server, 'BenchPlain');
    await server.callTool(await builderKey(server), 'create_hook', { name: 'bench-before-save', type: 'beforeSave', tableId: hooked._id, content: BEFORE_SAVE });
    const hookedBodies = updateBodies(hooked.name, await seed(server, headers, hooked.name));
    const plainBodies = updateBodies(plainTable.name, await seed(server, headers, plainTable.name));
    await checkedGraphql(server, headers, hookedBodies[0]);
    await checkedGraphql(server, headers, plainBodies[0]);
    await assertHookRan(server);
    const [baseline, ours] = await measureAlternately(
      { url: `${server.url}/graphql`, request: { headers, bodies: plainBodies } },
      { url: `${server.url}/graphql`, request: { headers, bodies: hookedBodies } },
    );
    // Saves as callers make them, arriving at half the closed-loop maximum: the p99 a queue cannot hide.
    const openLoop = await measureOpenLoop(`${server.url}/graphql`, { headers, bodies: hookedBodies }, ours.perSecond / 2);
    if (openLoop.non2xx + openLoop.errors + openLoop.timeouts > 0) throw new Error(`open-loop: ${openLoop.non2xx} non-2xx, ${openLoop.errors} errors, ${openLoop.timeouts} unanswered`);
    return { ours, baseline, also: describeOpenLoop(openLoop) };
  },
};

/**
 * The same operation by an integration bound to no role (every record) and by one bound to the
 * `viewer` role, whose FILTER rules match every record: the cost of enforcing a rule in the SQL.
 */
function dataAccessFixture() {
  dataAccessFixture.made ??= (async () => {
    const server = await postgresTrellis();
    const unbound = await graphqlHeaders(server);
    const table = await benchTable(server, 'BenchAccess');
    const ids = await seed(server, unbound, table.name);
    const rule = { filter: { total: { gte: 0 } } };
    const rolesKey = await server.createMcpKey(['config:read', 'tables:write', 'roles:write']);
    await server.callTool(rolesKey, 'update_table', { _id: table._id, access: [{ roleId: 'viewer', read: rule, create: 'all', update: rule, delete: 'none' }] });
    const bound = { 'content-type': 'application/json', authorization: `Bearer ${await server.createAccessToken('bench viewer', 'viewer')}` };
    return { server, table, ids, unbound, bound };
  })();
  return dataAccessFixture.made;
}

async function underRule(bodiesOf) {
  const { server, table, ids, unbound, bound } = await dataAccessFixture();
  const bodies = bodiesOf(table.name, ids);
  await checkedGraphql(server, bound, bodies[0]);
  const [baseline, ours] = await measureAlternately(
    { url: `${server.url}/graphql`, request: { headers: unbound, bodies } },
    { url: `${server.url}/graphql`, request: { headers: bound, bodies } },
  );
  return { ours, baseline };
}

/** `update<Table>` under a FILTER rule (read and update) vs the same update under ALL. */
export const dataAccessUpdate = {
  name: 'data-access-update',
  target: 0.9,
  run: () => underRule(updateBodies),
};

/** A filtered page of 50 under a FILTER read rule vs the same page under ALL. */
export const dataAccessList = {
  name: 'data-access-list',
  target: 0.9,
  run: () =>
    underRule((tableName, ids) => {
      const query = `query($min: Float) { list${tableName}(filter: { total: { gte: $min } }, limit: 50) { items { _id total } } }`;
      return ids.map((_id, i) => JSON.stringify({ query, variables: { min: i % 500 } }));
    }),
};

async function graphqlHeaders(server) {
  return { 'content-type': 'application/json', authorization: `Bearer ${await accessToken(server)}` };
}

/** Creates (once per server) the table `name` with FIELDS; resolves with { _id, name, sqlName }. */
async function benchTable(server, name) {
  const apiKey = await builderKey(server);
  const { entities } = await server.callTool(apiKey, 'list_entities', {});
  const existing = entities?.find((entity) => entity.name === name);
  const table = existing ?? (await server.callTool(apiKey, 'create_table', { name, description: 'Benchmark table', fields: FIELDS })).entity;
  const sqlName = await sqlNameOf(server, table._id);
  return { _id: table._id, name, sqlName };
}

async function sqlNameOf(server, tableId) {
  const client = new pg.Client({ connectionString: server.env.TRELLIS_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query('select sql_name from app_tables where id = $1', [tableId]);
    if (rows.length !== 1) throw new Error(`table ${tableId} has no SQL table`);
    return rows[0].sql_name;
  } finally {
    await client.end();
  }
}

/** Makes sure the table has RECORD_COUNT records (created through GraphQL); resolves with their ids. */
async function seed(server, headers, tableName) {
  const list = await checkedGraphql(server, headers, JSON.stringify({ query: `{ list${tableName}(limit: 500) { items { _id } } }` }));
  const ids = list[`list${tableName}`].items.map((item) => item._id);
  const create = `mutation($data: ${tableName}Input!) { create${tableName}(data: $data) { _id } }`;
  let next = ids.length;
  const worker = async () => {
    while (next < RECORD_COUNT) {
      const n = next++;
      const data = await checkedGraphql(server, headers, JSON.stringify({ query: create, variables: { data: { total: n, note: `record ${n}` } } }));
      ids.push(data[`create${tableName}`]._id);
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
  return ids.slice(0, RECORD_COUNT);
}

function updateBodies(tableName, ids) {
  const query = `mutation($id: ID!, $data: ${tableName}Input) { update${tableName}(Id: $id, data: $data) { _id total } }`;
  return ids.map((id, i) => JSON.stringify({ query, variables: { id, data: { total: i + 0.5 } } }));
}

/** Posts a GraphQL body and checks the answer is a 200 without errors; resolves with its data. */
async function checkedGraphql(server, headers, body) {
  const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers, body });
  const text = await response.text();
  const answer = response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
  if (response.status !== 200 || !answer?.data || answer.errors) throw new Error(`/graphql answered ${response.status}: ${text.slice(0, 500)}`);
  return answer.data;
}

async function assertHookRan(server) {
  const client = new pg.Client({ connectionString: server.env.TRELLIS_DATABASE_URL });
  await client.connect();
  try {
    for (let attempt = 0; attempt < 50; attempt++) {
      const { rows } = await client.query("select outcome, error from hook_runs where hook_name = 'bench-before-save' order by id desc limit 1");
      if (rows[0]?.outcome === 'ok') return;
      if (rows[0]) throw new Error(`the beforeSave hook failed: ${rows[0].error}`);
      await sleep(20);
    }
    throw new Error('the beforeSave hook did not run');
  } finally {
    await client.end();
  }
}
