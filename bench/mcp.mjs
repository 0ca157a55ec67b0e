// The MCP benchmarks: tools/call on Trellis against a bare Fastify route and against the official SDK.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { mcpKey, trellis } from './lib/fixtures.mjs';
import { measure } from './lib/load.mjs';
import { startNode, tempFolder } from './lib/processes.mjs';
import { checkedCall, mcpHeaders, toolCallBody, unfenced } from './lib/trellis.mjs';

const FEATURE_COUNT = 50;
const FASTIFY_STATIC = fileURLToPath(new URL('./servers/fastify-static.mjs', import.meta.url));
const SDK_ECHO = fileURLToPath(new URL('./servers/sdk-echo.mjs', import.meta.url));

/** tools/call `list_features` (50 features) vs a bare Fastify route answering the same bytes. */
export const mcpRead = {
  name: 'mcp-read',
  target: 0.2,
  async run() {
    const server = await trellis();
    const apiKey = await mcpKey();
    const headers = mcpHeaders(apiKey);
    await createFeatures(server.mcpUrl, headers);
    const body = toolCallBody('list_features');
    const answer = await checkedCall(server.mcpUrl, headers, body);
    const count = unfenced(answer.message.result).features?.length;
    if (count !== FEATURE_COUNT) throw new Error(`list_features answered ${count} features, expected ${FEATURE_COUNT}`);

    const bodyFile = join(tempFolder('body'), 'list-features.json');
    writeFileSync(bodyFile, answer.body);
    const bare = await startNode([FASTIFY_STATIC], { env: { BENCH_BODY_FILE: bodyFile, BENCH_PATH: '/api/mcp' }, label: 'bare Fastify' });
    let baseline;
    try {
      const bareUrl = `${bare.match}/api/mcp`;
      const copy = await checkedCall(bareUrl, headers, body);
      if (copy.body !== answer.body) throw new Error('the bare Fastify route does not answer the captured body');
      baseline = await measure(bareUrl, { headers, body });
    } finally {
      await bare.stop();
    }
    const ours = await measure(server.mcpUrl, { headers, body });
    return { ours, baseline };
  },
};

/** tools/call `list_menus` (empty menu table) vs the SDK's minimal stateless server calling `echo`. */
export const mcpVsSdk = {
  name: 'mcp-vs-sdk',
  target: 3.0,
  async run() {
    const server = await trellis();
    const apiKey = await mcpKey();
    const headers = mcpHeaders(apiKey);
    const body = toolCallBody('list_menus');
    const answer = await checkedCall(server.mcpUrl, headers, body);
    const menus = unfenced(answer.message.result).menus;
    if (!Array.isArray(menus) || menus.length !== 0) throw new Error(`list_menus should answer an empty menu list: ${answer.body.slice(0, 300)}`);

    const sdk = await startNode([SDK_ECHO], { label: 'SDK echo server' });
    let baseline;
    try {
      const sdkHeaders = mcpHeaders();
      const sdkBody = toolCallBody('echo', { text: 'hello' });
      const echoed = await checkedCall(sdk.match, sdkHeaders, sdkBody);
      if (echoed.message.result.content?.[0]?.text !== 'hello') throw new Error(`the SDK echo tool answered ${echoed.body}`);
      baseline = await measure(sdk.match, { headers: sdkHeaders, body: sdkBody });
    } finally {
      await sdk.stop();
    }
    const ours = await measure(server.mcpUrl, { headers, body });
    return { ours, baseline };
  },
};

async function createFeatures(mcpUrl, headers) {
  const existing = await checkedCall(mcpUrl, headers, toolCallBody('list_features'));
  const start = unfenced(existing.message.result).features.length;
  for (let i = start + 1; i <= FEATURE_COUNT; i++) {
    const n = String(i).padStart(2, '0');
    const customCode = ['export default function Page() {', `  return <h1>Bench feature ${n}</h1>;`, '}', ''].join('\n');
    await checkedCall(mcpUrl, headers, toolCallBody('create_feature', { name: `Bench feature ${n}`, description: `Feature ${n} of the read benchmark`, customCode }));
  }
}
