/* global fetch */
// The webhook benchmark: a trivial webhook hook through POST /api/webhook/<name> vs a bare Fastify route.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { builderKey, trellis } from './lib/fixtures.mjs';
import { measure } from './lib/load.mjs';
import { startNode, tempFolder } from './lib/processes.mjs';

const FASTIFY_STATIC = fileURLToPath(new URL('./servers/fastify-static.mjs', import.meta.url));
const WEBHOOK_ROUTE = fileURLToPath(new URL('../src/http/webhook-route.ts', import.meta.url));
const HOOK_NAME = 'bench-webhook';
const HOOK_CODE = 'async function (instance) { return { ok: true }; }';
const HEADERS = { 'content-type': 'application/json' };
const BODY = JSON.stringify({ event: 'bench', n: 1 });

/** POST /api/webhook/bench-webhook running `async function (instance) { return { ok: true }; }` vs a bare Fastify route answering `{"ok":true}`. */
export const webhook = {
  name: 'webhook',
  target: 0.1,
  p99TargetMs: 10,
  async run() {
    if (!existsSync(WEBHOOK_ROUTE)) throw new Error('the webhook route (src/http/webhook-route.ts) does not exist yet');
    const server = await trellis();
    await server.callTool(await builderKey(server), 'create_hook', { name: HOOK_NAME, type: 'webHook', content: HOOK_CODE });
    const path = `/api/webhook/${HOOK_NAME}`;
    const answer = await checkedPost(`${server.url}${path}`);

    const bodyFile = join(tempFolder('body'), 'webhook.json');
    writeFileSync(bodyFile, answer);
    const bare = await startNode([FASTIFY_STATIC], { env: { BENCH_BODY_FILE: bodyFile, BENCH_PATH: path }, label: 'bare Fastify' });
    let baseline;
    try {
      if ((await checkedPost(`${bare.match}${path}`)) !== answer) throw new Error('the bare Fastify route does not answer the webhook’s body');
      baseline = await measure(`${bare.match}${path}`, { headers: HEADERS, body: BODY });
    } finally {
      await bare.stop();
    }
    const ours = await measure(`${server.url}${path}`, { headers: HEADERS, body: BODY });
    // At CONNECTIONS (32) callers at once the server is saturated and p99 is mostly their queue
    // (32 / rate); one caller at a time shows the latency of a webhook on an unloaded server.
    const alone = await measure(`${server.url}${path}`, { headers: HEADERS, body: BODY, connections: 1 });
    if (alone.non2xx + alone.errors + alone.timeouts > 0) throw new Error(`one caller at a time: ${alone.non2xx} non-2xx, ${alone.errors} errors, ${alone.timeouts} timeouts`);
    return { ours, baseline, also: `one caller at a time: ${Math.round(alone.perSecond)}/s, p50 ${alone.p50Ms} ms, p99 ${alone.p99Ms} ms` };
  },
};

async function checkedPost(url) {
  const response = await fetch(url, { method: 'POST', headers: HEADERS, body: BODY });
  const text = await response.text();
  if (response.status !== 200 || JSON.stringify(JSON.parse(text)) !== '{"ok":true}') throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return text;
}
