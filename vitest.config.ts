import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/helpers/sequencer.js';

/**
 * Files that open a database but whose behaviour does not depend on its mode: the sandbox's tests
 * (the hooks' run log and db calls are the statements that hooks.test, hook-runs.test and
 * data-access.test run on PostgreSQL), the browser tests (the pages only speak GraphQL, which the
 * PostgreSQL suite tests directly), the MCP protocol and the hook scheduler. They run in the
 * embedded suite only, to keep `.ci/run` within its budget (docs/decisions.md, D26). Files that
 * open no database at all (`OPENS_A_DATABASE` below) are left out of the PostgreSQL suite without
 * being listed.
 */
const MODE_INDEPENDENT = [
  'src/runtime/service.test.ts',
  'test/e2e/sandbox-suite.test.ts',
  'test/e2e/webhooks.test.ts',
  'test/e2e/hook-fairness.test.ts',
  'test/e2e/mcp-protocol.test.ts',
  'test/e2e/designer.test.ts',
  'test/e2e/designer-admin.test.ts',
  'test/e2e/designer-access.test.ts',
  'test/e2e/designer-tables.test.ts',
  'test/e2e/designer-storage.test.ts',
  'test/e2e/designer-hooks.test.ts',
  'test/e2e/serve-output.test.ts',
  'test/e2e/data-access-bridge.test.ts',
  'test/e2e/app-page.test.ts',
  'test/e2e/feature-editor.test.ts',
  'test/e2e/designer-walk.test.ts',
  'test/e2e/frame-network.test.ts',
  'test/e2e/designer-resilience.test.ts',
  'test/e2e/designer-a11y.test.ts',
  'test/e2e/third-party-clients.test.ts',
  'test/e2e/app-page-resilience.test.ts',
  'test/e2e/compression.test.ts',
  'test/e2e/mcp-tools-contract.test.ts',
];

/**
 * Whether a test file opens a database: a test server or the services (test/helpers), a spawned
 * server or command, a private PostgreSQL server, the suite's template, or its own. A file that
 * opens none (a unit test of pure code, a check of the sources) cannot differ between the modes.
 */
const OPENS_A_DATABASE = /helpers\/(server|services|process|private-postgres|access-matrix|mcp|designer)\.js|inject\(|TRELLIS_TEST_DATABASE|openDatabase|usingPostgres/;
function testFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}
const root = fileURLToPath(new URL('.', import.meta.url));
const OPEN_NO_DATABASE = ['src', 'test']
  .flatMap((folder) => testFiles(join(root, folder)).map((file) => relative(root, file)))
  .filter((file) => !OPENS_A_DATABASE.test(readFileSync(join(root, file), 'utf8')));

/**
 * `.ci/run` runs the two suites side by side (TRELLIS_TEST_SIDE_BY_SIDE=1), and the PostgreSQL one,
 * which has no browser file, ends first: these mode-independent files run in it there instead, so
 * that both end together. `npm test` alone runs them as always.
 */
const IN_POSTGRES_SUITE_SIDE_BY_SIDE = [
  'test/e2e/app-page-resilience.test.ts',
  'test/e2e/designer-a11y.test.ts',
  'test/e2e/designer.test.ts',
  'test/e2e/designer-walk.test.ts',
  'test/e2e/feature-editor.test.ts',
  'test/e2e/designer-resilience.test.ts',
  'test/e2e/designer-access.test.ts',
  'src/runtime/sandbox-pool.test.ts',
];

// A file that depends on the database mode must run in both suites: it cannot move.
const modeIndependent = [...MODE_INDEPENDENT, ...OPEN_NO_DATABASE];
for (const file of IN_POSTGRES_SUITE_SIDE_BY_SIDE) {
  if (!modeIndependent.includes(file)) throw new Error(`${file} moves to the PostgreSQL suite side by side but opens a database and is not in MODE_INDEPENDENT`);
}

const postgresSuite = process.env.TRELLIS_TEST_DATABASE === 'postgres';
const sideBySide = process.env.TRELLIS_TEST_SIDE_BY_SIDE === '1';
const excluded = postgresSuite
  ? modeIndependent.filter((file) => !(sideBySide && IN_POSTGRES_SUITE_SIDE_BY_SIDE.includes(file)))
  : sideBySide
    ? IN_POSTGRES_SUITE_SIDE_BY_SIDE
    : [];

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...excluded],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Time limits catch a test that hangs; they are no speed check (D50). On a 2-core machine whose
    // CPU slows under a sustained load, tests of 10-20 s took three to four times as long side by
    // side, and on a machine 1.6 times slower still, a test that runs PGlite's initdb took 121 s:
    // one limit for every test, no shorter one per test.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    maxWorkers: 2,
    // A worker allocates fast (servers, PGlite, GraphQL documents): a larger young generation
    // spends less of its time in the garbage collector (the suite without its browser files used
    // 230 CPU-seconds in place of 256, D48).
    execArgv: ['--max-semi-space-size=32'],
    // Each worker process imports the modules once for all its files: a fresh module graph per
    // file cost ~0.8 s of CPU each (import 99 s of a 470 s run) and made every server start cold.
    // Test files share no state but what they start themselves (servers, browsers, databases).
    isolate: false,
    sequence: { sequencer: LongestFirstSequencer },
    // `npm run coverage`: statements of the server's code run by the suite, in-process servers
    // and CLI commands included (`runTrellis` runs them in the worker). Not counted: processes the
    // tests spawn (`trellis serve`, the few commands run as a binary) and the web pages' code, which
    // runs in Chromium.
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.test.ts', 'src/web/**'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: '.ci-results/coverage',
      reportOnFailure: true,
    },
  },
});
