import { afterAll, describe, expect, it } from 'vitest';
import { TEST_ENV } from '../helpers/env.js';
import { verifyPGliteIntegrity } from '../helpers/integrity.js';
import { MCP_ACCEPT } from '../helpers/mcp.js';
import { spawnServer, type SpawnedServer } from '../helpers/process.js';
import { freshDataEnv, gqlData, graphqlClient, login } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * kill -9 of the server during a loop of MCP feature writes and record writes, then a restart on
 * the same data (the embedded folder, or the PostgreSQL database in the PostgreSQL suite): every
 * acknowledged write is there, nothing is half-written, and each MCP write has exactly one audit
 * entry (and no audit entry claims a write that is not there). On the embedded database, amcheck
 * then finds every index and table sound.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function mcpCall(url: string, apiKey: string, id: number, name: string, args: Record<string, unknown>) {
  return fetch(`${url}/api/mcp`, {
    method: 'POST',
    headers: { ...MCP_ACCEPT, 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  });
}

describe('kill -9 during writes', () => {
  it('keeps every acknowledged write, half of none, and one audit entry per MCP write', async () => {
    const data = await freshDataEnv(cleanups, 'trellis-crash-');
    const env = { ...TEST_ENV, ...data, TRELLIS_LOG_LEVEL: 'error', TRELLIS_MCP_RATE_LIMIT: '100000' };
    let server: SpawnedServer = await spawnServer(env, 60_000);
    cleanups.push(() => void server.child.kill('SIGKILL'));
    const owner = graphqlClient(server.url, await login(server.url));
    await gqlData(owner, 'mutation { createTable(name: "Events", fields: [{ name: "seq", type: "number", required: true }, { name: "label", type: "text" }]) { _id } }');
    const counter = (await gqlData(owner, 'mutation { createEvents(data: { seq: 0, label: "counter" }) { _id } }')).createEvents._id as string;
    const apiKey = (await gqlData(owner, 'mutation { createMcpApiKey(name: "crash", scopes: ["config:read", "features:write"], expiresInDays: 1) { apiKey } }')).createMcpApiKey.apiKey as string;

    const acknowledged = { features: new Set<string>(), events: new Set<number>(), counter: 0 };
    let stopping = false;
    const featureWriter = async (worker: number) => {
      for (let i = 0; !stopping; i++) {
        const id = `w${worker}-f${i}`;
        try {
          const response = await mcpCall(server.url, apiKey, i, 'create_feature', { _id: id, name: `Feature ${id}`, customCode: `export default function P() { return null; }\n// ${id}\n` });
          const text = await response.text();
          if (response.status === 200 && !text.includes('"isError":true')) acknowledged.features.add(id);
        } catch {
          return; // the server is gone
        }
      }
    };
    const eventWriter = async (worker: number) => {
      for (let i = 1; !stopping; i++) {
        const seq = worker * 1_000_000 + i;
        try {
          const result = await owner(`mutation { createEvents(data: { seq: ${seq}, label: "event" }) { _id } }`);
          if (result.status === 200 && !result.body.errors) acknowledged.events.add(seq);
        } catch {
          return;
        }
      }
    };
    const counterWriter = async () => {
      for (let n = 1; !stopping; n++) {
        try {
          const result = await owner('mutation($id: ID!, $n: Float!) { updateEvents(Id: $id, data: { seq: $n }) { _id } }', { id: counter, n });
          if (result.status === 200 && !result.body.errors) acknowledged.counter = n;
        } catch {
          return;
        }
      }
    };
    const writers = [featureWriter(1), featureWriter(2), eventWriter(1), eventWriter(2), counterWriter()];
    // Killed once every writer has had writes acknowledged (however slow the machine), and not
    // before 2.5 s, so that many writes are in flight.
    const allAcknowledged = () => acknowledged.features.size > 0 && acknowledged.events.size > 0 && acknowledged.counter > 0;
    await Promise.all([new Promise((resolve) => setTimeout(resolve, 2500)), waitFor('a write of every writer acknowledged', allAcknowledged, 60_000)]);
    server.child.kill('SIGKILL');
    stopping = true;
    await Promise.all(writers);
    expect(acknowledged.features.size).toBeGreaterThan(0);
    expect(acknowledged.events.size).toBeGreaterThan(0);
    expect(acknowledged.counter).toBeGreaterThan(0);

    server = await spawnServer(env, 60_000);
    const after = graphqlClient(server.url, await login(server.url));
    const features = (await gqlData(after, '{ features { _id customCode version } }')).features as { _id: string; customCode: string; version: number }[];
    const stored = new Set(features.map((feature) => feature._id));
    for (const id of acknowledged.features) expect(stored.has(id), `acknowledged feature ${id}`).toBe(true);
    // No half-written feature: each has its code and its first version.
    for (const feature of features) expect(feature.customCode).toContain(`// ${feature._id}`);
    const versions = await Promise.all(features.map(async (feature) => (await gqlData(after, 'query($id: ID!) { featureVersions(_id: $id) { version } }', { id: feature._id })).featureVersions.length));
    expect(versions.every((count) => count === 1)).toBe(true);

    const seqs = new Set<number>();
    for (let offset = 0; ; offset += 500) {
      const page: { items: { seq: number }[]; total: number } = (await gqlData(after, 'query($o: Int) { listEvents(filter: { label: { eq: "event" } }, limit: 500, offset: $o) { items { seq } total } }', { o: offset })).listEvents;
      for (const event of page.items as { seq: number }[]) seqs.add(event.seq);
      if (offset + 500 >= page.total) break;
    }
    for (const seq of acknowledged.events) expect(seqs.has(seq), `acknowledged event ${seq}`).toBe(true);
    const counted = (await gqlData(after, 'query($id: ID!) { getEvents(Id: $id) { seq } }', { id: counter })).getEvents.seq as number;
    // The last acknowledged update is there; one more may have been written and not answered.
    expect(counted === acknowledged.counter || counted === acknowledged.counter + 1).toBe(true);

    // Exactly one ok audit entry per stored feature created through MCP, and none for a feature that is not there.
    const audit = await fetchAudit(after);
    const audited = audit.filter((entry) => entry.tool === 'create_feature' && entry.outcome === 'ok').map((entry) => (entry.arguments as { _id: string })._id);
    expect(audited.length).toBe(new Set(audited).size);
    expect(new Set(audited)).toEqual(stored);
    console.log(
      `kill -9 after 2.5 s: ${acknowledged.features.size} acknowledged MCP feature writes (${stored.size} stored), ${acknowledged.events.size} acknowledged record creates (${seqs.size} stored), counter at ${acknowledged.counter} acknowledged / ${counted} stored`,
    );
    await server.stop();
    if (data.TRELLIS_DATA_DIR === undefined) return;
    const integrity = await verifyPGliteIntegrity(data.TRELLIS_DATA_DIR);
    expect(integrity.problems).toEqual([]);
    console.log(`amcheck after kill -9 and restart: ${integrity.indexes.length} btree indexes and ${integrity.tables.length} tables sound`);
  });
});

async function fetchAudit(gql: ReturnType<typeof graphqlClient>) {
  const entries: { tool: string; outcome: string; arguments: unknown }[] = [];
  let before: string | null = null;
  do {
    const page: { items: { tool: string; outcome: string; arguments: unknown }[]; nextCursor: string | null } = (await gqlData(gql, 'query($before: ID) { mcpAuditLogs(limit: 500, before: $before) { items { tool outcome arguments } nextCursor } }', { before })).mcpAuditLogs;
    entries.push(...page.items);
    before = page.nextCursor;
  } while (before);
  return entries;
}
