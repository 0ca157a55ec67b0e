/* global fetch, performance */
// The startup benchmark: `trellis serve` to /readyz 200 on an empty and on an existing data folder
// (embedded PGlite), and the resident memory of the idle server.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildIfNeeded } from '../scripts/build.mjs';
import { startNode, tempFolder } from './lib/processes.mjs';
import { OWNER_EMAIL, POSTGRES_ADMIN_URL, TRELLIS_BIN, startTrellis } from './lib/trellis.mjs';

const EXISTING_STARTS = 3;
const PGLITE_ALONE_RUNS = 3;
const IDLE_MS = 2_000;
// Idle RSS: within 60 MB of PGlite alone, opened on the same folder in a bare Node process (measured in the same run).
const TARGETS = { emptyS: 3, existingS: 1, rssOverPgliteMb: 60, postgresRssMb: 120 };
const POSTGRES_STARTS = 3;

/**
 * Prints `startup: empty 2.6 s, existing 0.7 s, idle RSS 210 MB (PGlite alone 160 MB, +50), on PostgreSQL 100 MB` (existing:
 * median of 3 starts; RSS: the median of the four servers after 2 s idle, against the median of PGlite alone reopened 3 times
 * on that folder; on PostgreSQL: the median of 3 servers, each on a new database of the local server).
 */
export const startup = {
  name: 'startup',
  async run() {
    await buildIfNeeded();
    const env = {
      PORT: '0',
      HOST: '127.0.0.1',
      TRELLIS_DATA_DIR: tempFolder('startup'),
      TRELLIS_DATABASE_URL: undefined,
      TRELLIS_ADMIN_EMAIL: OWNER_EMAIL,
      TRELLIS_ADMIN_PASSWORD: `bench-${randomBytes(8).toString('hex')}`,
      TRELLIS_LOG_LEVEL: 'warn',
      // As `npm start` and bin/trellis.mjs set it (D28).
      MALLOC_TRIM_THRESHOLD_: '131072',
    };
    const empty = await timedStart(env);
    const existing = [];
    for (let i = 0; i < EXISTING_STARTS; i++) existing.push(await timedStart(env));
    const emptyS = empty.seconds;
    const existingS = median(existing.map((start) => start.seconds));
    // Medians: the RSS of the same process idling on the same folder varies by 40 MB from run to run (when V8 and PGlite's
    // heaps last grew and collected), so one sample of each side says little.
    const rssMb = median([empty.rssMb, ...existing.map((start) => start.rssMb)]);
    const alone = [];
    for (let i = 0; i < PGLITE_ALONE_RUNS; i++) alone.push(await pgliteAloneMb(join(env.TRELLIS_DATA_DIR, 'pgdata')));
    const pgliteMb = median(alone);
    const overMb = rssMb - pgliteMb;
    const onPostgres = [];
    for (let i = 0; i < POSTGRES_STARTS; i++) onPostgres.push(await postgresIdleMb());
    const postgresMb = median(onPostgres);
    const missed = [
      emptyS >= TARGETS.emptyS && `empty not under ${TARGETS.emptyS} s`,
      existingS >= TARGETS.existingS && `existing not under ${TARGETS.existingS} s`,
      overMb > TARGETS.rssOverPgliteMb && `idle RSS more than ${TARGETS.rssOverPgliteMb} MB over PGlite alone`,
      postgresMb >= TARGETS.postgresRssMb && `idle RSS on PostgreSQL not under ${TARGETS.postgresRssMb} MB`,
    ].filter(Boolean);
    const line = `empty ${emptyS.toFixed(1)} s, existing ${existingS.toFixed(2)} s, idle RSS ${Math.round(rssMb)} MB (PGlite alone ${Math.round(pgliteMb)} MB, ${overMb >= 0 ? '+' : ''}${Math.round(overMb)}), on PostgreSQL ${Math.round(postgresMb)} MB`;
    return { line: missed.length ? `${line}; ${missed.join(', ')}` : line };
  },
};

/** Starts the server, times spawn to the first /readyz 200, optionally reads its idle RSS, stops it. */
async function timedStart(env) {
  const started = performance.now();
  const server = await startNode([TRELLIS_BIN, 'serve'], { env, ready: /listening on (http:\/\/\S+)/, label: 'trellis serve' });
  try {
    await readyz(server.match);
    const seconds = (performance.now() - started) / 1000;
    await sleep(IDLE_MS);
    return { seconds, rssMb: residentMb(server.child.pid) };
  } finally {
    await server.stop();
  }
}

/** The idle RSS of a server on a new database of the local PostgreSQL server, 2 s after /readyz. */
async function postgresIdleMb() {
  const server = await startTrellis({ postgresAdminUrl: POSTGRES_ADMIN_URL, env: { MALLOC_TRIM_THRESHOLD_: '131072' } });
  try {
    await readyz(server.url);
    await sleep(IDLE_MS);
    return residentMb(server.pid);
  } finally {
    await server.stop();
  }
}

/** The idle RSS of a bare Node process that opens PGlite on `folder` (as the server does) and answers one query. */
async function pgliteAloneMb(folder) {
  const module = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const script = `const { PGlite } = await import(process.argv[1]); const db = await PGlite.create(process.argv[2], { postgresqlconf: ['shared_buffers = 16MB', 'wal_buffers = 1MB'] }); await db.query('select 1'); console.log('open'); setInterval(() => {}, 1000);`;
  // With the server's malloc setting, so that the difference is what the server adds.
  const alone = await startNode(['--input-type=module', '-e', script, module, folder], { env: { MALLOC_TRIM_THRESHOLD_: '131072' }, ready: /(open)/, label: 'PGlite alone' });
  try {
    await sleep(IDLE_MS);
    return residentMb(alone.child.pid);
  } finally {
    await alone.stop();
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function readyz(url) {
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    const response = await fetch(`${url}/readyz`).catch(() => undefined);
    if (response?.status === 200) return;
    await response?.arrayBuffer();
    await sleep(5);
  }
  throw new Error(`${url}/readyz did not answer 200 within 60 s`);
}

function residentMb(pid) {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) / 1024;
}
