import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { DESKTOP, launchBrowser, PHONE, screenshot, SCREENSHOT_DIR, seriousAxeViolations, UI_WAIT_MS } from '../helpers/browser.js';
import { OWNER } from '../helpers/env.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * What the designer shows of the run log's counts and of the storage, in headless Chromium: the
 * charts of a hook's runs above its run log, and Settings › Storage, at a desktop's and a phone's
 * width.
 */
let server: TestServer;
let browser: Browser;
let hookId: string;
const CALLS = 30;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer({ TRELLIS_WEBHOOK_RATE_LIMIT: '100000' }), launchBrowser()]);
  const owner = graphqlClient(server.url, await login(server.url));
  hookId = (
    await gqlData(owner, 'mutation($c: String!) { createHook(name: "charted", type: "webHook", content: $c) { _id } }', {
      c: 'async function (body) { if (body.n % 10 === 3) throw new Error("refused " + body.n); return { n: body.n }; }',
    })
  ).createHook._id;
  for (let n = 0; n < CALLS; n++) await postJson(`${server.url}/api/webhook/charted`, { n });
  await server.server.services.hookRuntime.flushRunLog();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signedIn(viewport: { width: number; height: number }, hash: string): Promise<Page> {
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(UI_WAIT_MS);
  const page = await context.newPage();
  await page.goto(`${server.url}/${hash}`);
  await page.getByLabel('Email').fill(OWNER.email);
  await page.getByLabel('Password').fill(OWNER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Designer' }).waitFor();
  return page;
}

describe('the charts of a hook’s runs', () => {
  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ])('count every run and failure of the last hour above the run log (%s)', async (name, viewport) => {
    const page = await signedIn(viewport, `#/hooks/${hookId}`);
    const charts = page.getByRole('region', { name: 'Last hour' });
    await charts.getByLabel('Run summary').getByText(`${CALLS} runs, 3 failures`).waitFor();
    // When runs are counted, so that a run just made and not yet counted is no contradiction.
    await charts.getByLabel('Run summary').getByText(/counted here at the end of its minute \(a run just made shows in the run log first\)/).waitFor();
    await expect(charts.getByRole('img', { name: /^Runs per minute over the last hour: 30 runs, 3 failed/ }).count()).resolves.toBe(1);
    await expect(charts.getByRole('img', { name: /^95th percentile of the run duration per minute/ }).count()).resolves.toBe(1);
    // The run log below keeps the three failures whole.
    await expect(page.getByRole('table', { name: 'Runs' }).getByRole('cell', { name: 'error', exact: true }).count()).resolves.toBe(3);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, `designer-hook-charts-${name}`);
    await charts.screenshot({ path: join(SCREENSHOT_DIR, `designer-hook-charts-${name}-close.png`) });
    await page.context().close();
  });
});

describe('Settings › Storage', () => {
  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ])('shows the database, what the logs keep and each table by size (%s)', async (name, viewport) => {
    const page = await signedIn(viewport, '#/settings');
    const storage = page.getByRole('region', { name: 'Storage' });
    await storage.getByLabel('Storage summary').getByText(/runs kept \(3 failed\).*kept 30d/).waitFor();
    await storage.getByLabel('Storage summary').getByText(/entries.*kept 365d|entries, kept 365d/).waitFor();
    const tables = storage.getByRole('table', { name: /^Tables, largest first/ });
    // The largest tables first; every one (there are more than 10) on demand.
    await expect.poll(() => tables.getByRole('rowheader').count()).toBe(10);
    const all = storage.getByRole('button', { name: /^Show all \d+ tables$/ });
    const total = Number(/\d+/.exec((await all.textContent())!)![0]);
    expect(total).toBeGreaterThan(10);
    expect(await tables.locator('caption').textContent()).toContain(`: the 10 largest of ${total} (`);
    await screenshot(page, `designer-storage-${name}`);
    await all.click();
    await expect.poll(() => tables.getByRole('rowheader').count()).toBe(total);
    await tables.getByRole('rowheader', { name: 'hook_runs', exact: true }).waitFor();
    await storage.getByRole('button', { name: 'Show the 10 largest tables' }).waitFor();
    await storage.getByText(/^Indexes \(\d+\)$/).click();
    await storage.getByRole('table').nth(1).getByRole('cell', { name: 'hook_runs_pkey', exact: true }).waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    // Every table and index shown.
    await storage.screenshot({ path: join(SCREENSHOT_DIR, `designer-storage-${name}-all.png`) });
    await page.context().close();
  });
});
