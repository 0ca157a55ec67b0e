import { request as httpRequest } from 'node:http';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/access/permissions.js';
import { TOOLS } from '../../src/mcp/tools/index.js';
import { connectMcp, createUserKey, firstText, ownerPrincipal, structuredData } from '../helpers/mcp.js';
import { postJson, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let adminKey: string;
const clients: Client[] = [];

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

async function connect(apiKey: string): Promise<Client> {
  const client = await connectMcp(server, apiKey);
  clients.push(client);
  return client;
}

function rpc(body: unknown, apiKey = adminKey, headers: Record<string, string> = {}) {
  return postJson(`${server.url}/api/mcp`, body, { ...MCP_HEADERS, authorization: `Bearer ${apiKey}`, ...headers });
}

/** The status of a tools/list POST sent with raw headers (fetch cannot set Host). */
function statusWith(target: TestServer, apiKey: string, headers: Record<string, string>): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const request = httpRequest(
      `${target.url}/api/mcp`,
      { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers } },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  });
}

beforeAll(async () => {
  server = await startTestServer();
  adminKey = (await createUserKey(server, { email: 'owner@example.com', role: 'admin', scopes: [...SCOPES] })).apiKey;
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await server?.close();
});

describe('MCP handshake', () => {
  it('sends the playbook in instructions and lists every tool for an admin key with all scopes', async () => {
    const client = await connect(adminKey);
    expect(client.getInstructions()).toMatch(/explore[\s\S]*authoring guide[\s\S]*validate[\s\S]*create/i);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    expect(tools).toHaveLength(27);
  });

  it('describes each tool with an input schema and annotations, and read tools with an output schema', async () => {
    const { tools } = await (await connect(adminKey)).listTools();
    const listFeatures = tools.find((t) => t.name === 'list_features')!;
    expect(listFeatures.inputSchema.properties).toHaveProperty('query');
    expect(listFeatures.outputSchema).toBeDefined();
    expect(listFeatures.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    const deleteHook = tools.find((t) => t.name === 'delete_hook')!;
    expect(deleteHook.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it('answers a raw initialize with JSON and the negotiated version', async () => {
    const result = await rpc({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toContain('application/json');
    expect(result.body.result).toMatchObject({ protocolVersion: '2025-11-25', serverInfo: { name: 'trellis' } });
  });

  it.each(['GET', 'DELETE'])('answers %s with 405', async (method) => {
    const response = await fetch(`${server.url}/api/mcp`, { method, headers: { authorization: `Bearer ${adminKey}` } });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('MCP authentication and limits', () => {
  it.each([
    ['no Authorization header', undefined],
    ['an unknown key', 'trellis_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['a session token instead of a key', 'trs_nope'],
  ])('refuses %s with 401', async (_case, key) => {
    const headers: Record<string, string> = { ...MCP_HEADERS };
    if (key) headers.authorization = `Bearer ${key}`;
    const result = await postJson(`${server.url}/api/mcp`, { jsonrpc: '2.0', id: 7, method: 'tools/list' }, headers);
    expect(result.status).toBe(401);
    expect(result.headers.get('www-authenticate')).toContain('Bearer');
    expect(result.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32001 } });
  });

  it('refuses a revoked key on the very next request', async () => {
    const { apiKey, keyId } = await createUserKey(server, { email: 'owner@example.com', role: 'admin', scopes: ['config:read'] });
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, apiKey)).status).toBe(200);
    await server.server.services.keys.revokeMcpApiKey(await ownerPrincipal(server), keyId);
    expect((await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, apiKey)).status).toBe(401);
  });

  it('refuses a foreign browser Origin with 403 and accepts an allowed one', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    expect((await rpc(body, adminKey, { origin: 'https://evil.example' })).status).toBe(403);
    await server.server.services.application.update(
      await ownerPrincipal(server),
      { corsOrigins: ['https://builder.example'] },
    );
    expect((await rpc(body, adminKey, { origin: 'https://builder.example' })).status).toBe(200);
  });

  it('refuses a Host that is not loopback on a loopback-bound server (DNS rebinding)', async () => {
    expect(await statusWith(server, adminKey, { host: 'attacker.example' })).toBe(403);
    // A DNS name that only looks like a loopback address is a name like any other.
    const port = new URL(server.url).port;
    expect(await statusWith(server, adminKey, { host: `127.attacker.example:${port}` })).toBe(403);
    expect(await statusWith(server, adminKey, { host: new URL(server.url).host, origin: `http://127.attacker.example:${port}` })).toBe(403);
    expect(await statusWith(server, adminKey, { host: new URL(server.url).host })).toBe(200);
    expect(await statusWith(server, adminKey, { host: `127.0.0.2:${port}`, origin: `http://127.0.0.2:${port}` })).toBe(200);
    expect(await statusWith(server, adminKey, { host: `localhost:${port}`, origin: `http://[::1]:${port}` })).toBe(200);
  });

  it('accepts the Host and Origin of TRELLIS_PUBLIC_URL', async () => {
    const behindProxy = await startTestServer({ TRELLIS_PUBLIC_URL: 'https://app.example.com' });
    try {
      const { apiKey } = await createUserKey(behindProxy, { email: 'owner@example.com', role: 'admin', scopes: ['config:read'] });
      expect(await statusWith(behindProxy, apiKey, { host: 'app.example.com', origin: 'https://app.example.com' })).toBe(200);
      expect(await statusWith(behindProxy, apiKey, { host: 'app.example.com', origin: 'https://other.example.com' })).toBe(403);
    } finally {
      await behindProxy.close();
    }
  });


  it('answers an unsupported MCP-Protocol-Version header with 400', async () => {
    const result = await rpc(
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_features', arguments: {} } },
      adminKey,
      { 'mcp-protocol-version': '1999-01-01' },
    );
    expect(result.status).toBe(400);
  });

  it('answers malformed JSON with 400 and a body that is not JSON-RPC with an error', async () => {
    const malformed = await postJson(`${server.url}/api/mcp`, '{"jsonrpc":', { ...MCP_HEADERS, authorization: `Bearer ${adminKey}` });
    expect(malformed.status).toBe(400);
    const notRpc = await rpc({ hello: 'world' });
    expect(notRpc.status).toBe(400);
  });

  it('answers 413 for a body over 2 MB and stores nothing', async () => {
    const before = await server.server.services.ctx.db.selectFrom('features').select('id').execute();
    const result = await rpc({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'create_feature', arguments: { name: 'Huge', customCode: 'x'.repeat(2 * 1024 * 1024) } },
    });
    expect(result.status).toBe(413);
    expect(await server.server.services.ctx.db.selectFrom('features').select('id').execute()).toHaveLength(before.length);
  });
});

describe('tools/list by scope', () => {
  it.each(SCOPES.map((scope) => [scope]))('shows exactly the tools of %s to a key with only that scope', async (scope) => {
    const { apiKey } = await createUserKey(server, { email: 'owner@example.com', role: 'admin', scopes: [scope] });
    const { tools } = await (await connect(apiKey)).listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS.filter((t) => t.scope === scope).map((t) => t.name));
  });

  it('shows, for each scope alone, each but one and all of them, exactly the tools of those scopes in the fixed order, again when asked again', async () => {
    // A tool is listed when its scope is in the key's set, whatever else is: each scope alone and
    // each set of all but one decide every tool's presence and absence for every scope (the 255
    // combinations cost 16 s over HTTP and tested nothing more). Each set's answer is kept for the
    // next request with that set: asked twice, in between other sets.
    const sets = [...SCOPES.map((scope) => [scope]), ...SCOPES.map((left) => SCOPES.filter((scope) => scope !== left)), [...SCOPES]];
    const keys = new Map<string[], string>();
    for (const round of [1, 2]) {
      for (const scopes of sets) {
        if (!keys.has(scopes)) keys.set(scopes, (await createUserKey(server, { email: 'owner@example.com', role: 'admin', scopes })).apiKey);
        const listed = await rpc({ jsonrpc: '2.0', id: round, method: 'tools/list' }, keys.get(scopes)!);
        const names = (listed.body.result.tools as Array<{ name: string }>).map((t) => t.name);
        expect(names, `${scopes.join(',')} (round ${round})`).toEqual(TOOLS.filter((t) => scopes.includes(t.scope)).map((t) => t.name));
      }
    }
  });

  it('hides admin-only tools from a designer even when asked for and names the missing scope on a call', async () => {
    await server.server.services.access.createRole(
      await ownerPrincipal(server),
      { name: 'agent-designer', permissions: ['config:read', 'features:write', 'ai_designer'] },
    );
    const { apiKey } = await createUserKey(server, { email: 'dana@example.com', role: 'agent-designer', scopes: ['config:read', 'features:write'] });
    const client = await connect(apiKey);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('create_feature');
    expect(names).not.toContain('create_hook');
    const result = await client.callTool({ name: 'create_hook', arguments: { name: 'x1', type: 'webHook', content: 'async function () {}' } });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toContain("'hooks:write'");
    const audit = await server.server.services.ctx.db
      .selectFrom('mcp_audit_logs')
      .selectAll()
      .where('tool', '=', 'create_hook')
      .where('outcome', '=', 'denied')
      .execute();
    expect(audit).toHaveLength(1);
  });
});

describe('the 2026-07-28 protocol generation (server/discover)', () => {
  it('connects, lists the key\'s tools and calls one', async () => {
    const { apiKey } = await createUserKey(server, { email: 'owner@example.com', role: 'admin', scopes: ['config:read'] });
    const client = await connectMcp(server, apiKey, { modern: true });
    clients.push(client);
    expect(client.getInstructions()).toContain('get_feature_authoring_guide');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS.filter((t) => t.scope === 'config:read').map((t) => t.name));
    const result = await client.callTool({ name: 'list_roles', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(structuredData<{ roles: Array<{ name: string }> }>(result).roles.map((r) => r.name)).toContain('designer');
  });

  it('names the missing scope when a hidden tool is called', async () => {
    const { apiKey } = await createUserKey(server, { email: 'owner@example.com', role: 'admin', scopes: ['config:read'] });
    const client = await connectMcp(server, apiKey, { modern: true });
    clients.push(client);
    const result = await client.callTool({ name: 'create_table', arguments: { name: 'Nope' } });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toContain("'tables:write'");
  });
});
