import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeMcpAuditEntry } from '../../src/audit/mcp-log.js';
import { connectMcp, createUserKey } from '../helpers/mcp.js';
import { runTrellis } from '../helpers/process.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The audit names what people know: a key by its name and visible prefix, a user by e-mail, in
 * builder GraphQL, in `trellis audit list` and in their filters; an id only when the key or the
 * user is gone.
 */
let server: TestServer;
let gql: ReturnType<typeof graphqlClient>;
let agent: { apiKey: string; keyId: string; userId: string };
let keyPrefix: string;

const LIST = `query($key: String, $user: String) {
  mcpAuditLogs(key: $key, user: $user) { items { tool keyId keyName keyPrefix userId userEmail } }
}`;

async function tools(variables: Record<string, unknown>): Promise<string[]> {
  return (await gqlData(gql, LIST, variables)).mcpAuditLogs.items.map((entry: { tool: string }) => entry.tool);
}

beforeAll(async () => {
  server = await startTestServer();
  gql = graphqlClient(server.url, await login(server.url));
  agent = await createUserKey(server, { email: 'Agent.Smith@example.com', role: 'designer', scopes: ['config:read'] });
  keyPrefix = agent.apiKey.slice(0, (await gqlData(gql, '{ mcpApiKeys(all: true) { keyPrefix } }')).mcpApiKeys[0].keyPrefix.length);
  const client = await connectMcp(server, agent.apiKey);
  await client.callTool({ name: 'list_features', arguments: {} });
  await client.close();
  // A call of a key and a user that are gone since.
  await writeMcpAuditEntry(server.server.services.ctx.db, { keyId: 'key-gone', userId: 'user-gone', tool: 'list_hooks', arguments: {}, outcome: 'ok', error: null, durationMs: 2, codeSha256: null });
});

afterAll(async () => server?.close());

describe('the MCP audit log names keys and users', () => {
  it('answers the key by name and prefix and the user by e-mail, beside their ids', async () => {
    const { items } = (await gqlData(gql, LIST)).mcpAuditLogs;
    expect(items).toEqual([
      { tool: 'list_hooks', keyId: 'key-gone', keyName: null, keyPrefix: null, userId: 'user-gone', userEmail: null },
      { tool: 'list_features', keyId: agent.keyId, keyName: 'Agent.Smith@example.com key', keyPrefix, userId: agent.userId, userEmail: 'agent.smith@example.com' },
    ]);
    expect(keyPrefix).toMatch(/^trellis_.+/);
  });

  it.each([
    ['the key by name in another letter case', () => ({ key: 'AGENT.SMITH@example.com KEY' }), ['list_features']],
    ['the key by prefix', () => ({ key: keyPrefix }), ['list_features']],
    ['the key by _id', () => ({ key: agent.keyId }), ['list_features']],
    ['a key that is gone, by its _id', () => ({ key: 'key-gone' }), ['list_hooks']],
    ['the user by e-mail in another letter case', () => ({ user: 'agent.SMITH@example.com' }), ['list_features']],
    ['the user by _id', () => ({ user: agent.userId }), ['list_features']],
    ['a key no call used', () => ({ key: 'nobody' }), []],
  ])('filters by %s', async (_case, variables, expected) => {
    expect(await tools(variables())).toEqual(expected);
  });

  it('trellis audit list prints the key by name and prefix and the user by e-mail, and takes them as filters', async () => {
    const run = await runTrellis(['audit', 'list', '--key', keyPrefix, '--user', 'agent.smith@example.com'], server.env);
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^\\S+Z {2}ok {6}list_features {2}key='Agent\\.Smith@example\\.com key' \\(${keyPrefix}…\\) {2}user=agent\\.smith@example\\.com {2}\\d+ms$`));
    const gone = await runTrellis(['audit', 'list', '--key', 'key-gone'], server.env);
    expect(gone.stdout.trim()).toMatch(/list_hooks {2}key=key-gone {2}user=user-gone {2}2ms$/);
    const json = JSON.parse((await runTrellis(['audit', 'list', '--user', agent.userId, '--json'], server.env)).stdout);
    expect(json.items[0]).toMatchObject({ keyName: 'Agent.Smith@example.com key', keyPrefix, userEmail: 'agent.smith@example.com' });
  });
});
