import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickAfterScroll, DESKTOP, launchBrowser, PHONE, screenshot, seriousAxeViolations, UI_WAIT_MS } from '../helpers/browser.js';
import { OWNER } from '../helpers/env.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';
import { ORDER_DETAIL_PAGE, openSection as openDesignerSection } from '../helpers/designer.js';

/**
 * Issue 20's "Done when": a person alone in the designer, in headless Chromium, from an empty
 * application to a clerk using it on /app. Every change is made in the pages; GraphQL only reads,
 * to check what the pages stored. One server, one browser tab, one walk in order.
 */
let server: TestServer;
let browser: Browser;
let owner: ReturnType<typeof graphqlClient>;
let page: Page;

const CLERK = { email: 'clara@example.com', password: 'clara-password-1' };

/** The detail page the list opens: it reads the order's id from its address with useParams. */
const ORDER_DETAIL = ORDER_DETAIL_PAGE;

const UI_IMPORT = "import { Button, Card, Form, Input, Stack, Table, Text } from '@trellis/ui';";
const RUNTIME_IMPORT = "import { useMutation, useQuery } from '@trellis/runtime';";
const LAST_COLUMN = '            { key: "customer", header: "Customer" },\n';
const OPEN_COLUMN = "            { key: 'open', header: 'Detail', render: (order) => ";
const OPEN_BUTTON = "<Button variant=\"secondary\" onClick={() => navigate('order-detail', { order: order._id })}>Open {order.title}</Button> },\n";

/**
 * The guide's example with a column whose button opens the order's detail page: what the person
 * types, split where they ask for a completion. `Button` and `Text` are left out of the import
 * (the completion adds the first, the person forgets the second).
 */
function listCode(example: string) {
  expect(example).toContain(UI_IMPORT);
  expect(example).toContain(RUNTIME_IMPORT);
  expect(example).toContain(LAST_COLUMN);
  const written = example
    .replace(UI_IMPORT, "import { Card, Form, Input, Stack, Table } from '@trellis/ui';")
    .replace(RUNTIME_IMPORT, "import { navigate, useMutation, useQuery } from '@trellis/runtime';");
  const cut = written.indexOf(LAST_COLUMN) + LAST_COLUMN.length;
  const beforeCompletion = written.slice(0, cut) + OPEN_COLUMN;
  const afterCompletion = OPEN_BUTTON.slice('<Button'.length) + written.slice(cut);
  const final = example.replace(RUNTIME_IMPORT, "import { navigate, useMutation, useQuery } from '@trellis/runtime';").replace(LAST_COLUMN, LAST_COLUMN + OPEN_COLUMN + OPEN_BUTTON);
  return { beforeCompletion, afterCompletion, final };
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  owner = graphqlClient(server.url, await login(server.url));
  const context = await browser.newContext({ viewport: DESKTOP });
  page = await context.newPage();
  page.setDefaultTimeout(UI_WAIT_MS);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signIn(target: Page, email: string, password: string) {
  await target.getByLabel('Email').fill(email);
  await target.getByLabel('Password').fill(password);
  await target.getByRole('button', { name: 'Sign in' }).click();
}

const openSection = (name: string) => openDesignerSection(page, name);

async function newFeature(name: string) {
  await openSection('Features');
  await page.getByRole('button', { name: 'New feature' }).click();
  await page.getByLabel('Name of the new feature').fill(name);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByRole('textbox', { name: 'Feature code' }).click();
}

/** Replaces the editor's text without CodeMirror's auto-indent and bracket closing. */
async function replaceCode(code: string) {
  await page.getByRole('textbox', { name: 'Feature code' }).click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(code);
}

async function publish() {
  await page.getByRole('status').filter({ hasText: 'No problems found.' }).waitFor();
  // The toast of this publication, not one of the last feature's that is still shown.
  const toasts = page.getByText(/^Published version \d+$/);
  await toasts.evaluateAll((shown) => shown.forEach((toast) => toast.setAttribute('data-test-seen', '')));
  await clickAfterScroll(page.getByRole('button', { name: 'Publish' }));
  await toasts.and(page.locator(':not([data-test-seen])')).waitFor();
}

/** The caret's column in its line of the code editor, from the page's selection; -1 outside a line. */
function caretColumn(): Promise<number> {
  return page.evaluate(() => {
    const selection = getSelection();
    const line = selection?.focusNode?.parentElement?.closest('.cm-line');
    if (!selection?.focusNode || !line) return -1;
    const before = document.createRange();
    before.setStart(line, 0);
    before.setEnd(selection.focusNode, selection.focusOffset);
    return before.toString().length;
  });
}

/** Closes the code editor's completion list if one is open (it would take arrow keys). */
async function closeCompletions() {
  const completions = page.locator('.cm-tooltip-autocomplete');
  if (await completions.count()) {
    await page.keyboard.press('Escape');
    await completions.waitFor({ state: 'detached' });
  }
}

/** Presses `key` in the code editor once no completion list is open. */
async function pressInEditor(key: string) {
  await closeCompletions();
  await page.keyboard.press(key);
}

async function feature(id: string) {
  return (await gqlData(owner, 'query($id: ID!) { feature(_id: $id) { status customCode } }', { id })).feature;
}

async function noSeriousAxeFindings(target: Page = page) {
  expect(await seriousAxeViolations(target)).toEqual([]);
}

describe("a person's walk through the designer alone, to a clerk on /app (issue 20)", () => {
  it('signs in as the owner and builds Orders: four fields, one required, one changed, one deleted', async () => {
    await page.goto(`${server.url}/`);
    await signIn(page, OWNER.email, OWNER.password);
    await openSection('Tables');
    await page.getByRole('button', { name: 'New table' }).click();
    await page.getByLabel('Name of the new table').fill('Orders');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('heading', { name: 'Orders', level: 2 }).waitFor();
    const form = page.getByRole('form', { name: 'Add a field' });
    const required = form.getByRole('checkbox', { name: 'Required' });
    const unique = form.getByRole('checkbox', { name: 'Unique' });
    for (const [name, isRequired] of [['title', true], ['amount', false], ['note', false], ['customer', false]] as const) {
      expect(await required.isChecked()).toBe(false);
      expect(await unique.isChecked()).toBe(false);
      await form.getByLabel('Field name').fill(name);
      if (isRequired) await required.check();
      await form.getByRole('button', { name: 'Add field' }).click();
      await page.getByRole('region', { name: 'Fields' }).getByRole('cell', { name, exact: true }).waitFor();
    }
    expect(await required.isChecked()).toBe(false);

    // amount was added as text by mistake: nothing uses it yet, so it changes without a question.
    await page.getByRole('button', { name: 'Edit field amount' }).click();
    const editor = page.getByRole('form', { name: 'Change field amount' });
    await editor.getByRole('combobox', { name: /^Type/ }).selectOption('number');
    await editor.getByRole('button', { name: 'Save field' }).click();
    await page.getByText('Field amount saved').waitFor();

    await page.getByRole('button', { name: 'Delete field note' }).click();
    await page.getByRole('group', { name: 'Delete field note of Orders?' }).getByRole('button', { name: 'Yes, delete note' }).click();
    await page.getByText('Field note deleted').waitFor();
    await page.getByRole('region', { name: 'Fields' }).getByRole('cell', { name: 'note', exact: true }).waitFor({ state: 'detached' });
    await noSeriousAxeFindings();
    await screenshot(page, 'walk-tables');

    const { tables } = await gqlData(owner, '{ tables { name fields { name type required unique } } }');
    expect(tables.find((table: { name: string }) => table.name === 'Orders').fields).toEqual([
      { name: 'title', type: 'text', required: true, unique: false },
      { name: 'amount', type: 'number', required: false, unique: false },
      { name: 'customer', type: 'text', required: false, unique: false },
    ]);
  });

  it("writes the order list from the guide's example with a completion, is stopped at an undeclared <Text>, fixes it and publishes", async () => {
    await newFeature('Order list');
    const guide = page.getByRole('complementary', { name: 'Authoring guide' });
    await guide.getByRole('button', { name: 'Insert a page for Orders' }).click();
    await expect.poll(() => page.locator('.cm-content').innerText()).toContain('listOrders(limit: 100) { items { _id title amount customer } total }');
    await page.getByRole('status').filter({ hasText: 'No problems found.' }).waitFor();

    // The same example as the guide gives it, rewritten with a column that opens the detail page.
    const { featureAuthoringGuide } = await gqlData(owner, '{ featureAuthoringGuide { tables { table { name } example } } }');
    const example = featureAuthoringGuide.tables.find((entry: { table: { name: string } }) => entry.table.name === 'Orders').example as string;
    const code = listCode(example);
    await replaceCode(code.beforeCompletion);
    await page.keyboard.type('<Bu');
    await page.locator('.cm-tooltip-autocomplete').getByRole('option', { name: /^Button/ }).click();
    await page.keyboard.insertText(code.afterCompletion);
    await expect.poll(() => page.locator('.cm-content').innerText()).toMatch(/import \{[^}]*\bButton\b[^}]*\} from '@trellis\/ui';/);

    // <Text> is used without its import: an error at the line of its first use, and no publishing.
    const firstText = code.final.split('\n').findIndex((line) => line.includes('<Text')) + 1;
    const problems = page.getByRole('list', { name: 'Problems in the code' });
    await problems.getByText(`Error (line ${firstText}): 'Text' is not declared: add it to the import from '@trellis/ui' at line 3`).waitFor();
    await page.locator('.cm-lint-marker-error').first().waitFor();
    expect(await page.getByRole('button', { name: 'Publish' }).isDisabled()).toBe(true);
    await noSeriousAxeFindings();
    await screenshot(page, 'walk-feature-error');

    // The fix: ", Text" at the end of the names imported on line 3. The person clicks just before
    // the import's " } from"; the caret is checked before typing, and set right with the arrow keys
    // if the click fell a character off (a completion list that opens late is closed first).
    const importLine = page.locator('.cm-line').filter({ hasText: "from '@trellis/ui'" });
    const lineText = await importLine.innerText();
    const namesEnd = lineText.indexOf(' } from');
    expect(namesEnd, lineText).toBeGreaterThan(0);
    await closeCompletions();
    const point = await importLine.evaluate((line, column) => {
      line.scrollIntoView({ block: 'center' });
      const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      let seen = 0;
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const length = node.textContent?.length ?? 0;
        if (seen + length > column) {
          const range = document.createRange();
          range.setStart(node, column - seen);
          range.setEnd(node, column - seen + 1);
          const box = range.getBoundingClientRect();
          return { x: box.left + 1, y: box.top + box.height / 2 };
        }
        seen += length;
      }
      return undefined;
    }, namesEnd);
    expect(point).toBeDefined();
    await page.mouse.click(point!.x, point!.y);
    await expect.poll(() => page.locator('.cm-activeLine').innerText()).toBe(lineText);
    for (let i = 0; i < 5 && (await caretColumn()) !== namesEnd; i++) await pressInEditor((await caretColumn()) < namesEnd ? 'ArrowRight' : 'ArrowLeft');
    expect(await caretColumn()).toBe(namesEnd);
    await page.keyboard.insertText(', Text');
    await expect.poll(() => importLine.innerText()).toMatch(/^import \{[^}]*\bButton\b[^}]*, Text \} from '@trellis\/ui';$/);
    await publish();
    const stored = await feature('order-list');
    expect(stored.status).toBe('published');
    expect(stored.customCode).toContain("navigate('order-detail', { order: order._id })");
    expect(stored.customCode).toMatch(/import \{[^}]*\bButton\b[^}]*\bText\b[^}]*\} from '@trellis\/ui';/);
  });

  it('writes the detail page that reads its parameter, and publishes it', async () => {
    await newFeature('Order detail');
    await replaceCode(ORDER_DETAIL);
    await publish();
    expect(await feature('order-detail')).toEqual({ status: 'published', customCode: ORDER_DETAIL });
  });

  it('puts both in a menu, creates the role clerk with both features, and a clerk', async () => {
    await openSection('Menus');
    await page.getByRole('button', { name: 'New menu' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Main');
    await page.getByRole('button', { name: 'Add entry' }).click();
    await page.getByRole('button', { name: 'Add entry' }).click();
    await page.getByRole('group', { name: 'Entry 1' }).getByLabel('Label').fill('Orders');
    await page.getByRole('group', { name: 'Entry 1' }).getByLabel('Feature').selectOption({ label: 'Order list' });
    await page.getByRole('group', { name: 'Entry 2' }).getByLabel('Label').fill('Order detail');
    await page.getByRole('group', { name: 'Entry 2' }).getByLabel('Feature').selectOption({ label: 'Order detail' });
    await noSeriousAxeFindings();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Edit menu Main' }).waitFor();

    // A clerk uses the application only: no designer permission at all.
    await openSection('Roles');
    const create = page.getByRole('form', { name: 'Create a role' });
    await create.getByLabel('Name', { exact: true }).fill('clerk');
    await create.getByRole('checkbox', { name: 'config:read' }).uncheck();
    await create.getByRole('button', { name: 'Create role' }).click();
    const listSees = page.getByRole('checkbox', { name: 'clerk sees Order list' });
    await listSees.check();
    const listRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Order list' }) });
    await listRow.getByRole('status').getByText('Granted clerk: read and create on Orders.', { exact: true }).waitFor();
    await page.getByRole('checkbox', { name: 'clerk sees Order detail' }).check();
    const detailRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Order detail' }) });
    // The list's grant already covers the detail page's getOrders.
    await detailRow.getByRole('status').getByText("clerk sees Order detail. Its data access already covers the feature's queries.", { exact: true }).waitFor();
    await noSeriousAxeFindings();
    await screenshot(page, 'walk-roles');

    await openSection('Users');
    const user = page.getByRole('form', { name: 'Create a user' });
    await user.getByLabel('Email', { exact: true }).fill(CLERK.email);
    await user.getByLabel('Name', { exact: true }).fill('Clara');
    await user.getByLabel('Password', { exact: true }).fill(CLERK.password);
    await user.getByLabel(/^Role/).selectOption({ label: 'clerk' });
    await user.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('row').filter({ hasText: CLERK.email }).waitFor();
    await noSeriousAxeFindings();

    const { roles } = await gqlData(owner, '{ roles { name permissions } }');
    expect(roles.find((role: { name: string }) => role.name === 'clerk').permissions).toEqual([]);
  });

  it("shows the list's code, the guide a click away, at a phone's width", async () => {
    const phone = await browser.newContext({ viewport: PHONE });
    const small = await phone.newPage();
    small.setDefaultTimeout(UI_WAIT_MS);
    await small.goto(`${server.url}/#/features/order-list`);
    await signIn(small, OWNER.email, OWNER.password);
    await small.getByRole('textbox', { name: 'Feature code' }).waitFor();
    await small.getByRole('status').filter({ hasText: 'No problems found.' }).waitFor();
    await small.getByRole('button', { name: 'Show the guide' }).waitFor();
    expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await noSeriousAxeFindings(small);
    await screenshot(small, 'walk-feature-phone');
    await phone.close();
  });

  it('signs out; the clerk signing in is sent to /app, adds an order and opens its detail page from the list', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, CLERK.email, CLERK.password);
    await page.waitForURL(/\/app/);
    const nav = page.getByRole('navigation', { name: 'Application' });
    await expect.poll(() => nav.getByRole('link').allTextContents()).toEqual(['Orders', 'Order detail']);
    await nav.getByRole('link', { name: 'Orders' }).click();
    const list = page.frameLocator('iframe[title="Order list"]');
    await list.getByText('0 in all').waitFor();
    await list.getByLabel('Title').fill('Walnut desk');
    await list.getByLabel('Amount').fill('240');
    await list.getByLabel('Customer').fill('Ada');
    await list.getByRole('button', { name: 'Add', exact: true }).click();
    await list.getByRole('status').filter({ hasText: 'Added' }).waitFor();
    await list.getByRole('cell', { name: 'Walnut desk', exact: true }).waitFor();
    await noSeriousAxeFindings();
    await screenshot(page, 'walk-app-list');

    await clickAfterScroll(list.getByRole('button', { name: 'Open Walnut desk' }));
    await page.waitForURL(/\/app\/feature\/order-detail\?order=/);
    const id = new URL(page.url()).searchParams.get('order');
    const { listOrders } = await gqlData(owner, '{ listOrders { items { _id title amount customer } } }');
    expect(listOrders.items).toEqual([{ _id: id, title: 'Walnut desk', amount: 240, customer: 'Ada' }]);
    await page.frameLocator('iframe[title="Order detail"]').getByText(`Order ${id}: Walnut desk for 240`).waitFor();
    await noSeriousAxeFindings();
    await screenshot(page, 'walk-app-detail');

    // The same page at a phone's width, opened by its address.
    const phone = await browser.newContext({ viewport: PHONE });
    const small = await phone.newPage();
    small.setDefaultTimeout(UI_WAIT_MS);
    await small.goto(page.url());
    await signIn(small, CLERK.email, CLERK.password);
    await small.frameLocator('iframe[title="Order detail"]').getByText(`Order ${id}: Walnut desk for 240`).waitFor();
    expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await noSeriousAxeFindings(small);
    await screenshot(small, 'walk-app-detail-phone');
    await phone.close();
  });
});
