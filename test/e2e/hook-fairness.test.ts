import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Fair hook scheduling: one webhook flooded with calls that each hold a worker (awaiting a slow
 * host call) does not starve another webhook, whose latency stays within twice its idle value,
 * and the run log shows how long the flood's runs waited for a worker.
 */
let server: TestServer;
let slow: Server;
const release: (() => void)[] = [];

const WORKERS = 4;
const FLOOD = 12;
const SAMPLES = 100;

beforeAll(async () => {
  slow = createServer((_request, response) => {
    release.push(() => response.end('{"ok":true}'));
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  const port = (slow.address() as AddressInfo).port;
  server = await startTestServer({ TRELLIS_HOOK_EGRESS_ALLOW: `127.0.0.1:${port}`, TRELLIS_HOOK_WORKERS: String(WORKERS), TRELLIS_WEBHOOK_RATE_LIMIT: '100000' });
  const owner = graphqlClient(server.url, await login(server.url));
  await gqlData(owner, 'mutation($c: String!) { createHook(name: "flood", type: "webHook", content: $c) { _id } }', {
    c: `async function (body) { const r = await fetch('http://127.0.0.1:${port}/hold'); return r.json(); }`,
  });
  await gqlData(owner, 'mutation($c: String!) { createHook(name: "quick", type: "webHook", content: $c) { _id } }', { c: 'async function (body) { return { n: body.n }; }' });
});

afterAll(async () => {
  slow?.closeAllConnections();
  release.forEach((answer) => answer());
  await server?.close();
  await new Promise((resolve) => slow?.close(resolve));
});

async function latencies(): Promise<number[]> {
  const times: number[] = [];
  for (let n = 0; n < SAMPLES; n++) {
    const started = performance.now();
    const answer = await postJson(`${server.url}/api/webhook/quick`, { n });
    expect(answer.body).toEqual({ n });
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

const p99 = (sorted: number[]) => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;

describe('hook scheduling', () => {
  it('keeps a webhook answering while another floods every worker, and records the wait', { timeout: 60_000 }, async () => {
    await latencies(); // starts the workers and compiles the hook
    const idle = p99(await latencies());
    const flood = Array.from({ length: FLOOD }, (_, i) => postJson(`${server.url}/api/webhook/flood`, { i }));
    // Until the flood holds what it may: WORKERS - 1 runs waiting on the slow server.
    for (let i = 0; i < 200 && release.length < WORKERS - 1; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(release.length).toBe(WORKERS - 1);
    const busy = p99(await latencies());
    // The flood never held the last worker while another hook waited.
    expect(release.length).toBe(WORKERS - 1);
    // Below 15 ms the noise of a 2-core machine running another test file beside this one dominates;
    // unfair scheduling costs the flood's whole hold (seconds).
    const slowest = Math.max(idle, 15);
    expect(busy, `p99 ${busy.toFixed(1)} ms under the flood, ${idle.toFixed(1)} ms idle`).toBeLessThanOrEqual(2 * slowest);
    console.log(`quick webhook p99: ${idle.toFixed(1)} ms idle, ${busy.toFixed(1)} ms while ${FLOOD} calls of another held ${WORKERS - 1} of ${WORKERS} workers`);
    // Let the flood through: each held call is answered, the next ones take their workers.
    while (release.length || (await Promise.race([Promise.all(flood).then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 20))])) === false) {
      release.splice(0).forEach((answer) => answer());
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const answers = await Promise.all(flood);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    await server.server.services.hookRuntime.flushRunLog();
    const owner = graphqlClient(server.url, await login(server.url));
    const runs = (await gqlData(owner, '{ hookRuns(limit: 100) { runs { hookName queuedMs } } }')).hookRuns.runs as { hookName: string; queuedMs: number }[];
    const floodWaits = runs.filter((run) => run.hookName === 'flood').map((run) => run.queuedMs);
    expect(floodWaits).toHaveLength(FLOOD);
    // The runs beyond the first WORKERS - 1 waited for a worker, and the run log says so.
    expect(floodWaits.filter((wait) => wait > 20).length).toBeGreaterThanOrEqual(FLOOD - (WORKERS - 1));
  });
});
