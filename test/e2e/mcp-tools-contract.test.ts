import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/access/permissions.js';
import { createUserKey, mcpPost } from '../helpers/mcp.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The contract agents read, kept as snapshots: every tool's name, description, input and output
 * schemas and annotations, as tools/list shows them for each set of scopes. A change of contract
 * shows up in review as a change of these files (update them with `npx vitest run -u` on purpose).
 */
const SCOPE_SETS: Record<string, string[]> = {
  'config-read': ['config:read'],
  designer: ['config:read', 'features:write', 'tables:write', 'menus:write'],
  admin: [...SCOPES],
};

describe('tools/list, the contract of every tool', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });

  afterAll(async () => {
    await server?.close();
  });

  it.each(Object.entries(SCOPE_SETS))('matches its snapshot for a %s key', async (name, scopes) => {
    const { apiKey } = await createUserKey(server, { email: 'owner@example.com', role: 'admin', scopes });
    const response = await mcpPost(server, apiKey, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const { result } = (await response.json()) as { result: { tools: unknown[] } };
    await expect(JSON.stringify(result.tools, null, 2) + '\n').toMatchFileSnapshot(`./__snapshots__/tools-list.${name}.json`);
  });
});
