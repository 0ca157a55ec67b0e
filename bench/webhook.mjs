/* global fetch */
// The webhook benchmark: a trivial webhook hook through POST /api/webhook/<name> vs a bare Fastify route.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { builderKey, postgresTrellis, trellis } from './lib/fixtures.mjs';
import { describeOpenLoop, measure, measureOpenLoop } from './lib/load.mjs';
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
    let ours;
    const also = [];
    let worstP99;
    try {
      if ((await checkedPost(`${bare.match}${path}`)) !== answer) throw new Error('the bare Fastify route does not answer the webhook’s body');
      baseline = await measure(`${bare.match}${path}`, { headers: HEADERS, body: BODY });
      ours = await measure(`${server.url}${path}`, { headers: HEADERS, body: BODY });
      // At CONNECTIONS (32) callers at once the server is saturated and p99 is mostly their queue
      // (32 / rate): the latency target is measured open-loop, callers arriving at half that rate.
      // The bare route under the same arrivals shows what the machine itself adds (other loads, the generator).
      const openLoop = await openLoopAtHalf(`${server.url}${path}`, ours);
      const bareOpenLoop = await openLoopAtHalf(`${bare.match}${path}`, ours);
      also.push(`${databaseOf(server)} ${describeOpenLoop(openLoop)} (bare Fastify at the same rate: p99 ${bareOpenLoop.p99Ms} ms)`);
      worstP99 = openLoop.p99Ms;
    } finally {
      await bare.stop();
    }
    if (!process.env.BENCH_DATABASE_URL) {
      const onPostgres = await closedThenOpen(await postgresTrellis());
      also.push(`PostgreSQL closed-loop ${Math.round(onPostgres.closed.perSecond)}/s (p99 ${onPostgres.closed.p99Ms} ms), ${describeOpenLoop(onPostgres.open)}`);
      worstP99 = Math.max(worstP99, onPostgres.open.p99Ms);
    }
    return { ours, baseline, p99Ms: worstP99, p99Label: 'open-loop p99', also: also.join('; ') };
  },
};

function databaseOf(server) {
  return server.env.TRELLIS_DATABASE_URL ? 'PostgreSQL' : 'embedded';
}

/** Open-loop at half of `closed`'s rate; throws when a request failed. */
async function openLoopAtHalf(url, closed) {
  const result = await measureOpenLoop(url, { headers: HEADERS, body: BODY }, closed.perSecond / 2);
  if (result.non2xx + result.errors + result.timeouts > 0) throw new Error(`open-loop: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} unanswered`);
  return result;
}

/** The same webhook on `server`: its closed-loop maximum, then open-loop at half of it. */
async function closedThenOpen(server) {
  await server.callTool(await builderKey(server), 'create_hook', { name: HOOK_NAME, type: 'webHook', content: HOOK_CODE });
  const url = `${server.url}/api/webhook/${HOOK_NAME}`;
  await checkedPost(url);
  const closed = await measure(url, { headers: HEADERS, body: BODY });
  return { closed, open: await openLoopAtHalf(url, closed) };
}

async function checkedPost(url) {
  const response = await fetch(url, { method: 'POST', headers: HEADERS, body: BODY });
  const text = await response.text();
  if (response.status !== 200 || JSON.stringify(JSON.parse(text)) !== '{"ok":true}') throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return text;
}
