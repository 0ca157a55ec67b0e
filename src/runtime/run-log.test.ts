import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../test/helpers/server.js';
import type { Db } from '../platform/db/index.js';
import { HookRunLog, type HookRunRecord, type RunLogPolicy } from './run-log.js';
import { RESERVOIR_SIZE, RunStats } from './run-stats.js';

let server: TestServer;
let db: Db;

beforeAll(async () => {
  server = await startTestServer();
  db = server.server.services.ctx.db;
});
afterAll(async () => server?.close());

/** A minute every test's runs start in, so that no period boundary splits them. */
const MINUTE = Date.parse('2026-03-02T10:00:00.000Z');
let hooks = 0;

/** A run of `hookId` that started `offsetMs` into MINUTE. */
function runOf(hookId: string, offsetMs: number, changes: Partial<HookRunRecord> = {}): HookRunRecord {
  return {
    hookId,
    hookName: hookId,
    trigger: 'webHook',
    startedAt: new Date(MINUTE + offsetMs),
    durationMs: 2,
    outcome: 'ok',
    console: [],
    error: null,
    input: { n: offsetMs },
    output: { ok: true },
    queuedMs: 0,
    requestId: null,
    httpStatus: 200,
    ...changes,
  };
}

function runLog(policy: Partial<RunLogPolicy> = {}): HookRunLog {
  return new HookRunLog(db, server.server.services.ctx.logger, { samplesPerMinute: 5, periodMs: 60_000, ...policy });
}

function newHookId(): string {
  hooks += 1;
  return `run-log-test-${hooks}`;
}

async function storedRuns(hookId: string) {
  return db.selectFrom('hook_runs').selectAll().where('hook_name', '=', hookId).orderBy('id').execute();
}

async function storedStats(hookId: string) {
  return db.selectFrom('hook_run_stats').selectAll().where('hook_id', '=', hookId).orderBy('period_start').execute();
}

describe('the run log keeps every failure and a sample of successes', () => {
  it('keeps a failure whole among 3000 successes, of which it keeps 5 and the latest, and counts all 3001', async () => {
    const hookId = newHookId();
    const log = runLog();
    const failure = runOf(hookId, 1500, {
      outcome: 'error',
      httpStatus: 500,
      error: 'total must not be negative',
      console: ['[log] checking {"total":-1}'],
      input: { total: -1, note: 'x'.repeat(3000) },
      output: null,
      durationMs: 7,
    });
    for (let n = 0; n < 3000; n++) {
      if (n === 1500) log.record(failure);
      log.record(runOf(hookId, n < 1500 ? n : n + 1));
    }
    await log.close();

    const rows = await storedRuns(hookId);
    const failed = rows.filter((row) => row.outcome === 'error');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ error: failure.error, console: failure.console, input: failure.input, http_status: 500, duration_ms: 7 });
    const kept = rows.filter((row) => row.outcome === 'ok').map((row) => (row.input as { n: number }).n);
    expect(kept).toEqual([0, 1, 2, 3, 4, 3000]);

    const [stats] = await storedStats(hookId);
    expect(stats).toMatchObject({ runs: 3001, errors: 1, refused: 0, timeouts: 0, memory: 0, period_ms: 60_000, duration_max_ms: 7 });
    expect(stats!.period_start.getTime()).toBe(MINUTE);
  });

  it.each([
    ['error', { outcome: 'error', httpStatus: 500 }, 'errors'],
    ['timeout', { outcome: 'timeout', httpStatus: 500 }, 'timeouts'],
    ['memory', { outcome: 'memory', httpStatus: null }, 'memory'],
    ['a webhook answering 401', { outcome: 'refused', httpStatus: 401 }, 'refused'],
  ] as const)('keeps every run that failed with %s, beyond any sample, and counts it by outcome', async (_case, failedAs, column) => {
    const hookId = newHookId();
    const log = runLog({ samplesPerMinute: 0 });
    for (let n = 0; n < 20; n++) log.record(runOf(hookId, n, n % 2 === 0 ? failedAs : {}));
    await log.close();
    const rows = await storedRuns(hookId);
    expect(rows.filter((row) => row.outcome === failedAs.outcome)).toHaveLength(10);
    // No sample: of the successes only the latest is kept.
    expect(rows.filter((row) => row.outcome === 'ok').map((row) => (row.input as { n: number }).n)).toEqual([19]);
    expect((await storedStats(hookId))[0]).toMatchObject({ runs: 20, [column]: 10 });
  });

  it('keeps a run asked to be kept (a test run) beyond the sample', async () => {
    const hookId = newHookId();
    const log = runLog({ samplesPerMinute: 1 });
    log.record(runOf(hookId, 0));
    log.record(runOf(hookId, 1), true);
    log.record(runOf(hookId, 2), true);
    await log.close();
    expect((await storedRuns(hookId)).map((row) => (row.input as { n: number }).n)).toEqual([0, 1, 2]);
  });

  it('samples again in the next period', async () => {
    const hookId = newHookId();
    const log = runLog({ samplesPerMinute: 2 });
    for (const offset of [0, 1, 2, 3, 60_000, 60_001, 60_002]) log.record(runOf(hookId, offset));
    await log.close();
    expect((await storedRuns(hookId)).map((row) => (row.input as { n: number }).n)).toEqual([0, 1, 60_000, 60_001, 60_002]);
    expect((await storedStats(hookId)).map((row) => row.runs)).toEqual([4, 3]);
  });

  it('writes the latest run and the counts of each period once it has ended, without a flush', async () => {
    const hookId = newHookId();
    const log = runLog({ samplesPerMinute: 0, periodMs: 200 });
    const startedAt = Date.now();
    for (let n = 0; n < 5; n++) log.record({ ...runOf(hookId, n), startedAt: new Date(startedAt), input: { n } });
    await expect.poll(() => storedStats(hookId), { interval: 50 }).toHaveLength(1);
    expect((await storedStats(hookId))[0]!.runs).toBe(5);
    await expect.poll(async () => (await storedRuns(hookId)).map((row) => (row.input as { n: number }).n)).toEqual([4]);
    await log.close();
  });
});

describe('counts from several replicas', () => {
  it('add up in one row per hook and period, with the exact maximum and merged percentiles', async () => {
    const hookId = newHookId();
    const [first, second] = [runLog(), runLog()];
    for (let n = 0; n < 100; n++) first.record(runOf(hookId, n, { durationMs: 10, queuedMs: 1 }));
    for (let n = 0; n < 300; n++) second.record(runOf(hookId, n, { durationMs: 30, queuedMs: n === 7 ? 250 : 3, outcome: n < 3 ? 'timeout' : 'ok' }));
    await first.close();
    await second.close();
    const stats = await storedStats(hookId);
    expect(stats).toHaveLength(1);
    // (10 × 100 + 30 × 300) / 400: the weighted mean of the two p50s, the approximation the merge makes.
    expect(stats[0]).toMatchObject({ runs: 400, timeouts: 3, duration_p50_ms: 25, duration_p95_ms: 25, duration_max_ms: 30, queued_max_ms: 250 });
  });
});

describe('RunStats', () => {
  it('gives exact percentiles up to the reservoir size and a uniform estimate beyond it', () => {
    const stats = new RunStats(60_000);
    for (let ms = 1; ms <= 100; ms++) stats.add(runOf('exact', 0, { durationMs: ms }));
    for (let n = 0; n < 50 * RESERVOIR_SIZE; n++) stats.add(runOf('sampled', 0, { durationMs: n % 100 }));
    const [exact, sampled] = stats.take(MINUTE + 60_000);
    expect(exact).toMatchObject({ runs: 100, durationP50Ms: 50, durationP95Ms: 95, durationMaxMs: 100 });
    expect(sampled!.runs).toBe(50 * RESERVOIR_SIZE);
    expect(sampled!.durationP50Ms).toBeGreaterThan(35);
    expect(sampled!.durationP50Ms).toBeLessThan(65);
    expect(sampled!.durationMaxMs).toBe(99);
  });

  it('hands over only the periods that have ended, unless asked for all', () => {
    const stats = new RunStats(60_000);
    stats.add(runOf('a', 0));
    stats.add(runOf('a', 60_000));
    expect(stats.take(MINUTE + 60_000).map((row) => row.periodStart.getTime())).toEqual([MINUTE]);
    expect(stats.take(MINUTE + 60_000, true).map((row) => row.periodStart.getTime())).toEqual([MINUTE + 60_000]);
    expect(stats.counting).toBe(false);
  });
});
