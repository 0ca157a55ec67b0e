import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, DESKTOP, launchBrowser, PHONE, screenshot, settled, trackRequests, type AxeViolation, UI_WAIT_MS } from '../helpers/browser.js';
import { OWNER } from '../helpers/env.js';
import { connectMcp, createUserKey } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';
import { openDesignerMenu, openSection } from '../helpers/designer.js';

/**
 * Every page of the designer, for everyone (issue 21 "Phones"), in headless Chromium at a desktop's
 * and a phone's width: each section, each tab of a table, the feature and hook editors and every
 * form or dialog a button opens, against all of axe-core's rules (target-size among them). At a
 * phone's width nothing scrolls the page sideways and every row of every table fits: the tables
 * are cards there, each value under its column's name.
 */
let server: TestServer;
let browser: Browser;
let ordersId: string;
let hookId: string;

const FEATURE = `import { Card, Text } from '@trellis/ui';

export default function Orders() {
  return <Card title="Orders"><Text>Every order</Text></Card>;
}
`;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  const owner = graphqlClient(server.url, await login(server.url));
  ordersId = (
    await gqlData(
      owner,
      'mutation { createTable(name: "Orders", fields: [{ name: "title", type: "text", required: true, description: "What was ordered, as the customer wrote it" }, { name: "amount", type: "number", unique: true }, { name: "note", type: "text" }]) { _id } }',
    )
  ).createTable._id;
  await gqlData(owner, 'mutation { createOrders(data: { title: "A very long order title that a customer typed without stopping", amount: 120, note: "Deliver before noon" }) { _id } }');
  await gqlData(owner, 'mutation { createOrders(data: { title: "Chair", amount: 40 }) { _id } }');
  await gqlData(owner, 'mutation($c: String!) { createFeature(_id: "orders", name: "Orders", customCode: $c) { _id } }', { c: FEATURE });
  await gqlData(owner, 'mutation($c: String!) { updateFeature(_id: "orders", customCode: $c) { _id } }', { c: FEATURE.replace('Every order', 'All the orders') });
  hookId = (await gqlData(owner, 'mutation($c: String!) { createHook(name: "echo", type: "webHook", content: $c) { _id } }', { c: 'async function (body) { console.log("got", body.hello); return { echoed: body.hello }; }' })).createHook._id;
  await postJson(`${server.url}/api/webhook/echo`, { hello: 'world' });
  await server.server.services.hookRuntime.flushRunLog();
  await gqlData(owner, 'mutation { createRole(name: "clerk", description: "Enters the orders", permissions: ["config:read"]) { _id } }');
  await gqlData(owner, 'mutation($t: ID!, $a: TableAccessInput!) { setTableAccess(tableId: $t, roleId: "viewer", access: $a) { roleId } }', {
    t: ordersId,
    a: { read: { level: 'FILTER', filter: { note: { eq: 'Deliver before noon' } } }, create: { level: 'ALL' }, update: { level: 'NONE' }, delete: { level: 'NONE' } },
  });
  await gqlData(owner, 'mutation { createUser(email: "dana.with.a.long.address@example.com", name: "Dana", password: "dana-password", role: "designer") { _id } }');
  await gqlData(owner, 'mutation { setEnvironmentVariable(name: "PAYMENT_PROVIDER_TOKEN", value: "secret") { _id } }');
  await gqlData(owner, 'mutation { createIntegrationKey(name: "erp") { clientId } }');
  await gqlData(owner, 'mutation { upsertMenu(name: "Main", entries: [{ label: "Orders", path: "/feature/orders" }]) { created } }');
  // A call with an MCP key, so that the key has been used and the audit has an entry.
  const { apiKey } = await createUserKey(server, { email: OWNER.email, role: 'admin', scopes: ['config:read', 'features:write'] });
  const agent = await connectMcp(server, apiKey);
  await agent.callTool({ name: 'get_feature_details', arguments: { _id: 'orders' } });
  await agent.close();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** A new tab at `viewport`, signed in as the owner through the page. */
async function signedIn(viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(UI_WAIT_MS);
  const page = trackRequests(await context.newPage());
  await page.goto(`${server.url}/`);
  await page.getByLabel('Email').fill(OWNER.email);
  await page.getByLabel('Password').fill(OWNER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Designer' }).waitFor();
  return page;
}

/** One place of the designer: how to get there from anywhere, and what shows that it is there. */
interface Stop {
  name: string;
  open(page: Page): Promise<void>;
}

const section = (link: string): Stop => ({ name: link.toLowerCase().replace(' ', '-'), open: (page) => openSection(page, link) });

/** Goes to an address of the designer and waits for what shows it has loaded. */
async function visit(page: Page, hash: string, loaded: (page: Page) => Promise<void>) {
  await page.evaluate((to) => (location.hash = to), hash);
  await loaded(page);
}

const STOPS: Stop[] = [
  section('Features'),
  {
    name: 'feature-editor',
    open: (page) =>
      visit(page, '#/features/orders', async () => {
        await page.getByRole('textbox', { name: 'Feature code' }).waitFor();
        await page.getByRole('region', { name: 'Feature versions' }).getByRole('row', { name: /^2 draft/ }).waitFor();
      }),
  },
  {
    name: 'feature-guide-example',
    open: (page) =>
      visit(page, '#/features/orders', async () => {
        await page.getByRole('textbox', { name: 'Feature code' }).waitFor();
        // Beside the code on a desktop; a drawer opened by its button on a phone.
        const show = page.getByRole('button', { name: 'Show the guide' });
        if (await show.isVisible()) await show.click();
        await page.getByText("Show that page's code").click();
        await page.getByRole('region', { name: 'Code of the page for Orders' }).waitFor();
      }),
  },
  {
    name: 'feature-preview',
    open: (page) =>
      visit(page, '#/features/orders', async () => {
        await page.getByRole('button', { name: 'Preview' }).click();
        await page.getByRole('radio', { name: /^Scratch/ }).waitFor();
        await page.frameLocator('iframe[title="Preview of Orders"]').getByText('All the orders').waitFor();
      }),
  },
  section('Hooks'),
  {
    name: 'hook-editor',
    open: (page) =>
      visit(page, `#/hooks/${hookId}`, async () => {
        await page.getByRole('textbox', { name: 'Hook code' }).waitFor();
        const runs = page.getByRole('table', { name: 'Runs' });
        await runs.getByRole('cell', { name: 'ok', exact: true }).waitFor();
        await runs.getByText('Input and output').click();
        await runs.getByLabel('Output').waitFor();
      }),
  },
  section('Tables'),
  {
    name: 'new-table-form',
    open: async (page) => {
      await openSection(page, 'Tables');
      await page.getByRole('button', { name: 'New table' }).click();
      await page.getByLabel('Name of the new table').waitFor();
    },
  },
  {
    name: 'table-fields-and-records',
    open: (page) =>
      visit(page, `#/tables/${ordersId}`, async () => {
        await page.getByRole('region', { name: 'Fields' }).getByRole('cell', { name: 'amount', exact: true }).waitFor();
        await page.getByRole('region', { name: 'Records' }).getByRole('cell', { name: 'Chair', exact: true }).waitFor();
      }),
  },
  {
    name: 'field-delete-confirmation',
    open: (page) =>
      visit(page, `#/tables/${ordersId}`, async () => {
        await page.getByRole('button', { name: 'Delete field note' }).click();
        const question = page.getByRole('group', { name: 'Delete field note of Orders?' });
        await question.getByText('Its value in 1 record is lost; this cannot be undone.').waitFor();
        await question.getByRole('button', { name: 'Yes, delete note' }).waitFor();
      }),
  },
  {
    name: 'record-form-and-delete-question',
    open: (page) =>
      visit(page, `#/tables/${ordersId}`, async () => {
        const chair = page.getByRole('region', { name: 'Records' }).getByRole('row').filter({ hasText: 'Chair' });
        await chair.getByRole('button', { name: /^Edit record/ }).click();
        await page.getByRole('form', { name: 'Edit record' }).waitFor();
        await chair.getByRole('button', { name: /^Delete record/ }).click();
        await page.getByRole('group', { name: 'Delete this record?' }).waitFor();
      }),
  },
  {
    name: 'table-access',
    open: (page) =>
      visit(page, `#/tables/${ordersId}/access`, async () => {
        await page.getByRole('region', { name: 'Access by role and action' }).getByRole('rowheader', { name: 'viewer', exact: true }).waitFor();
      }),
  },
  section('Menus'),
  section('Roles'),
  {
    name: 'role-permissions-form',
    open: async (page) => {
      await openSection(page, 'Roles');
      await page.getByRole('button', { name: 'Edit permissions of clerk' }).click();
      await page.getByRole('group', { name: /clerk/ }).getByRole('checkbox', { name: 'config:read' }).waitFor();
    },
  },
  section('Users'),
  section('Environment'),
  section('Integrations'),
  section('MCP keys'),
  section('Audit'),
  {
    name: 'audit-arguments',
    open: async (page) => {
      await openSection(page, 'Audit');
      await page.getByRole('button', { name: /^Show arguments of get_feature_details/ }).click();
      await page.getByRole('button', { name: /^Hide arguments of get_feature_details/ }).waitFor();
    },
  },
  section('Settings'),
  {
    name: 'change-password-dialog',
    open: async (page) => {
      await openDesignerMenu(page);
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('dialog', { name: 'Change your password' }).getByLabel('Current password').waitFor();
    },
  },
];

/** Closes what a stop opened (a dialog, a form), so that the next one starts from a plain page. */
async function reset(page: Page) {
  await page.keyboard.press('Escape');
  // Another section unmounts the last one and whatever it had open: no reload needed.
  await page.evaluate(() => (location.hash = '#/features'));
  await page.getByRole('heading', { level: 1, name: 'Features' }).waitFor();
}

/**
 * The theme preview in Settings draws the application's colours as its owner chose them, not the
 * designer's: the default primary (#2563eb, 5.2:1 under white text) meets AA, not the 7:1 of
 * color-contrast-enhanced. Left out of the sweep; the designer's own colours are held to 7:1.
 */
const OWNER_CHOSEN_COLOURS = '[data-testid="theme-preview"]';

/** Each finding as one line, rule and element: what a failure needs to say. */
function findings(violations: AxeViolation[]): string[] {
  return violations.flatMap((violation) => violation.nodes.map((node) => `${violation.id} (${violation.impact}): ${node.target.join(' ')} ${node.html.slice(0, 120)}`));
}

/** What overflows the phone's width: the page itself, and each row of each table that does not fit. */
async function overflow(page: Page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const rows = [...document.querySelectorAll('main table tbody tr')]
      .filter((row) => row.getBoundingClientRect().right > width + 0.5 || row.scrollWidth > row.clientWidth)
      .map((row) => row.textContent?.slice(0, 60));
    return { page: document.documentElement.scrollWidth, rows };
  });
}

describe.each([
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const)('the designer at a %s’s width, signed in as the owner', (width, viewport) => {
  let page: Page;

  beforeAll(async () => {
    page = await signedIn(viewport);
  });

  afterAll(() => page.context().close());

  it.each(STOPS.map((stop) => [stop.name, stop] as const))('%s: no serious or critical finding of any axe rule; at a phone’s width nothing wider than the window', async (name, stop) => {
    await stop.open(page);
    await settled(page);
    await screenshot(page, `a11y-${name}-${width}`);
    expect(findings(await axeViolations(page, { allRules: true, exclude: [OWNER_CHOSEN_COLOURS] }))).toEqual([]);
    if (viewport === PHONE) {
      const wider = await overflow(page);
      expect(wider.page).toBeLessThanOrEqual(PHONE.width);
      expect(wider.rows).toEqual([]);
    }
    await reset(page);
  });
});

describe('a table at a phone’s width', () => {
  it('shows each user as a card, each value under its column’s name, and is still a table to a screen reader', async () => {
    const page = await signedIn(PHONE);
    await openSection(page, 'Users');
    const dana = page.getByRole('region', { name: 'Users' }).getByRole('row').filter({ hasText: 'dana.with.a.long.address@example.com' });
    const status = dana.getByRole('cell', { name: 'Active', exact: true });
    await status.waitFor();

    // On the screen: the card fits the phone, each value under its column's name (shown, not read: `/ ""`).
    expect(await status.evaluate((cell) => getComputedStyle(cell, '::before').content)).toBe('"Status" / ""');
    const card = (await dana.boundingBox())!;
    expect(card.x).toBeGreaterThanOrEqual(0);
    expect(card.x + card.width).toBeLessThanOrEqual(PHONE.width);
    const action = (await dana.getByRole('button', { name: 'Disable dana.with.a.long.address@example.com' }).boundingBox())!;
    expect(action.x + action.width).toBeLessThanOrEqual(PHONE.width);

    // To a screen reader (Chromium's own accessibility tree): a table whose cells are named by their
    // value alone, the column's name coming from its header, read once.
    const cdp = await page.context().newCDPSession(page);
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: { ignored: boolean; role?: { value: string }; name?: { value: string } }[] };
    const named = (role: string) => nodes.filter((node) => !node.ignored && node.role?.value === role).map((node) => node.name?.value);
    expect(named('table')).not.toEqual([]);
    expect(named('columnheader')).toEqual(expect.arrayContaining(['Email', 'Status', 'Actions']));
    expect(named('cell')).toContain('Active');
    expect(named('cell')).not.toContain('Status Active');
    await page.context().close();
  });
});
