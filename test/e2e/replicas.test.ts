import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/access/permissions.js';
import { createUserKey, mcpPost, ownerPrincipal, structuredData } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, startTestServer, usingPostgres, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

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
    await waitFor('the revocation on the other replica', async () => (await list(second)).status === 401);
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
      const body = (await response.json()) as { result: unknown };
      return structuredData<{ features: Array<{ name: string }> }>(body.result).features.map((f) => f.name);
    };
    expect(await names(second)).not.toContain('Replicated');
    await first.server.services.features.createFeature(await ownerPrincipal(first), {
      name: 'Replicated',
      customCode: 'export default function Replicated() { return <p>hi</p>; }',
    });
    await waitFor('the new feature on the other replica', async () => (await names(second)).includes('Replicated'));
  });

  it("serves a table created on one replica in the other replica's generated schema", async () => {
    const onFirst = graphqlClient(first.url, await login(first.url));
    const onSecond = graphqlClient(second.url, await login(second.url));
    expect((await onSecond('{ listInvoice { total } }')).status).toBe(400);
    await gqlData(onFirst, 'mutation { createTable(name: "Invoice", fields: [{ name: "number", type: "text" }]) { _id } }');
    await gqlData(onFirst, 'mutation { createInvoice(data: { number: "INV-1" }) { _id } }');
    const answer = await waitFor('the Invoice table on the other replica', async () => {
      const result = await onSecond('{ listInvoice { total items { number } } }');
      return result.status === 200 ? result : undefined;
    });
    expect(answer.body).toEqual({ data: { listInvoice: { total: 1, items: [{ number: 'INV-1' }] } } });
    expect(await second.server.services.graphql.sdl()).toContain('type Invoice {');
  });
});
