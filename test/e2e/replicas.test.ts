import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/access/permissions.js';
import { createUserKey, mcpPost, ownerPrincipal } from '../helpers/mcp.js';
import { startTestServer, usingPostgres, type TestServer } from '../helpers/server.js';

/** Polls until `check` holds or a few seconds have passed. */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

describe.runIf(usingPostgres)('two replicas on one PostgreSQL database', () => {
  let first: TestServer;
  let second: TestServer;

  beforeAll(async () => {
    first = await startTestServer();
    second = await startTestServer({ TRELLIS_DATABASE_URL: first.env.TRELLIS_DATABASE_URL! });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('stops a key on the other replica once it is revoked on one', async () => {
    const { apiKey, keyId } = await createUserKey(first, { email: 'owner@example.com', role: 'admin', scopes: [...SCOPES] });
    const list = (server: TestServer) => mcpPost(server, apiKey, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect((await list(second)).status).toBe(200);
    await first.server.services.keys.revokeMcpApiKey(await ownerPrincipal(first), keyId);
    expect((await list(first)).status).toBe(401);
    expect(await eventually(async () => (await list(second)).status === 401)).toBe(true);
  });

  it('shows a feature created on one replica in the other replica\'s cached reads', async () => {
    const { apiKey } = await createUserKey(first, { email: 'owner@example.com', role: 'admin', scopes: [...SCOPES] });
    const names = async (server: TestServer) => {
      const response = await mcpPost(server, apiKey, {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'list_features', arguments: {} },
      });
      const body = (await response.json()) as { result: { structuredContent: { features: Array<{ name: string }> } } };
      return body.result.structuredContent.features.map((f) => f.name);
    };
    expect(await names(second)).not.toContain('Replicated');
    await first.server.services.features.createFeature(await ownerPrincipal(first), {
      name: 'Replicated',
      customCode: 'export default function Replicated() { return <p>hi</p>; }',
    });
    expect(await eventually(async () => (await names(second)).includes('Replicated'))).toBe(true);
  });
});
