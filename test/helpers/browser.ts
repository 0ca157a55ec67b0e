import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page, type Request } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Debian's Chromium in its headless shell (package chromium-headless-shell: the same Blink and V8 as
 * the chromium package, without the desktop browser around them), which `.ci/run` installs when
 * missing; the full browser where only it is installed. The shell runs the browser files on less
 * than half the CPU (the 14 files: 240 CPU-s of Chromium where the full browser in headless mode
 * took 589, docs/decisions.md, D52) with every test passing the same.
 */
const HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';
export const CHROMIUM_PATH = process.env.TRELLIS_TEST_CHROMIUM ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium');

/** Where browser tests save their screenshots (not committed). */
export const SCREENSHOT_DIR = join(process.cwd(), '.ci-results', 'screenshots');

/**
 * How long a browser step may wait for what it expects (the pages' default timeout). A wait that
 * runs out means the page is stuck, not slow: it is no speed check. On a 2-core machine whose CPU
 * slows under a sustained load (both suites side by side), steps that take 1-3 s took 3-4 times
 * as long, past the 10 s these tests had.
 */
export const UI_WAIT_MS = 30_000;

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/** Launches headless Chromium (no sandbox: tests run as root). */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: apt-get install -y chromium-headless-shell`);
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/**
 * Clicks `locator` once it is scrolled into view and the page has painted since. A click made right
 * after a scroll is routed by the last painted frame: a feature's frame (sandboxed, so in a process
 * of its own) that the scroll moved away from the point would still receive it.
 */
export async function clickAfterScroll(locator: Locator): Promise<void> {
  await locator.scrollIntoViewIfNeeded();
  await locator.page().evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  await locator.click();
}

/**
 * Waits until the page has settled: none of its requests in flight (the page's own and its
 * frames'), nothing marked busy (`aria-busy="true"`, the designer's "Loading…"), and two frames
 * painted since, twice in a row (a request made by what the last answer rendered counts). What
 * `waitForLoadState('networkidle')` waits for, without its fixed half second of quiet.
 */
export async function settled(page: Page): Promise<void> {
  const inFlight = tracked.get(page);
  if (!inFlight) throw new Error('settled(page) needs trackRequests(page) called when the page was opened');
  for (let quiet = 0; quiet < 2; ) {
    await expect.poll(() => inFlight.size, { timeout: UI_WAIT_MS, interval: 10 }).toBe(0);
    const busy = await page.evaluate(
      () =>
        new Promise<boolean>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(document.querySelector('[aria-busy="true"]') !== null)))),
    );
    quiet = busy || inFlight.size > 0 ? 0 : quiet + 1;
  }
}

const tracked = new WeakMap<Page, Set<Request>>();

/** Counts the requests of `page` (its frames' too) from now on, for `settled`: call it before the page's first `goto`. */
export function trackRequests(page: Page): Page {
  if (tracked.has(page)) return page;
  const inFlight = new Set<Request>();
  page.on('request', (request) => inFlight.add(request));
  page.on('requestfinished', (request) => inFlight.delete(request));
  page.on('requestfailed', (request) => inFlight.delete(request));
  tracked.set(page, inFlight);
  return page;
}

/** Saves a full-page screenshot under .ci-results/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  if (!process.env.NOSHOT) await page.screenshot({ path, fullPage: true });
  return path;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; html: string }[];
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeOptions {
  /**
   * Every rule axe-core has, the experimental ones (target-size, …) and those no standard tags
   * included; default false: axe's own default set.
   */
  allRules?: boolean;
  /** CSS selectors of elements left out of the run; default none. */
  exclude?: string[];
}

/** Runs axe-core in the page and returns its serious and critical violations. */
export async function axeViolations(page: Page, options: AxeOptions = {}): Promise<AxeViolation[]> {
  // evaluate, not a script tag: the pages' Content-Security-Policy refuses inline scripts. Once per
  // document: the designer moves between its sections without loading a new one.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async ({ allRules, exclude }) => {
    interface Axe {
      getRules(): { ruleId: string }[];
      run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }>;
    }
    const axe = (globalThis as unknown as { axe: Axe }).axe;
    const context = exclude.length ? { include: [document], exclude: exclude.map((selector) => [selector]) } : document;
    const result = await axe.run(context, allRules ? { runOnly: { type: 'rule', values: axe.getRules().map((rule) => rule.ruleId) } } : {});
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, html: n.html })) }));
  }, { allRules: options.allRules ?? false, exclude: options.exclude ?? [] });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Runs axe-core's default rules in the page and returns its serious and critical violations. */
export function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  return axeViolations(page);
}
