import type { McpServer } from '@modelcontextprotocol/server';
import type { Principal } from '../access/permissions.js';
import type { Services } from '../services.js';
import { PLAYBOOK } from './instructions.js';
import { withPortableJsonSchema } from './portable-schema.js';
import { runTool } from './run-tool.js';
import type { Sdk } from './sdk.js';
import { TOOLS } from './tools/index.js';
import { fencedOutput } from './tools/shared.js';

export const SERVER_INFO = { name: 'trellis', version: '0.1.0' } as const;

/** Built once: a server is built for every request that the SDK answers. */
const OUTPUT_SCHEMAS = new Map(TOOLS.map((tool) => [tool.name, fencedOutput(tool.output)]));
/** The input schemas as tools/list shows them: the portable subset (src/mcp/portable-schema.ts). */
const INPUT_SCHEMAS = new Map(TOOLS.map((tool) => [tool.name, withPortableJsonSchema(tool.input as never, tool.aliases)]));

/**
 * The SDK's McpServer for one request of one principal: every tool is registered (in the fixed
 * order), and those whose scope the principal lacks are disabled, so `tools/list` hides them.
 */
export function buildMcpServer(sdk: Sdk, services: Services, principal: Principal, keyId: string): McpServer {
  const server = new sdk.McpServer(SERVER_INFO, { instructions: PLAYBOOK, capabilities: { tools: { listChanged: false } } });
  for (const tool of TOOLS) {
    const registered = server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: `${tool.description} Needs the '${tool.scope}' scope.`,
        inputSchema: INPUT_SCHEMAS.get(tool.name) as never,
        outputSchema: OUTPUT_SCHEMAS.get(tool.name) as never,
        annotations: { title: tool.title, ...tool.annotations },
      },
      (async (args: unknown) => runTool(services, principal, keyId, tool, args)) as never,
    );
    if (!principal.permissions.has(tool.scope)) registered.disable();
  }
  return server;
}
