import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_ENV } from '../helpers/env.js';
import { spawnServer, type SpawnedServer } from '../helpers/process.js';
import { createPostgresDatabase, gqlData, graphqlClient, login, usingPostgres } from '../helpers/server.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Three replicas on one PostgreSQL database, restarted one after the other (SIGTERM, then a new
 * process) while clients write through all of them, as a rolling deploy does. Every write answered
 * 2xx is stored, every webhook call answered 2xx has its run in the log, each replica stops with
 * exit code 0, and the e-mails queued on a replica that stopped are delivered by the others.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe.runIf(usingPostgres)('a rolling restart of three replicas under load', () => {
  it('loses no write answered 2xx, no run of an answered webhook and no queued e-mail', async () => {
    const database = await createPostgresDatabase();
    cleanups.push(() => database.drop());
    const smtp: SmtpReceiver = await startSmtpReceiver();
    cleanups.push(() => smtp.close());
    const env = {
      ...TEST_ENV,
      TRELLIS_DATABASE_URL: database.url,
      TRELLIS_LOG_LEVEL: 'error',
      TRELLIS_WEBHOOK_RATE_LIMIT: '100000',
      // Every acknowledged call is looked for in the run log, not only the sampled ones.
      TRELLIS_RUN_LOG_SAMPLES_PER_MINUTE: '100000',
      TRELLIS_SMTP_URL: smtp.url,
      TRELLIS_MAIL_RETRY_BASE_MS: '200',
    };
    const start = async () => {
      const replica = await spawnServer(env, 90_000);
      cleanups.push(() => void replica.child.kill('SIGKILL'));
      return replica;
    };
    const replicas: SpawnedServer[] = [await start()];
    replicas.push(...(await Promise.all([start(), start()])));
    // Sessions live in the database: one sign-in works on every replica.
    const session = await login(replicas[0]!.url);
    const owner = graphqlClient(replicas[0]!.url, session);
    await gqlData(owner, 'mutation { createTable(name: "Notes", fields: [{ name: "seq", type: "number", required: true }]) { _id } }');
    await gqlData(owner, 'mutation($c: String!) { createHook(name: "echo", type: "webHook", content: $c) { _id } }', { c: 'async function (body) { return { seq: body.seq }; }' });

    const acked = { notes: new Set<number>(), webhooks: new Set<number>(), hooks: [] as string[] };
    const outcomes: Record<string, number> = {};
    const count = (what: string) => (outcomes[what] = (outcomes[what] ?? 0) + 1);
    let next = 0;
    let running = true;
    const writer = async (lane: number) => {
      for (let turn = lane; running; turn++) {
        const replica = replicas[turn % replicas.length]!;
        const seq = next++;
        try {
          if (seq % 2 === 0) {
            const answer = await fetch(`${replica.url}/graphql`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${session}` },
              body: JSON.stringify({ query: 'mutation($s: Float!) { createNotes(data: { seq: $s }) { _id } }', variables: { s: seq } }),
            });
            const body = (await answer.json()) as { data?: unknown; errors?: unknown };
            if (answer.status === 200 && !body.errors) acked.notes.add(seq);
            count(`graphql ${answer.status}`);
          } else {
            const answer = await fetch(`${replica.url}/api/webhook/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ seq }) });
            if (answer.status === 200 && ((await answer.json()) as { seq: number }).seq === seq) acked.webhooks.add(seq);
            else await answer.arrayBuffer();
            count(`webhook ${answer.status}`);
          }
        } catch {
          // A replica that is stopping closes its connections: no answer, so nothing was promised.
          count('no answer');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    };
    const writers = Array.from({ length: 4 }, (_, lane) => writer(lane));
    const progress = async (more: number) => {
      const target = acked.notes.size + acked.webhooks.size + more;
      await waitFor(`${more} more acknowledged writes`, () => acked.notes.size + acked.webhooks.size >= target, 60_000);
    };

    await progress(40);
    for (let i = 0; i < replicas.length; i++) {
      // A configuration change on the replica about to stop queues an e-mail it may not send itself.
      const name = `hook-before-restart-${i}`;
      await gqlData(graphqlClient(replicas[i]!.url, session), 'mutation($n: String!) { createHook(name: $n, type: "webHook", content: "async () => 1") { _id } }', { n: name });
      acked.hooks.push(name);
      expect(await replicas[i]!.stop()).toBe(0);
      replicas[i] = await start();
      await progress(20);
    }
    running = false;
    await Promise.all(writers);

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    cleanups.push(() => client.end());
    const reader = graphqlClient(replicas[0]!.url, session);
    const stored = new Set<number>();
    for (let offset = 0; ; offset += 500) {
      const page: { items: { seq: number }[]; total: number } = (await gqlData(reader, 'query($o: Int) { listNotes(limit: 500, offset: $o) { items { seq } total } }', { o: offset })).listNotes;
      for (const item of page.items) stored.add(item.seq);
      if (offset + 500 >= page.total) break;
    }
    expect([...acked.notes].filter((seq) => !stored.has(seq))).toEqual([]);
    // The replicas still running write their last run-log batch within moments; the stopped ones wrote theirs at the stop.
    const runs = await waitFor('a run in the log for every answered webhook call', async () => {
      const rows = (await client.query<{ seq: number }>(`select (output->>'seq')::int as seq from hook_runs where hook_name = 'echo' and outcome = 'ok'`)).rows;
      const seqs = new Set(rows.map((row) => row.seq));
      return [...acked.webhooks].every((seq) => seqs.has(seq)) ? seqs : undefined;
    });
    expect(runs.size).toBeGreaterThanOrEqual(acked.webhooks.size);
    // Every e-mail queued before a restart is delivered (at least once) by some replica.
    await waitFor('the e-mails of the hooks created before each restart', () => acked.hooks.every((name) => smtp.mails.some((mail) => mail.subject.includes(`"${name}"`))), 30_000);
    expect(acked.notes.size).toBeGreaterThan(30);
    expect(acked.webhooks.size).toBeGreaterThan(30);
    for (const replica of replicas) expect(await replica.stop()).toBe(0);
    console.log(`rolling restart: ${acked.notes.size} records and ${acked.webhooks.size} webhook calls acknowledged, all kept; answers ${JSON.stringify(outcomes)}`);
  });
});
