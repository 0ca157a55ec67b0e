// The load generator: autocannon, always in a separate process, on loopback, bounded in time.
import { URL, fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runNode, tempFolder } from './processes.mjs';

const WORKER = fileURLToPath(new URL('./load-worker.mjs', import.meta.url));
const OPEN_LOOP_WORKER = fileURLToPath(new URL('./open-loop-worker.mjs', import.meta.url));

/** Seconds each measured load lasts: BENCH_DURATION, 8 by default. */
export const DURATION_S = positiveNumber(process.env.BENCH_DURATION, 8);
/** Seconds of unmeasured load before each measurement (JIT, connection pools): BENCH_WARMUP, 1 by default. */
export const WARMUP_S = positiveNumber(process.env.BENCH_WARMUP, 1, true);
export const CONNECTIONS = 32;

/**
 * Loads `url` with `request` (method, headers, body, or `bodies` to take in turn) from an
 * autocannon process: a warm-up first, then the measured run. Resolves with { perSecond, p99Ms, non2xx, errors, timeouts, requests }.
 */
export async function measure(url, request) {
  assertLoopback(url);
  if (WARMUP_S > 0) await load(url, request, WARMUP_S);
  return load(url, request, DURATION_S);
}

/**
 * Measures two loads on the same server alternately, A B B A, each for half of BENCH_DURATION
 * after its warm-up, so that a drift of the machine or the database during the run (autovacuum,
 * checkpoints, a neighbour's load) weighs on both sides alike instead of on the one measured
 * first. Resolves with [a, b], each combined from its two halves: the mean rate, the larger p99
 * and the summed counts.
 */
export async function measureAlternately(a, b) {
  for (const side of [a, b]) assertLoopback(side.url);
  const half = DURATION_S / 2;
  const once = async (side) => {
    if (WARMUP_S > 0) await load(side.url, side.request, WARMUP_S);
    return load(side.url, side.request, half);
  };
  const a1 = await once(a);
  const b1 = await once(b);
  const b2 = await once(b);
  const a2 = await once(a);
  return [combine(a1, a2), combine(b1, b2)];
}

/**
 * Loads `url` open-loop for BENCH_DURATION seconds after BENCH_WARMUP unmeasured ones: requests (method, headers, body or `bodies` in
 * turn) leave at constant arrival times, `ratePerSecond` of them a second, whatever the answers
 * take, from a separate process (`open-loop-worker.mjs`); each latency counts from the time the
 * request was due. Resolves with { offeredPerSecond, sentPerSecond, requests, p50Ms, p99Ms, maxMs,
 * non2xx, errors, timeouts }.
 */
export async function measureOpenLoop(url, request, ratePerSecond) {
  assertLoopback(url);
  const options = { url, method: 'POST', ...request, rate: ratePerSecond, duration: DURATION_S, warmup: WARMUP_S };
  const optionsFile = join(tempFolder('open-loop'), 'options.json');
  writeFileSync(optionsFile, JSON.stringify(options));
  const { code, stdout, stderr } = await runNode([OPEN_LOOP_WORKER, optionsFile]);
  if (code !== 0) throw new Error(`the open-loop load failed (exit ${code}):\n${stderr}`);
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

/** An open-loop result as one line: `open-loop at 1150/s (half of the closed-loop maximum): p50 2.1 ms, p99 7.9 ms`. */
export function describeOpenLoop(result) {
  const bad = result.non2xx + result.errors + result.timeouts;
  const problems = bad > 0 ? `, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} unanswered` : '';
  return `open-loop at ${Math.round(result.offeredPerSecond)}/s (half of the closed-loop maximum): p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, max ${result.maxMs} ms${problems}`;
}

function combine(first, second) {
  const sum = (key) => first[key] + second[key];
  return {
    requests: sum('requests'),
    perSecond: (first.perSecond + second.perSecond) / 2,
    durationS: sum('durationS'),
    p99Ms: Math.max(first.p99Ms, second.p99Ms),
    p50Ms: Math.max(first.p50Ms, second.p50Ms),
    non2xx: sum('non2xx'),
    errors: sum('errors'),
    timeouts: sum('timeouts'),
  };
}

async function load(url, request, durationS) {
  const options = { url, connections: CONNECTIONS, duration: durationS, method: 'POST', ...request };
  const optionsFile = join(tempFolder('load'), 'options.json');
  writeFileSync(optionsFile, JSON.stringify(options));
  const { code, stdout, stderr } = await runNode([WORKER, optionsFile]);
  if (code !== 0) throw new Error(`autocannon failed (exit ${code}):\n${stderr}`);
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

function assertLoopback(url) {
  const { hostname } = new URL(url);
  if (hostname !== '127.0.0.1' && hostname !== 'localhost' && hostname !== '[::1]') throw new Error(`refusing to load a non-loopback URL: ${url}`);
}

function positiveNumber(raw, fallback, zeroAllowed = false) {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed)) throw new Error(`not a valid number of seconds: ${raw}`);
  return value;
}
