// Writes test/durations.json from vitest JSON reports: how long each test file took, per suite, so
// that a run on a clean clone (no vitest cache) starts the longest files first (test/helpers/sequencer.ts).
// Usage: node scripts/test-durations.mjs --embedded .ci-results/embedded.json --postgres .ci-results/postgres.json
// (--root DIR when the reports come from another checkout: the folder their file names start with).
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { URL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { embedded: { type: 'string' }, postgres: { type: 'string' }, root: { type: 'string', default: process.cwd() } } });
const target = new URL('../test/durations.json', import.meta.url);
const durations = JSON.parse(readFileSync(target, 'utf8'));
for (const suite of ['embedded', 'postgres']) {
  if (!values[suite]) continue;
  const report = JSON.parse(readFileSync(values[suite], 'utf8'));
  const seconds = {};
  for (const file of report.testResults) {
    seconds[relative(values.root, file.name)] = Math.round((file.endTime - file.startTime) / 100) / 10;
  }
  durations[suite] = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b)));
}
writeFileSync(target, `${JSON.stringify(durations, null, 2)}\n`);
