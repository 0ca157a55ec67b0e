import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/access/permissions.js';
import { createUserKey, mcpPost } from '../helpers/mcp.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The contract agents read, kept as one snapshot per tool: its name, description, input and output
 * schemas and annotations, as tools/list shows them. A change of contract shows up in review as a
 * change of that tool's file (update with `npx vitest run -u` on purpose). Keys with fewer scopes
 * see a subset of the same entries, each unchanged.
 */
const SCOPE_SETS: Record<string, string[]> = {
  'config-read': ['config:read'],
  designer: ['config:read', 'features:write', 'tables:write', 'menus:write'],
};

interface ListedTool {
  name: string;
  description: string;
  inputSchema: unknown;
}

describe('tools/list, the contract of every tool', () => {
  let server: TestServer;
  let everyTool: ListedTool[];

  async function listTools(scopes: readonly string[]): Promise<ListedTool[]> {
    const { apiKey } = await createUserKey(server, { email: 'owner@example.com', role: 'admin', scopes: [...scopes] });
    const response = await mcpPost(server, apiKey, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    return ((await response.json()) as { result: { tools: ListedTool[] } }).result.tools;
  }

  beforeAll(async () => {
    server = await startTestServer();
    everyTool = await listTools(SCOPES);
  });

  afterAll(async () => {
    await server?.close();
  });

  it('lists the 27 tools, each matching its own snapshot', async () => {
    expect(everyTool).toHaveLength(27);
    for (const tool of everyTool) {
      await expect(JSON.stringify(tool, null, 2) + '\n').toMatchFileSnapshot(`./__snapshots__/tools/${tool.name}.json`);
    }
  });

  it('keeps every input schema in the portable subset: no type arrays, no anyOf or oneOf, nothing nullable', () => {
    const offences: string[] = [];
    const walk = (node: unknown, path: string) => {
      if (Array.isArray(node)) return node.forEach((item, index) => walk(item, `${path}/${index}`));
      if (typeof node !== 'object' || node === null) return;
      const record = node as Record<string, unknown>;
      if (Array.isArray(record.type)) offences.push(`${path}: type ${JSON.stringify(record.type)}`);
      if (record.type === 'null') offences.push(`${path}: type null`);
      for (const key of ['anyOf', 'oneOf', 'allOf']) if (key in record) offences.push(`${path}: ${key}`);
      for (const [key, value] of Object.entries(record)) if (!((key === 'enum' || key === 'required') && Array.isArray(value))) walk(value, `${path}/${key}`);
    };
    for (const tool of everyTool) walk(tool.inputSchema, tool.name);
    expect(offences).toEqual([]);
  });

  it.each(Object.entries(SCOPE_SETS))('shows a %s key the tools of its scopes, each as an admin sees it', async (_name, scopes) => {
    const tools = await listTools(scopes);
    const byName = new Map(everyTool.map((tool) => [tool.name, tool]));
    for (const tool of tools) expect(tool).toEqual(byName.get(tool.name));
    const expected = everyTool.filter((tool) => scopes.some((scope) => tool.description.endsWith(`Needs the '${scope}' scope.`))).map((tool) => tool.name);
    expect(tools.map((tool) => tool.name)).toEqual(expected);
  });
});
