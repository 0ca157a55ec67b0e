import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OWNER, TEST_ENV } from '../helpers/env.js';
import { spawnServer, type SpawnedServer } from '../helpers/process.js';
import { gqlData, graphqlClient, login, usingPostgres } from '../helpers/server.js';

// Promise chains that never end: each is stopped at the CPU limit (200 ms: with more, a chain that
// keeps its promises runs out of memory first, which rejects its last job), and the engine it ran in is
// released afterwards. A handle leaked on that path makes QuickJS print an assertion
// (`list_empty(&rt->gc_obj_list)`) when the runtime is freed.
const ENDLESS_CHAINS = [
  'async () => { const f = () => Promise.resolve().then(f); f(); }',
  'async () => { const f = () => Promise.resolve().then(f); return f(); }',
  'async () => { const f = () => Promise.resolve().then(f); f(); await new Promise(() => {}); }',
  'async () => { const f = async () => { await null; return f(); }; return f(); }',
];

describe.runIf(!usingPostgres)('the hook engine on a server process', () => {
  let server: SpawnedServer;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-engine-'));
    cpSync(inject('pgliteTemplate'), dir, { recursive: true });
    server = await spawnServer({ ...TEST_ENV, TRELLIS_DATA_DIR: dir, TRELLIS_WEBHOOK_RATE_LIMIT: '1000', TRELLIS_LOG_LEVEL: 'silent', TRELLIS_HOOK_CPU_MS: '200' });
  });

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops endless promise chains as timeouts and prints no engine assertion, also when it stops', async () => {
    const gql = graphqlClient(server.url, await login(server.url, OWNER.email, OWNER.password));
    for (const [i, content] of ENDLESS_CHAINS.entries()) {
      await gqlData(gql, 'mutation($n: String!, $c: String!) { createHook(name: $n, type: "webHook", content: $c) { _id } }', { n: `chain${i}`, c: content });
      for (let run = 0; run < 2; run++) {
        const response = await fetch(`${server.url}/api/webhook/chain${i}`, { method: 'POST' });
        expect(response.status).toBe(500);
        expect(((await response.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe('timeout');
      }
    }
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
    expect(server.output()).not.toMatch(/assert|list_empty|Aborted|RuntimeError/i);
  });
});
