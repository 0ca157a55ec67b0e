// `npm run bench [name]`: runs the benchmarks (or the one named) and prints one line each:
// `name: ratio (ours N/s vs baseline M/s, p99 X ms)`, ratio = ours / baseline.
// A benchmark is `{ name, target, p99TargetMs?, run() }`; run() resolves with `{ ours, baseline, also?, p99Ms?, p99Label? }`
// (results of measure(); `also` is a figure printed after the verdict; `p99Ms` the latency the target holds, default
// ours.p99Ms) or with `{ line }` for a result that is not a ratio.
import { appPage } from './app-page.mjs';
import { cleanup } from './lib/processes.mjs';
import { mcpRead, mcpVsSdk } from './mcp.mjs';
import { propagation } from './propagation.mjs';
import { dataAccessList, dataAccessUpdate, graphqlUpdate, saveHook } from './records.mjs';
import { startup } from './startup.mjs';
import { storage } from './storage.mjs';
import { webhook } from './webhook.mjs';

const BENCHMARKS = [mcpRead, mcpVsSdk, graphqlUpdate, dataAccessUpdate, dataAccessList, webhook, saveHook, storage, startup, appPage, propagation];

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !BENCHMARKS.some((b) => b.name === name));
if (unknown.length) {
  console.error(`Unknown benchmark ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
  process.exit(2);
}
const selected = wanted.length ? BENCHMARKS.filter((b) => wanted.includes(b.name)) : BENCHMARKS;

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    interrupted = true;
    void cleanup().finally(() => process.exit(130));
  });
}

let failed = false;
try {
  for (const benchmark of selected) {
    try {
      console.log(`${benchmark.name}: ${describe(benchmark, await benchmark.run())}`);
    } catch (error) {
      failed = true;
      if (interrupted) break;
      console.error(`${benchmark.name}: FAILED ${error.stack ?? error}`);
    }
  }
} finally {
  await cleanup();
}
process.exitCode = failed ? 1 : 0;

function describe(benchmark, result) {
  if (result.line) return result.line;
  const { ours, baseline } = result;
  const ratio = (ours.perSecond / baseline.perSecond).toFixed(2);
  const parts = [`ours ${Math.round(ours.perSecond)}/s vs baseline ${Math.round(baseline.perSecond)}/s`, `p50 ${ours.p50Ms} ms`, `p99 ${ours.p99Ms} ms`];
  for (const [side, run] of [['ours', ours], ['baseline', baseline]]) {
    const bad = run.non2xx + run.errors + run.timeouts;
    if (bad > 0) {
      failed = true;
      parts.push(`${side}: ${run.non2xx} non-2xx, ${run.errors} errors, ${run.timeouts} timeouts`);
    }
  }
  let verdict = benchmark.target !== undefined && Number(ratio) < benchmark.target ? `; below target ${benchmark.target}` : '';
  // A benchmark may hold its latency target to another measure than the closed-loop p99 (`p99Ms`, named by `p99Label`).
  const p99 = result.p99Ms ?? ours.p99Ms;
  if (benchmark.p99TargetMs !== undefined && p99 >= benchmark.p99TargetMs) verdict += `; ${result.p99Label ?? 'p99'} not under ${benchmark.p99TargetMs} ms`;
  if (result.also) verdict += `; ${result.also}`;
  return `${ratio} (${parts.join(', ')})${verdict}`;
}
