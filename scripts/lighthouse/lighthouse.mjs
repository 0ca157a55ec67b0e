#!/usr/bin/env node
/* global fetch, localStorage */
// Lighthouse (performance, accessibility, best practices) of the web pages, not in CI: a server on a
// fresh embedded database with a table of 200 records and a published feature that lists them, then
// LIGHTHOUSE_RUNS (5) runs per page and form factor (Lighthouse's mobile and desktop presets) in
// Debian's Chromium. Prints the median score of each category per page and form factor, and writes
// them with what costs the most in the run of median performance to .ci-results/lighthouse.json.
//
//   npm run lighthouse
//   LIGHTHOUSE_RUNS=1 LIGHTHOUSE_PAGES=sign-in,app npm run lighthouse
//
// Lighthouse has its own manifest and lockfile beside this script (156 packages the project's own
// install, which CI runs each time, need not fetch): the first run installs them with `npm ci`.
//
// The signed-in pages read the session from localStorage (src/web/shared/session.ts), which
// Lighthouse's storage reset leaves in place: it is stored once in the browser's profile.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { atCleanup, cleanup, tempFolder } from '../../bench/lib/processes.mjs';
import { OWNER_EMAIL, startTrellis } from '../../bench/lib/trellis.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
if (!existsSync(join(HERE, 'node_modules', 'lighthouse', 'package.json'))) {
  console.error('Installing Lighthouse (scripts/lighthouse/package-lock.json), once…');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: HERE, stdio: ['ignore', 'ignore', 'inherit'] });
}
const { default: lighthouse, desktopConfig } = await import('lighthouse');

const RUNS = Number(process.env.LIGHTHOUSE_RUNS ?? 5);
const CHROMIUM = process.env.TRELLIS_TEST_CHROMIUM ?? '/usr/bin/chromium';
const RECORDS = 200;
const CATEGORIES = ['performance', 'accessibility', 'best-practices'];
const FORM_FACTORS = { mobile: undefined, desktop: desktopConfig };
const RESULTS = join(HERE, '..', '..', '.ci-results', 'lighthouse.json');

const FEATURE = `import { useQuery } from '@trellis/runtime';
import { Heading, Table, Text } from '@trellis/ui';

const LIST = \`query { listItems(sort: [{ field: position }], limit: ${RECORDS}) { items { _id position title amount } total } }\`;

export default function Items() {
  const { data, loading, error } = useQuery(LIST);
  if (error) return <Text>{error.message}</Text>;
  if (loading && !data) return <Text>Loading…</Text>;
  return (
    <div>
      <Heading>Items</Heading>
      <Text>{data.listItems.total} items</Text>
      <Table rows={data.listItems.items} columns={[{ key: 'position', header: 'Position' }, { key: 'title', header: 'Title' }, { key: 'amount', header: 'Amount' }]} />
    </div>
  );
}
`;

/** The pages measured: path, and whether the browser holds the owner's session. */
const PAGES = [
  { name: 'sign-in', title: 'Designer: sign-in', path: '/', signedIn: false },
  { name: 'features', title: 'Designer: Features', path: '/#/features', signedIn: true },
  { name: 'editor', title: 'Designer: feature editor', path: '/#/features/items', signedIn: true },
  { name: 'app', title: 'Application: feature open', path: '/app/feature/items', signedIn: true },
].filter((page) => !process.env.LIGHTHOUSE_PAGES || process.env.LIGHTHOUSE_PAGES.split(',').includes(page.name));

process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));

try {
  await main();
} finally {
  await cleanup();
}

async function main() {
  const trellis = await startTrellis();
  const session = await seed(trellis);
  const browser = await launchChromium(trellis.url);
  const results = [];
  for (const page of PAGES) {
    await browser.holdSession(page.signedIn ? session : null);
    for (const [formFactor, config] of Object.entries(FORM_FACTORS)) {
      const runs = [];
      for (let run = 0; run < RUNS; run++) {
        const { lhr } = await lighthouse(`${trellis.url}${page.path}`, { port: browser.port, output: 'json', logLevel: 'error', onlyCategories: CATEGORIES }, config);
        if (lhr.runtimeError) throw new Error(`${page.title} (${formFactor}): ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
        runs.push(lhr);
      }
      const result = summary(page, formFactor, runs);
      console.error(`${page.title}, ${formFactor}: ${CATEGORIES.map((category) => `${category} ${result.median[category]}`).join(', ')}`);
      results.push(result);
    }
  }
  printTable(results);
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify({ runs: RUNS, records: RECORDS, chromium: results[0]?.userAgent, results }, null, 2)}\n`);
  console.log(`\nWritten: ${RESULTS}`);
}

/** The owner's session, a table of RECORDS records and the published feature that lists them, in a menu. */
async function seed(trellis) {
  const login = await post(`${trellis.url}/api/auth/login`, { email: OWNER_EMAIL, password: trellis.env.TRELLIS_ADMIN_PASSWORD });
  const gql = (query, variables = {}) => post(`${trellis.url}/graphql`, { query, variables }, { authorization: `Bearer ${login.token}` });
  await gql('mutation { createTable(name: "Items", fields: [{ name: "position", type: "number" }, { name: "title", type: "text" }, { name: "amount", type: "number" }]) { _id } }');
  for (let i = 1; i <= RECORDS; i++) await gql('mutation($d: ItemsInput!) { createItems(data: $d) { _id } }', { d: { position: i, title: `Item ${i}`, amount: i * 10 } });
  await gql('mutation($c: String!) { createFeature(_id: "items", name: "Items", customCode: $c, status: "published") { _id } }', { c: FEATURE });
  await gql('mutation { upsertMenu(name: "Main", entries: [{ label: "Items", path: "/feature/items" }]) { created } }');
  return { token: login.token, expiresAt: Date.now() + login.expires_in * 1000, email: OWNER_EMAIL };
}

/**
 * Chromium with a profile of its own and a DevTools port for Lighthouse. `holdSession` stores the
 * session in the profile's localStorage (or removes it), where every page Lighthouse opens reads it.
 */
async function launchChromium(origin) {
  const profile = tempFolder('lighthouse-profile');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: null,
    args: ['--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--remote-debugging-port=0'],
  });
  atCleanup(() => context.close());
  const port = Number(readFileSync(join(profile, 'DevToolsActivePort'), 'utf8').split('\n')[0]);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    port,
    async holdSession(session) {
      // A document of the origin that runs no script of its own.
      if (!page.url().startsWith(origin)) await page.goto(`${origin}/favicon.ico`);
      await page.evaluate((value) => (value ? localStorage.setItem('trellis.session', value) : localStorage.removeItem('trellis.session')), session && JSON.stringify(session));
    },
  };
}

/** The median score per category, the run of median performance, and what costs the most in it. */
function summary(page, formFactor, runs) {
  const scores = runs.map((lhr) => Object.fromEntries(CATEGORIES.map((category) => [category, Math.round((lhr.categories[category].score ?? 0) * 100)])));
  const median = Object.fromEntries(CATEGORIES.map((category) => [category, medianOf(scores.map((score) => score[category]))]));
  const representative = runs[scores.findIndex((score) => score.performance === median.performance)];
  return {
    page: page.name,
    title: page.title,
    path: page.path,
    formFactor,
    median,
    scores,
    benchmarkIndex: representative.environment.benchmarkIndex,
    userAgent: representative.environment.hostUserAgent,
    metrics: metricsOf(representative),
    costs: costsOf(representative),
  };
}

function metricsOf(lhr) {
  const value = (id) => lhr.audits[id]?.displayValue;
  return {
    firstContentfulPaint: value('first-contentful-paint'),
    largestContentfulPaint: value('largest-contentful-paint'),
    totalBlockingTime: value('total-blocking-time'),
    cumulativeLayoutShift: value('cumulative-layout-shift'),
    speedIndex: value('speed-index'),
  };
}

/** What Lighthouse says costs the most: LCP element, long tasks, scripts, unused JS, shifts, savings, failed audits. */
function costsOf(lhr) {
  const items = (id) => lhr.audits[id]?.details?.items ?? [];
  const lcpTable = items('largest-contentful-paint-element');
  const lcpNode = lcpTable[0]?.items?.[0]?.node;
  const phases = (lcpTable[1]?.items ?? []).map((phase) => `${phase.phase} ${Math.round(phase.timing)} ms`);
  return {
    lcpElement: lcpNode ? { selector: lcpNode.selector, snippet: lcpNode.snippet, phases } : undefined,
    longTasks: items('long-tasks').slice(0, 5).map((task) => ({ url: task.url, startMs: Math.round(task.startTime), durationMs: Math.round(task.duration) })),
    scriptCpu: items('bootup-time').slice(0, 5).map((script) => ({ url: script.url, totalMs: Math.round(script.total), scriptingMs: Math.round(script.scripting) })),
    mainThread: items('mainthread-work-breakdown').slice(0, 4).map((group) => ({ group: group.groupLabel ?? group.group, ms: Math.round(group.duration) })),
    unusedJavaScript: items('unused-javascript').slice(0, 5).map((file) => ({ url: file.url, transferKb: Math.round(file.totalBytes / 1024), unusedKb: Math.round(file.wastedBytes / 1024) })),
    layoutShifts: items('layout-shifts').slice(0, 5).map((shift) => ({ node: shift.node?.snippet, score: Number((shift.score ?? 0).toFixed(3)) })),
    savings: Object.values(lhr.audits)
      .filter((audit) => audit.details?.type === 'opportunity' && (audit.metricSavings?.LCP || audit.metricSavings?.FCP || audit.numericValue > 0) && (audit.score ?? 1) < 1)
      .map((audit) => ({ id: audit.id, title: audit.title, displayValue: audit.displayValue, metricSavings: audit.metricSavings }))
      .slice(0, 8),
    failedAudits: ['accessibility', 'best-practices'].flatMap((category) =>
      lhr.categories[category].auditRefs
        .filter((ref) => ref.weight > 0 && lhr.audits[ref.id].score !== null && lhr.audits[ref.id].score < 1)
        .map((ref) => ({ category, id: ref.id, title: lhr.audits[ref.id].title })),
    ),
  };
}

function printTable(results) {
  const header = ['Page', 'Form factor', ...CATEGORIES];
  const rows = results.map((result) => [result.title, result.formFactor, ...CATEGORIES.map((category) => String(result.median[category]))]);
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column].length)));
  const line = (cells) => `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  console.log(`\nLighthouse, median of ${RUNS} runs (${RECORDS} records)\n`);
  console.log(line(header));
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

function medianOf(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function post(url, body, headers = {}) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const answer = await response.json();
  if (response.status !== 200 || answer.errors) throw new Error(`${url} answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  return answer.data ?? answer;
}
