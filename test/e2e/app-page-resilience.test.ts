import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, DESKTOP, launchBrowser, PHONE, screenshot, UI_WAIT_MS } from '../helpers/browser.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The application page (issue 21) on a bad day and on a small screen, in Chromium as a person meets
 * it: the server unreachable (requests refused in the browser, and the real server stopped and
 * started again on the same port and data), a server that answers with an error, a frame whose
 * document does not arrive; while it loads, skeletons and a frame that keeps its place; each page's
 * name as its h1; at a phone's width, the menus behind a Menu button.
 */
let server: TestServer;
let browser: Browser;

const UNREACHABLE = 'The server cannot be reached. This page tries again by itself as soon as it answers.';
const USER = { email: 'dana@example.com', password: 'dana-password' };

const FEATURES: [id: string, name: string, code: string][] = [
  [
    'orders',
    'Orders',
    `import { Card, Heading, Stack, Table } from '@trellis/ui';
export default function Orders() {
  return (
    <Card>
      <Stack>
        <Heading>Order list</Heading>
        <Table rows={[{ _id: '1', title: 'First order', amount: 10 }]} columns={[{ key: 'title', header: 'Title' }, { key: 'amount', header: 'Amount' }]} />
      </Stack>
    </Card>
  );
}`,
  ],
  ['notes', 'Notes', `import { Text } from '@trellis/ui';\nexport default function Notes() { return <Text>The notes page</Text>; }`],
  ['dates', 'Dates', `import { format } from 'date-fns';\nexport default function Dates() { return <p>Day {format(new Date(2026, 0, 2), 'yyyy-MM-dd')}</p>; }`],
  // Throws while its module is evaluated, before any component renders.
  ['no-page', 'No page', `const settings = JSON.parse('{');\nexport default function NoPage() { return <p>{settings.title}</p>; }`],
  [
    'shipments',
    'Shipments',
    `import { Button, Stack, Table } from '@trellis/ui';
const columns = Array.from({ length: 10 }, (_, i) => ({ key: 'c' + i, header: 'Column number ' + (i + 1) }));
const rows = [Object.fromEntries([['_id', '1'], ...columns.map((column) => [column.key, 'value of ' + column.key])])];
export default function Shipments() {
  return (
    <Stack>
      <Button variant="secondary">Before the table</Button>
      <Table caption="Shipments" rows={rows} columns={columns} />
    </Stack>
  );
}`,
  ],
];

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  const owner = graphqlClient(server.url, await login(server.url));
  const roles = (await gqlData(owner, '{ roles { _id name } }')).roles as { _id: string; name: string }[];
  const designer = roles.find((role) => role.name === 'designer')!._id;
  await gqlData(owner, `mutation { createUser(email: "${USER.email}", password: "${USER.password}", role: "designer") { _id } }`);
  for (const [id, name, code] of FEATURES) {
    await gqlData(owner, 'mutation($id: ID!, $name: String!, $code: String!) { createFeature(_id: $id, name: $name, customCode: $code, status: "published") { _id } }', { id, name, code });
    await gqlData(owner, 'mutation($id: ID!, $roles: [ID!]!) { grantFeatureAccess(featureId: $id, roleIds: $roles) }', { id, roles: [designer] });
  }
  await gqlData(owner, 'mutation { upsertMenu(name: "Main", entries: [{ label: "Orders", path: "/feature/orders" }, { label: "Notes", path: "/feature/notes" }, { label: "Shipments", path: "/feature/shipments" }, { label: "Dates", path: "/feature/dates" }, { label: "No page", path: "/feature/no-page" }]) { created } }');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/**
 * A page of a new context whose session is already stored (as after signing in), and that adds
 * up the layout shifts of the top page from its first paint on (window.layoutShift).
 */
async function signedInPage(viewport: { width: number; height: number } = DESKTOP): Promise<{ context: BrowserContext; page: Page }> {
  const token = await login(server.url, USER.email, USER.password);
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(UI_WAIT_MS);
  const session = JSON.stringify({ token, expiresAt: Date.now() + 3_600_000, email: USER.email });
  await context.addInitScript((stored: string) => {
    if (window.top !== window) return;
    localStorage.setItem('trellis.session', stored);
    const record = window as unknown as { layoutShift: number };
    record.layoutShift = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as unknown as { value: number; hadRecentInput: boolean }[]) if (!entry.hadRecentInput) record.layoutShift += entry.value;
    }).observe({ type: 'layout-shift', buffered: true });
  }, session);
  return { context, page: await context.newPage() };
}

const nav = (page: Page) => page.getByRole('navigation', { name: 'Application' });
const failure = (page: Page) => page.getByRole('main').getByRole('alert');
/** What the failure says (its Retry button aside). */
const failureText = (page: Page) => failure(page).locator('p').textContent();

/** The server as the page sees it when it is away: every request to the API and to /healthz refused. */
async function serverAway(page: Page, paths: string[] = ['**/graphql', '**/healthz']): Promise<() => Promise<void>> {
  const refuse = (route: Route) => route.abort('connectionrefused');
  for (const path of paths) await page.route(path, refuse);
  return async () => {
    for (const path of paths) await page.unroute(path, refuse);
  };
}

async function expectNoLoadingText(page: Page) {
  expect(await page.getByText(/Loading/).count()).toBe(0);
}

describe('the application page on a bad day', () => {
  it('opened while the server cannot be reached: says so in plain words with Retry, and Retry loads it once the server answers', async () => {
    const { context, page } = await signedInPage();
    const back = await serverAway(page);
    await page.goto(`${server.url}/app`);
    const alert = failure(page);
    await alert.waitFor();
    expect(await failureText(page)).toBe(UNREACHABLE);
    await page.getByRole('heading', { level: 1, name: 'This page could not be loaded' }).waitFor();
    await expectNoLoadingText(page);
    expect(await page.locator('.skeleton').count()).toBe(0);
    // Retry while the server is still away: the same message, nothing blank.
    await alert.getByRole('button', { name: 'Retry' }).click();
    await alert.waitFor();
    expect(await failureText(page)).toBe(UNREACHABLE);
    await screenshot(page, 'app-server-away-desktop');
    expect(await axeViolations(page, { allRules: true })).toEqual([]);

    await back();
    // The page also asks the server by itself while it is away, and may load before the click lands:
    // a click that finds no Retry is a failure only if the message is still there.
    await alert
      .getByRole('button', { name: 'Retry' })
      .click({ timeout: 5_000 })
      .catch(async (error: unknown) => {
        if ((await failure(page).count()) > 0) throw error;
      });
    await page.getByRole('heading', { level: 1, name: 'Test app' }).waitFor();
    await expect.poll(() => nav(page).getByRole('link').allTextContents()).toEqual(['Orders', 'Notes', 'Shipments', 'Dates', 'No page']);
    expect(await failure(page).count()).toBe(0);
    await context.close();
  });

  it('loads by itself, without a click, when the server answers again', async () => {
    const { context, page } = await signedInPage();
    const back = await serverAway(page);
    await page.goto(`${server.url}/app/feature/orders`);
    await failure(page).filter({ hasText: UNREACHABLE }).waitFor();
    await expectNoLoadingText(page);
    await back();
    await page.frameLocator('iframe[title="Orders"]').getByRole('cell', { name: 'First order' }).waitFor({ timeout: 30_000 });
    await page.getByRole('heading', { level: 1, name: 'Orders' }).waitFor();
    expect(await failure(page).count()).toBe(0);
    await context.close();
  });

  it('a feature whose code the server answered with an error: says so, and its menu entry clicked again loads it', async () => {
    const { context, page } = await signedInPage();
    await page.goto(`${server.url}/app`);
    await page.getByRole('heading', { level: 1, name: 'Test app' }).waitFor();
    const broken = (route: Route) =>
      route.request().postData()?.includes('AppFeature')
        ? route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ errors: [{ message: 'Internal error', extensions: { code: 'INTERNAL', status: 500 } }] }) })
        : route.continue();
    await page.route('**/graphql', broken);
    await nav(page).getByRole('link', { name: 'Notes' }).click();
    const alert = failure(page);
    await alert.waitFor();
    expect(await failureText(page)).toBe('Notes could not be loaded. The server answered with an error: Internal error. Try again in a moment.');
    await alert.getByRole('button', { name: 'Retry' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Notes' }).waitFor();
    await expectNoLoadingText(page);
    expect(await page.locator('iframe').count()).toBe(0);

    await page.unroute('**/graphql', broken);
    await nav(page).getByRole('link', { name: 'Notes' }).click();
    await page.frameLocator('iframe[title="Notes"]').getByText('The notes page').waitFor();
    expect(await failure(page).count()).toBe(0);
    await context.close();
  });

  it('a feature opened while the server is away: clicking its entry again tries again, and it loads by itself when the server is back', async () => {
    const { context, page } = await signedInPage();
    await page.goto(`${server.url}/app/feature/orders`);
    await page.frameLocator('iframe[title="Orders"]').getByRole('cell', { name: 'First order' }).waitFor();
    const back = await serverAway(page);
    let asked = 0;
    page.on('request', (request) => void (request.postData()?.includes('AppFeature') && asked++));
    await nav(page).getByRole('link', { name: 'Notes' }).click();
    const alert = failure(page).filter({ hasText: `Notes could not be loaded. ${UNREACHABLE}` });
    await alert.waitFor();
    await expectNoLoadingText(page);
    expect(asked).toBe(1);
    await nav(page).getByRole('link', { name: 'Notes' }).click();
    await expect.poll(() => asked).toBe(2);
    await alert.waitFor();
    await back();
    await page.frameLocator('iframe[title="Notes"]').getByText('The notes page').waitFor({ timeout: 30_000 });
    expect(await failure(page).count()).toBe(0);
    await context.close();
  });

  it('offline: a page opened says the server cannot be reached, and loads when the browser is back online', async () => {
    const { context, page } = await signedInPage();
    await page.goto(`${server.url}/app`);
    await page.getByRole('heading', { level: 1, name: 'Test app' }).waitFor();
    await context.setOffline(true);
    await nav(page).getByRole('link', { name: 'Notes' }).click();
    await failure(page).filter({ hasText: `Notes could not be loaded. ${UNREACHABLE}` }).waitFor();
    await context.setOffline(false);
    await page.frameLocator('iframe[title="Notes"]').getByText('The notes page').waitFor({ timeout: 20_000 });
    expect(await failure(page).count()).toBe(0);
    await context.close();
  });

  it('a frame whose document did not arrive says so and loads by itself when the server answers', async () => {
    const { context, page } = await signedInPage();
    await page.goto(`${server.url}/app`);
    await page.getByRole('heading', { level: 1, name: 'Test app' }).waitFor();
    const back = await serverAway(page, ['**/app/frame*', '**/healthz']);
    const frameLoads: string[] = [];
    page.on('request', (request) => request.url().includes('/app/frame') && frameLoads.push(request.url()));
    await nav(page).getByRole('link', { name: 'Orders' }).click();
    await failure(page).filter({ hasText: `Orders could not be loaded. ${UNREACHABLE}` }).waitFor();
    await expectNoLoadingText(page);
    expect(await page.locator('iframe').count()).toBe(0);
    // The page's data still answers: that is no sign the frame would load now. The page waits for
    // the server's health instead of loading the frame again and again (it did, in a loop).
    await page.waitForTimeout(1500);
    expect(frameLoads).toHaveLength(1);
    await expectNoLoadingText(page);
    await back();
    await page.frameLocator('iframe[title="Orders"]').getByRole('cell', { name: 'First order' }).waitFor({ timeout: 30_000 });
    expect(await failure(page).count()).toBe(0);
    await context.close();
  });

  it('a library a feature imports that did not arrive is a failed load too, and loads by itself when the server answers', async () => {
    const { context, page } = await signedInPage();
    const back = await serverAway(page, ['**/web/frame/date-fns.js', '**/healthz']);
    await page.goto(`${server.url}/app/feature/dates`);
    await failure(page).filter({ hasText: `Dates could not be loaded. ${UNREACHABLE}` }).waitFor();
    await expectNoLoadingText(page);
    await back();
    await page.frameLocator('iframe[title="Dates"]').getByText('Day 2026-01-02').waitFor({ timeout: 30_000 });
    expect(await failure(page).count()).toBe(0);
    await context.close();
  });

  it("a feature that cannot render shows the frame's own message, with no loading notice over it", async () => {
    const { context, page } = await signedInPage();
    await page.goto(`${server.url}/app/feature/no-page`);
    await page.frameLocator('iframe[title="No page"]').getByRole('alert').filter({ hasText: 'This page failed' }).waitFor();
    await page.locator('.app-frame-loading').waitFor({ state: 'detached' });
    expect(await page.getByRole('status').count()).toBe(0);
    await context.close();
  });
});

describe('the application page while it loads, and its headings', () => {
  it('shows skeletons and a frame that keeps its place: the layout shifts less than 0.1 while the feature loads', async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      const { context, page } = await signedInPage(viewport);
      // The page's data is held back, as on a slow network, until the skeletons have been seen.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      await page.route('**/graphql', async (route) => {
        await held;
        await route.continue();
      });
      await page.goto(`${server.url}/app/feature/orders`);
      await page.locator('.app-header .skeleton').waitFor();
      await page.getByRole('status').filter({ hasText: 'Loading the page…' }).waitFor();
      const frameBox = await page.locator('.app-frame-area').boundingBox();
      expect(frameBox!.height).toBeGreaterThan(viewport.height / 2);
      if (viewport === DESKTOP) await page.locator('nav[aria-busy="true"] .skeleton').first().waitFor();
      await screenshot(page, `app-loading-${viewport === DESKTOP ? 'desktop' : 'phone'}`);
      release();
      await page.frameLocator('iframe[title="Orders"]').getByRole('cell', { name: 'First order' }).waitFor();
      await page.locator('[data-rendered="orders"]').waitFor();
      expect(await page.getByRole('status').count()).toBe(0);
      expect(await page.locator('.app-frame-area').boundingBox()).toEqual(frameBox);
      const shift = await page.evaluate(() => (window as unknown as { layoutShift: number }).layoutShift);
      expect(shift).toBeLessThan(0.1);
      await context.close();
    }
  });

  it("names each page in its h1 and title: the application's name at home, the feature's name on a feature", async () => {
    const { context, page } = await signedInPage();
    await page.goto(`${server.url}/app`);
    await page.getByRole('heading', { level: 1, name: 'Test app' }).waitFor();
    expect(await page.title()).toBe('Test app');
    await nav(page).getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('heading', { level: 1, name: 'Orders' }).waitFor();
    await expect.poll(() => page.title()).toBe('Orders · Test app');
    expect(await page.getByRole('heading', { level: 1 }).count()).toBe(1);
    // Opening a page from the menus puts the focus on its heading, as a page load would.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Orders');
    await page.frameLocator('iframe[title="Orders"]').getByRole('cell', { name: 'First order' }).waitFor();
    expect(await axeViolations(page, { allRules: true })).toEqual([]);
    await page.goto(`${server.url}/app/feature/shipments`);
    await page.getByRole('heading', { level: 1, name: 'Shipments' }).waitFor();
    await context.close();
  });
});

describe('the application page at a phone width', () => {
  it('folds the menus behind a Menu button that works by keyboard, and nothing overflows', async () => {
    const { context, page } = await signedInPage(PHONE);
    await page.goto(`${server.url}/app`);
    await page.getByRole('heading', { level: 1, name: 'Test app' }).waitFor();
    const menu = page.getByRole('button', { name: 'Menu' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav(page).isVisible()).toBe(false);
    await menu.focus();
    await page.keyboard.press('Enter');
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await nav(page).getByRole('link', { name: 'Orders' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Orders');
    expect(await axeViolations(page, { allRules: true })).toEqual([]);
    await screenshot(page, 'app-menu-open-phone');
    await page.keyboard.press('Escape');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav(page).isVisible()).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Menu');

    // A page opened from the menus closes them; the page starts right below the header.
    await page.keyboard.press('Enter');
    await nav(page).getByRole('link', { name: 'Shipments' }).click();
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    const heading = page.getByRole('heading', { level: 1, name: 'Shipments' });
    await heading.waitFor();
    expect(await heading.evaluate((element) => element.getBoundingClientRect().top)).toBeLessThan(80);
    const frame = page.frameLocator('iframe[title="Shipments"]');
    const region = frame.getByRole('region', { name: 'Shipments' });
    await region.waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await screenshot(page, 'app-feature-phone');
    expect(await axeViolations(page, { allRules: true })).toEqual([]);

    // Every control of the shell is at least 24 px each way.
    const small = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('a, button')]
        .filter((element) => element.offsetParent !== null)
        .map((element) => ({ text: element.textContent, box: element.getBoundingClientRect() }))
        .filter(({ box }) => box.width < 24 || box.height < 24)
        .map(({ text }) => text),
    );
    expect(small).toEqual([]);

    // The table wider than the phone scrolls in a region the keyboard reaches, with a visible focus.
    await frame.getByRole('button', { name: 'Before the table' }).focus();
    await page.keyboard.press('Tab');
    expect(await region.evaluate((element) => element === document.activeElement && getComputedStyle(element).outlineStyle)).toBe('solid');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => region.evaluate((element) => element.scrollLeft)).toBeGreaterThan(0);
    await context.close();
  });

  it('shows a failure at a phone width without overflowing, and the sign-in form says when the server is away', async () => {
    const { context, page } = await signedInPage(PHONE);
    const back = await serverAway(page);
    await page.goto(`${server.url}/app/feature/orders`);
    await failure(page).filter({ hasText: UNREACHABLE }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    expect(await axeViolations(page, { allRules: true })).toEqual([]);
    await screenshot(page, 'app-server-away-phone');
    await back();
    await context.close();

    const signIn = await browser.newContext({ viewport: PHONE });
    const form = await signIn.newPage();
    await form.goto(`${server.url}/app`);
    await form.route('**/api/auth/login', (route) => route.abort('connectionrefused'));
    await form.getByLabel('Email').fill(USER.email);
    await form.getByLabel('Password').fill(USER.password);
    await form.getByRole('button', { name: 'Sign in' }).click();
    await form.getByRole('alert').filter({ hasText: 'The server cannot be reached. Check the connection, then sign in again.' }).waitFor();
    await signIn.close();
  });
});

// Last: it stops the server and starts it again on the same port and data.
describe('the application page when the real server stops', () => {
  it('a page opened while the server is stopped says so with Retry, and loads by itself when the server is back', async () => {
    const { context, page } = await signedInPage();
    await page.goto(`${server.url}/app/feature/orders`);
    await page.frameLocator('iframe[title="Orders"]').getByRole('cell', { name: 'First order' }).waitFor();
    await server.stop();
    await nav(page).getByRole('link', { name: 'Shipments' }).click();
    const alert = failure(page).filter({ hasText: `Shipments could not be loaded. ${UNREACHABLE}` });
    await alert.waitFor();
    await expectNoLoadingText(page);
    await alert.getByRole('button', { name: 'Retry' }).click();
    await alert.waitFor();
    await server.start();
    await page.frameLocator('iframe[title="Shipments"]').getByRole('cell', { name: 'value of c0' }).waitFor({ timeout: 20_000 });
    expect(await failure(page).count()).toBe(0);
    await context.close();
  });
});
