import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/access/permissions.js';
import { LISTENER_APPLICATION_NAME } from '../../src/platform/db/index.js';
import { createUserKey, mcpPost, ownerPrincipal } from '../helpers/mcp.js';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, usingPostgres, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/** Effects seen over HTTP are polled; their bound proves a notification, not the 30 s cache limit, brought them. */
const SEEN_WITHIN_MS = 5_000;
const REPLICA_ENV = { TRELLIS_WEBHOOK_RATE_LIMIT: '10000', TRELLIS_MCP_RATE_LIMIT: '100000' };

async function query(url: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

const listenerCount = async (url: string) =>
  Number((await query(url, 'select count(*) as n from pg_stat_activity where application_name = $1 and datname = current_database()', [LISTENER_APPLICATION_NAME]))[0].n);

/** The tools the key may use on `server`, or undefined when the key is refused (401). */
async function toolNames(server: TestServer, apiKey: string): Promise<string[] | undefined> {
  const response = await mcpPost(server, apiKey, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  if (response.status === 401) return undefined;
  if (response.status !== 200) throw new Error(`tools/list answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { result: { tools: { name: string }[] } }).result.tools.map((tool) => tool.name);
}

/** Milliseconds from each publish on `from` until `to` heard it, for `count` changes one after the other. */
async function propagationTimes(from: TestServer, to: TestServer, count: number): Promise<number[]> {
  const times: number[] = [];
  let heard: (() => void) | undefined;
  to.server.services.ctx.changes.on('config', () => heard?.());
  for (let i = 0; i < count; i++) {
    const arrived = new Promise<void>((resolve) => {
      heard = resolve;
    });
    const started = performance.now();
    await from.server.services.ctx.changes.publish('config');
    await arrived;
    times.push(performance.now() - started);
  }
  heard = undefined;
  return times;
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

describe.runIf(usingPostgres)('three replicas on one PostgreSQL database never go stale', () => {
  let a: TestServer;
  let b: TestServer;
  let c: TestServer;
  let others: TestServer[];

  beforeAll(async () => {
    a = await startTestServer(REPLICA_ENV);
    const shared = { ...REPLICA_ENV, TRELLIS_DATABASE_URL: a.env.TRELLIS_DATABASE_URL! };
    [b, c] = await Promise.all([startTestServer(shared), startTestServer(shared)]);
    others = [b, c];
  });

  afterAll(async () => {
    await Promise.all([b?.close(), c?.close()]);
    await a?.close();
  });

  it('ends a key revoked on one replica on the others', async () => {
    const { apiKey, keyId } = await createUserKey(a, { email: 'owner@example.com', role: 'admin', scopes: [...SCOPES] });
    for (const server of others) expect(await toolNames(server, apiKey)).toContain('list_features');
    await a.server.services.keys.revokeMcpApiKey(await ownerPrincipal(a), keyId);
    for (const server of others) await waitFor('the revocation', async () => (await toolNames(server, apiKey)) === undefined, SEEN_WITHIN_MS);
  });

  it("takes the admin-only tools away on the others when the key's user is demoted on one", async () => {
    const { apiKey, userId } = await createUserKey(a, { email: 'demoted@example.com', role: 'admin', scopes: ['config:read', 'env:write'] });
    for (const server of others) expect(await toolNames(server, apiKey)).toContain('set_environment_variable');
    await a.server.services.access.updateUser(await ownerPrincipal(a), { _id: userId, role: 'designer' } as never);
    for (const server of others) {
      await waitFor('the demotion', async () => {
        const names = await toolNames(server, apiKey);
        return names !== undefined && !names.includes('set_environment_variable') && names.includes('list_features');
      }, SEEN_WITHIN_MS);
    }
  });

  it('runs the new code of a hook changed on one replica on the others', async () => {
    const gql = graphqlClient(a.url, await login(a.url));
    const hook = await gqlData(gql, 'mutation { createHook(name: "version-check", type: "webHook", content: "async () => \'v1\'") { _id } }');
    const call = async (server: TestServer) => (await fetch(`${server.url}/api/webhook/version-check`, { method: 'POST' })).json();
    for (const server of others) await waitFor('the new webhook', async () => (await call(server)) === 'v1', SEEN_WITHIN_MS);
    await gqlData(gql, 'mutation($id: ID!) { updateHook(_id: $id, content: "async () => \'v2\'") { _id } }', { id: hook.createHook._id });
    for (const server of others) await waitFor('the changed code', async () => (await call(server)) === 'v2', SEEN_WITHIN_MS);
  });

  it('serves a field added on one replica in the generated schema of the others', async () => {
    const gql = graphqlClient(a.url, await login(a.url));
    const table = await gqlData(gql, 'mutation { createTable(name: "Parcel", fields: [{ name: "code", type: "text" }]) { _id } }');
    for (const server of others) {
      const onServer = graphqlClient(server.url, await login(server.url));
      await waitFor('the table', async () => (await onServer('{ listParcel { total } }')).status === 200, SEEN_WITHIN_MS);
    }
    await gqlData(gql, 'mutation($t: ID!) { addTableField(tableId: $t, field: { name: "weight", type: "number" }) { _id } }', { t: table.createTable._id });
    for (const server of others) {
      const onServer = graphqlClient(server.url, await login(server.url));
      await waitFor('the new field', async () => (await onServer('{ listParcel { items { weight } } }')).status === 200, SEEN_WITHIN_MS);
    }
  });

  it('hears every change within a second: 100 changes one after the other', async () => {
    const times = await propagationTimes(a, b, 100);
    const p50 = percentile(times, 0.5);
    const max = Math.max(...times);
    console.log(`replica propagation over ${times.length} changes: p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
    expect(max).toBeLessThan(1000);
  });

  it('listens again after its listening connection was terminated, and reads anew what it may have missed', async () => {
    const url = a.env.TRELLIS_DATABASE_URL!;
    expect(await listenerCount(url)).toBe(3);
    const { apiKey, keyId } = await createUserKey(a, { email: 'owner@example.com', role: 'admin', scopes: ['config:read'] });
    for (const server of others) expect(await toolNames(server, apiKey)).toContain('list_features');
    // A revocation whose notification is lost: written straight to the database, announced to nobody.
    await query(url, 'update mcp_api_keys set revoked_at = now() where id = $1', [keyId]);
    for (const server of others) expect(await toolNames(server, apiKey)).toContain('list_features');
    await query(url, 'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()', [LISTENER_APPLICATION_NAME]);
    for (const server of others) await waitFor('the unannounced revocation', async () => (await toolNames(server, apiKey)) === undefined, SEEN_WITHIN_MS);
    await waitFor('every replica listening again', async () => (await listenerCount(url)) === 3, SEEN_WITHIN_MS);
    const times = await propagationTimes(a, c, 5);
    expect(Math.max(...times)).toBeLessThan(1000);
  });
});

describe.runIf(usingPostgres)('replicas through a PostgreSQL restart', () => {
  let postgres: PrivatePostgres;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    const env = { ...REPLICA_ENV, TRELLIS_DATABASE_URL: postgres.url };
    a = await startTestServer(env);
    b = await startTestServer(env);
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    await a?.close();
    await postgres?.destroy();
  });

  it('answers 503 while the database is down, recovers without a restart and reads anew what it may have missed', async () => {
    const { apiKey, keyId } = await createUserKey(a, { email: 'owner@example.com', role: 'admin', scopes: ['config:read'] });
    expect(await toolNames(b, apiKey)).toContain('list_features');
    await query(postgres.url, 'update mcp_api_keys set revoked_at = now() where id = $1', [keyId]);
    await postgres.stop();
    expect((await fetch(`${b.url}/readyz`)).status).toBe(503);
    // While it is down every request fails cleanly: 503 with a message, never a 500 or a hang.
    const token = b.server.services.ctx.config.adminEmail; // any e-mail: the login needs the database
    const answers = await Promise.all([
      postJson(`${b.url}/api/auth/login`, { email: token, password: 'x' }),
      postJson(`${b.url}/graphql`, { query: 'mutation { createFeature(name: "Down", customCode: "export default function P() { return null }") { _id } }' }, { authorization: 'Bearer trs_unknown' }),
      mcpPost(b, apiKey, { jsonrpc: '2.0', id: 1, method: 'tools/list' }).then(async (response) => ({ status: response.status, body: await response.json().catch(() => null) })),
      postJson(`${b.url}/api/webhook/nothing`, {}),
    ]);
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(503);
      expect(JSON.stringify(answer.body)).toContain('The database is not available right now');
    }
    await postgres.start();
    await waitFor('the database back', async () => (await fetch(`${b.url}/readyz`)).status === 200, 30_000);
    await waitFor('both replicas listening again', async () => (await listenerCount(postgres.url)) === 2, 30_000);
    expect(await toolNames(b, apiKey)).toBeUndefined();
    const times = await propagationTimes(a, b, 5);
    expect(Math.max(...times)).toBeLessThan(1000);
  });
});
