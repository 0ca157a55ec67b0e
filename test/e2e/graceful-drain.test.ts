import { afterAll, describe, expect, it } from 'vitest';
import { TEST_ENV } from '../helpers/env.js';
import { spawnServer, type SpawnedServer } from '../helpers/process.js';
import { freshDataEnv, gqlData, graphqlClient, login } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A graceful stop (SIGTERM) while requests and hook runs are in flight, then a restart on the same
 * data: every request the server answered 2xx is kept, the others got no answer they could take
 * for a success (503 while closing, or no connection), and the run counts (hook_run_stats) hold every
 * webhook call that was answered (the period in progress written at the stop).
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('a graceful stop under load', () => {
  it('keeps every write answered 2xx, refuses the rest cleanly, and counts the run of every answered webhook', async () => {
    const env = { ...TEST_ENV, ...(await freshDataEnv(cleanups, 'trellis-drain-')), TRELLIS_LOG_LEVEL: 'error', TRELLIS_WEBHOOK_RATE_LIMIT: '100000' };
    let server: SpawnedServer = await spawnServer(env, 60_000);
    cleanups.push(() => void server.child.kill('SIGKILL'));
    const owner = graphqlClient(server.url, await login(server.url));
    await gqlData(owner, 'mutation { createTable(name: "Notes", fields: [{ name: "seq", type: "number", required: true }]) { _id } }');
    await gqlData(owner, 'mutation($c: String!) { createHook(name: "echo", type: "webHook", content: $c) { _id } }', { c: 'async function (body) { return { seq: body.seq }; }' });

    const answered = { notes: new Set<number>(), webhooks: new Set<number>() };
    const outcomes: Record<string, number> = {};
    const count = (what: string) => (outcomes[what] = (outcomes[what] ?? 0) + 1);
    let stopping = false;
    let closed = false;
    const classify = (error: unknown) => {
      const code = String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message);
      // Not answered: refused once the server has closed, or reset when the listening socket closed
      // with the connection still in its backlog (the kernel's doing: a load balancer stops sending
      // before the stop for that). Either way the client got no answer and must retry.
      count(code === 'ECONNREFUSED' ? 'refused' : code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' ? 'reset' : `broken ${code}`);
    };
    const writer = async (worker: number) => {
      for (let i = 1; !closed; i++) {
        const seq = worker * 1_000_000 + i;
        try {
          const result = await owner(`mutation { createNotes(data: { seq: ${seq} }) { _id } }`);
          if (result.status === 200 && !result.body.errors) {
            answered.notes.add(seq);
            count('2xx');
          } else count(String(result.status));
        } catch (error) {
          classify(error);
          if (stopping) return;
        }
      }
    };
    const caller = async (worker: number) => {
      for (let i = 1; !closed; i++) {
        const seq = worker * 1_000_000 + i;
        try {
          const response = await fetch(`${server.url}/api/webhook/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ seq }) });
          const body = (await response.json()) as { seq?: number };
          if (response.status === 200 && body.seq === seq) {
            answered.webhooks.add(seq);
            count('2xx');
          } else count(String(response.status));
        } catch (error) {
          classify(error);
          if (stopping) return;
        }
      }
    };
    const load = [writer(1), writer(2), caller(3), caller(4)];
    // Stopped once writes and webhook calls have been answered (however slow the machine), and not
    // before 1.5 s, so that many are in flight.
    const started = performance.now();
    await Promise.all([
      new Promise((resolve) => setTimeout(resolve, 1500)),
      waitFor('answered writes and webhook calls', () => answered.notes.size > 0 && answered.webhooks.size > 0, 60_000),
    ]);
    stopping = true;
    const stopAt = performance.now();
    const code = await server.stop();
    closed = true;
    await Promise.all(load);
    const stopMs = Math.round(performance.now() - stopAt);
    expect(code).toBe(0);
    expect(Object.keys(outcomes).filter((what) => what.startsWith('broken')), JSON.stringify(outcomes)).toEqual([]);
    expect(Object.keys(outcomes).every((what) => ['2xx', '503', 'refused', 'reset'].includes(what)), JSON.stringify(outcomes)).toBe(true);

    server = await spawnServer(env, 60_000);
    const after = graphqlClient(server.url, await login(server.url));
    const stored = new Set<number>();
    for (let offset = 0; ; offset += 500) {
      const page: { items: { seq: number }[]; total: number } = (await gqlData(after, 'query($o: Int) { listNotes(limit: 500, offset: $o) { items { seq } total } }', { o: offset })).listNotes;
      for (const note of page.items) stored.add(note.seq);
      if (offset + 500 >= page.total) break;
    }
    for (const seq of answered.notes) expect(stored.has(seq), `answered note ${seq}`).toBe(true);
    const runs = await countRuns(after);
    expect(runs).toBeGreaterThanOrEqual(answered.webhooks.size);
    console.log(`SIGTERM after ${((stopAt - started) / 1000).toFixed(1)} s, stopped in ${stopMs} ms: ${JSON.stringify(outcomes)}; ${answered.notes.size} answered writes kept, ${answered.webhooks.size} answered webhook calls, ${runs} runs in the log`);
    await server.stop();
  });
});

/** The successful runs counted in the last hour: the run log keeps only a sample of them whole. */
async function countRuns(gql: ReturnType<typeof graphqlClient>): Promise<number> {
  const periods: { runs: number; failures: number }[] = (await gqlData(gql, '{ hookRunStats { runs failures } }')).hookRunStats;
  return periods.reduce((total, period) => total + period.runs - period.failures, 0);
}
