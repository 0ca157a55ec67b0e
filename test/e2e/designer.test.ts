import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickAfterScroll, DESKTOP, launchBrowser, PHONE, screenshot, seriousAxeViolations, trackRequests, UI_WAIT_MS } from '../helpers/browser.js';
import { OWNER } from '../helpers/env.js';
import { connectMcp, createUserKey } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';
import { openDesignerMenu } from '../helpers/designer.js';

/**
 * The designer (GET /) in headless Chromium, as a person clicks it: sign-in, the sections, the
 * feature editor with the validator's findings, versions, preview and publish, hooks with their run
 * log, tables with the record browser; and docs/scenarios.md 7: an app built through MCP, previewed and
 * published in the designer, then opened in /app by a user of the designer role.
 */
let server: TestServer;
let browser: Browser;
let owner: ReturnType<typeof graphqlClient>;

const ORDERS_PAGE = `import { useQuery } from '@trellis/runtime';
import { Card, Heading, Table } from '@trellis/ui';

const LIST = \`query { listOrders(sort: [{ field: title }]) { items { _id title amount } total } }\`;

export default function OrdersPage() {
  const { data, loading } = useQuery(LIST);
  if (loading) return null;
  return (
    <Card>
      <Heading>Order list</Heading>
      <Table rows={data.listOrders.items} columns={[{ key: 'title', header: 'Title' }, { key: 'amount', header: 'Amount' }]} />
    </Card>
  );
}
`;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  owner = graphqlClient(server.url, await login(server.url));
  await gqlData(owner, 'mutation { createUser(email: "dana@example.com", password: "dana-password", role: "designer") { _id } }');
  await gqlData(owner, 'mutation { createUser(email: "vic@example.com", password: "vic-password", role: "viewer") { _id } }');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signIn(email: string = OWNER.email, password: string = OWNER.password, viewport: { width: number; height: number } = DESKTOP): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  const page = trackRequests(await context.newPage());
  // Fail with the locator that did not appear, well before the test's own timeout.
  page.setDefaultTimeout(UI_WAIT_MS);
  await page.goto(`${server.url}/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Designer' }).waitFor();
  return { context, page };
}

function section(page: Page, name: string) {
  return openDesignerMenu(page).then(() => page.getByRole('navigation', { name: 'Designer' }).getByRole('link', { name, exact: true }).click());
}

/** Types into the CodeMirror editor named `label`, replacing its text. */
async function replaceCode(page: Page, label: string, code: string) {
  const editor = page.getByRole('textbox', { name: label });
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  // insertText: CodeMirror would auto-indent and auto-close typed brackets.
  await page.keyboard.insertText(code);
}

describe('the designer', () => {
  it('signs in, shows every section to an admin, and only the others to a designer', async () => {
    const { context, page } = await signIn();
    const links = await page.getByRole('navigation', { name: 'Designer' }).getByRole('link').allTextContents();
    expect(links).toEqual(['Features', 'Hooks', 'Tables', 'Menus', 'Roles', 'Users', 'Environment', 'Integrations', 'MCP keys', 'Audit', 'Settings']);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong e-mail or password.' }).waitFor();
    await context.close();

    // The icon a browser asks for on every page is there (no 404 in the console).
    const icon = await fetch(`${server.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(await icon.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^]*<\/svg>$/);

    const designer = await signIn('dana@example.com', 'dana-password');
    const visible = await designer.page.getByRole('navigation', { name: 'Designer' }).getByRole('link').allTextContents();
    expect(visible).toEqual(['Features', 'Hooks', 'Tables', 'Menus', 'Roles', 'Environment', 'MCP keys']);
    await designer.context.close();
  });

  it('builds a table with fields and browses its records: create, filter, edit, delete, and a hook\'s refusal on the form', async () => {
    const { context, page } = await signIn();
    await section(page, 'Tables');
    await page.getByRole('button', { name: 'New table' }).click();
    await page.getByLabel('Name of the new table').fill('Items');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('heading', { name: 'Items', level: 2 }).waitFor();
    for (const [name, type] of [
      ['label', 'text'],
      ['qty', 'number'],
    ] as const) {
      await page.getByLabel('Field name').fill(name);
      await page.getByLabel('Field type').selectOption(type);
      await page.getByRole('button', { name: 'Add field' }).click();
      await page.getByRole('cell', { name, exact: true }).waitFor();
    }
    await page.getByLabel('Description of qty', { exact: true }).fill('How many are in stock');
    await page.getByRole('button', { name: 'Save the description of qty' }).click();
    await page.getByText('Description of qty saved').waitFor();
    const items = (await gqlData(owner, '{ tables { _id name fields { name description } } }')).tables.find((t: { name: string }) => t.name === 'Items');
    expect(items.fields).toEqual([
      { name: 'label', description: '' },
      { name: 'qty', description: 'How many are in stock' },
    ]);
    const tableId = items._id;
    await gqlData(owner, 'mutation($t: ID!, $c: String!) { createHook(name: "qty-positive", type: "beforeSave", tableId: $t, content: $c) { _id } }', {
      t: tableId,
      c: "async function (instance) { if (instance.qty < 0) throw new Error('Quantity must not be negative'); return instance; }",
    });
    const records = page.getByRole('table', { name: 'Records of Items' });
    for (const [label, qty] of [
      ['apple', '3'],
      ['pear', '5'],
    ] as const) {
      await page.getByRole('button', { name: 'New record' }).click();
      const form = page.getByRole('form', { name: 'New record' });
      await form.getByLabel('label').fill(label);
      await form.getByLabel('qty').fill(qty);
      await form.getByRole('button', { name: 'Create record' }).click();
      await records.getByRole('cell', { name: label }).waitFor();
    }
    await page.getByRole('button', { name: 'New record' }).click();
    const refused = page.getByRole('form', { name: 'New record' });
    await refused.getByLabel('label').fill('broken');
    await refused.getByLabel('qty').fill('-1');
    await refused.getByRole('button', { name: 'Create record' }).click();
    await refused.getByRole('alert').filter({ hasText: 'Quantity must not be negative' }).waitFor();
    await refused.getByRole('button', { name: 'Cancel' }).click();
    expect((await gqlData(owner, '{ listItems { total } }')).listItems.total).toBe(2);

    await page.getByLabel('Filter field').selectOption('label');
    await page.getByLabel('Condition').selectOption('contains');
    await page.getByLabel('Value').fill('pea');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await page.getByRole('status').filter({ hasText: '1 record' }).waitFor();
    await page.getByRole('button', { name: 'Clear filter' }).click();
    await page.getByRole('status').filter({ hasText: '2 records' }).waitFor();

    await records.getByRole('row', { name: /apple/ }).getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit record' });
    await edit.getByLabel('qty').fill('7');
    await edit.getByRole('button', { name: 'Save record' }).click();
    await records.getByRole('cell', { name: '7', exact: true }).waitFor();
    await records.getByRole('row', { name: /pear/ }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByRole('status').filter({ hasText: '1 record' }).waitFor();
    const left = await gqlData(owner, '{ listItems { items { label qty } } }');
    expect(left.listItems.items).toEqual([{ label: 'apple', qty: 7 }]);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-tables');
    await context.close();
  });

  it('edits a feature with the validator\'s findings inline, saves a draft, compares versions, restores one and publishes', async () => {
    await gqlData(owner, 'mutation { createTable(name: "Orders", fields: [{ name: "title", type: "text", required: true }, { name: "amount", type: "number" }]) { _id } }');
    await gqlData(owner, 'mutation { createOrders(data: { title: "Desk", amount: 120 }) { _id } }');
    const { context, page } = await signIn();
    await section(page, 'Features');
    await page.getByRole('button', { name: 'New feature' }).click();
    await page.getByLabel('Name of the new feature').fill('Order list');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('textbox', { name: 'Feature code' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/features/order-list');

    await replaceCode(page, 'Feature code', "import { fetchData } from 'axios';\nexport default function P() { return <div style={{ color: '#ff0000' }}>x</div>; }\n");
    const problems = page.getByRole('list', { name: 'Problems in the code' });
    await problems.getByText(/Error \(line 1\): .*axios/).waitFor();
    await problems.getByText(/Warning \(line 2\)/).waitFor();
    await page.locator('.cm-lint-marker-error').first().waitFor();
    expect(await page.getByRole('button', { name: 'Publish' }).isDisabled()).toBe(true);

    await replaceCode(page, 'Feature code', ORDERS_PAGE);
    await page.getByRole('status').filter({ hasText: 'No problems found.' }).waitFor();
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('row', { name: /^2 draft/ }).waitFor();
    await page.getByRole('button', { name: 'Show diff' }).click();
    const diff = page.getByLabel('Differences');
    await diff.getByText("+import { useQuery } from '@trellis/runtime';").waitFor();
    await diff.getByText("-import { Card, Heading, Text } from '@trellis/ui';").waitFor();

    await page.getByRole('button', { name: 'Preview' }).click();
    await page.frameLocator('iframe[title="Preview of Order list"]').getByRole('cell', { name: 'Desk' }).waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-features');

    await page.getByRole('button', { name: 'Restore version 1' }).click();
    await page.getByRole('row', { name: /^3 draft/ }).waitFor();
    expect((await gqlData(owner, '{ feature(_id: "order-list") { version customCode } }')).feature.customCode).toContain('New page');
    await page.getByRole('textbox', { name: 'Feature code' }).getByText('New page').waitFor();
    // Below the preview, whose frame settles after the scroll: the click waits for the page to paint.
    await clickAfterScroll(page.getByRole('button', { name: 'Restore version 2' }));
    await page.getByRole('row', { name: /^4 draft/ }).waitFor();
    await clickAfterScroll(page.getByRole('button', { name: 'Publish' }));
    await page.getByText('published v5').first().waitFor();
    const stored = (await gqlData(owner, '{ feature(_id: "order-list") { status publishedVersion customCode } }')).feature;
    expect(stored).toEqual({ status: 'published', publishedVersion: 5, customCode: ORDERS_PAGE });
    await context.close();
  });

  it('keeps the code being typed when the session ends, and saves it after signing in again', async () => {
    await gqlData(owner, 'mutation($c: String!) { createFeature(_id: "notes", name: "Notes", customCode: $c) { _id } }', { c: 'export default function Notes() { return null }\n' });
    const { context, page } = await signIn();
    await page.goto(`${server.url}/#/features/notes`);
    await page.getByRole('textbox', { name: 'Feature code' }).waitFor();
    // A fixed colour: its warning tells that the check of this code (not of the stored one) has answered.
    const code = "import { Text } from '@trellis/ui';\nexport default function Notes() { return <Text style={{ color: '#ff0000' }}>Unsaved work</Text>; }\n";
    await replaceCode(page, 'Feature code', code);
    // The check of what was typed has answered: the next call is the save.
    await page.getByRole('status').filter({ hasText: '0 errors, 1 warning' }).waitFor();
    // The server forgets the session (as when it expires): every call now gets 401.
    await page.evaluate(() => localStorage.setItem('trellis.session', JSON.stringify({ ...JSON.parse(localStorage.getItem('trellis.session')!), token: 'expired' })));
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Your session has ended. Sign in again: nothing you typed is lost.').waitFor();
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('row', { name: /^2 draft/ }).waitFor();
    expect((await gqlData(owner, '{ feature(_id: "notes") { customCode } }')).feature.customCode).toBe(code);
    await context.close();
  });

  it('creates a webhook, shows its URL, sends a test request and lists the run', async () => {
    const { context, page } = await signIn();
    await section(page, 'Hooks');
    await page.getByRole('button', { name: 'New hook' }).click();
    await page.getByLabel('Name of the new hook').fill('echo');
    await page.getByLabel('Type').selectOption('webHook');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('textbox', { name: 'Hook code' }).waitFor();
    await expect(page.getByLabel('Webhook URL').textContent()).resolves.toBe(`${server.url}/api/webhook/echo`);
    await replaceCode(page, 'Hook code', "async function (body) {\n  console.log('got', body.hello);\n  return { echoed: body.hello, secret: env.NOT_THERE };\n}\n");
    await page.getByRole('list', { name: 'Problems in the code' }).getByText(/NOT_THERE/).waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/^version 2 · saved/).waitFor();
    // A toast tells; it never takes a click meant for what lies under it.
    const toast = page.getByRole('status').getByText('Saved version 2 of echo');
    const box = (await toast.boundingBox())!;
    const hit = await page.evaluate(([x, y]) => document.elementFromPoint(x!, y!)?.closest('[role="status"]')?.textContent ?? null, [box.x + box.width / 2, box.y + box.height / 2]);
    expect(hit).toBeNull();
    await page.getByRole('button', { name: 'Send test request' }).click();
    const answer = page.getByRole('status', { name: 'Test run answer' });
    await answer.getByText('HTTP 200').waitFor();
    await answer.getByText('{"echoed":"world"}').waitFor();
    const runs = page.getByRole('table', { name: 'Runs' });
    await runs.getByRole('cell', { name: 'ok', exact: true }).waitFor();
    await runs.getByText('got world').waitFor();
    await runs.getByText('Input and output').first().click();
    await expect(runs.getByLabel('Input').first().textContent()).resolves.toBe(JSON.stringify({ hello: 'world' }, null, 2));
    await expect(runs.getByLabel('Output').first().textContent()).resolves.toBe(JSON.stringify({ echoed: 'world' }, null, 2));
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-hooks');
    await context.close();
  });

  it('lets an owner preview and publish what an agent built through MCP, and a designer-role user open it in /app (scenario 7)', async () => {
    const { apiKey } = await createUserKey(server, { email: OWNER.email, role: 'admin', scopes: ['config:read', 'features:write', 'tables:write', 'menus:write', 'roles:write'] });
    const agent = await connectMcp(server, apiKey);
    await agent.callTool({ name: 'create_table', arguments: { name: 'Deliveries', fields: [{ name: 'place', type: 'text', required: true }] } });
    const code = ORDERS_PAGE.replaceAll('listOrders', 'listDeliveries').replace('items { _id title amount }', 'items { _id place }').replace("[{ field: title }]", '[{ field: place }]').replace("{ key: 'title', header: 'Title' }, { key: 'amount', header: 'Amount' }", "{ key: 'place', header: 'Place' }");
    const created = await agent.callTool({ name: 'create_feature', arguments: { _id: 'deliveries', name: 'Deliveries', customCode: code } });
    expect(created.isError).toBeFalsy();
    await agent.callTool({ name: 'upsert_menu', arguments: { name: 'Work', entries: [{ label: 'Deliveries', path: '/feature/deliveries' }] } });
    const granted = await agent.callTool({ name: 'grant_feature_access', arguments: { featureId: 'deliveries', roleIds: ['designer'] } });
    expect(granted.isError).toBeFalsy();
    await agent.close();
    await gqlData(owner, 'mutation { createDeliveries(data: { place: "Harbour" }) { _id } }');

    const { context, page } = await signIn();
    await page.goto(`${server.url}/#/features/deliveries`);
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.frameLocator('iframe[title="Preview of Deliveries"]').getByRole('cell', { name: 'Harbour' }).waitFor();
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByText('published v2').first().waitFor();
    await context.close();

    const user = await browser.newContext({ viewport: PHONE });
    const app = await user.newPage();
    await app.goto(`${server.url}/app`);
    await app.getByLabel('Email').fill('dana@example.com');
    await app.getByLabel('Password').fill('dana-password');
    await app.getByRole('button', { name: 'Sign in' }).click();
    // At a phone's width the menus are behind the Menu button.
    await app.getByRole('button', { name: 'Menu' }).click();
    await app.getByRole('navigation', { name: 'Application' }).getByRole('link', { name: 'Deliveries' }).click();
    await app.frameLocator('iframe[title="Deliveries"]').getByRole('cell', { name: 'Harbour' }).waitFor();
    await user.close();
  });

  it('lets a user change their own password: the current one is checked, the page goes on with the new session', async () => {
    const { context, page } = await signIn('vic@example.com', 'vic-password');
    await page.getByRole('button', { name: 'Change password' }).click();
    const dialog = page.getByRole('dialog', { name: 'Change your password' });
    await dialog.getByLabel('Current password').fill('not-my-password');
    await dialog.getByLabel('New password').fill('vic-password-2');
    await dialog.getByRole('button', { name: 'Save the new password' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'currentPassword: is not your current password' }).waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await dialog.getByLabel('Current password').fill('vic-password');
    await dialog.getByRole('button', { name: 'Save the new password' }).click();
    await page.getByText('Password changed; your other sessions have ended').waitFor();
    await section(page, 'Tables');
    await page.getByRole('heading', { name: 'Tables', level: 1 }).waitFor();
    expect((await postJson(`${server.url}/api/auth/login`, { email: 'vic@example.com', password: 'vic-password' })).status).toBe(401);
    expect((await postJson(`${server.url}/api/auth/login`, { email: 'vic@example.com', password: 'vic-password-2' })).status).toBe(200);
    await context.close();
  });

  it('is usable by keyboard alone: sign in, open a section, create a table', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    page.setDefaultTimeout(UI_WAIT_MS);
    await page.goto(`${server.url}/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // The sign-in form focuses its first field.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('email');
    await page.keyboard.type(OWNER.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(OWNER.password);
    await page.keyboard.press('Enter');
    const nav = page.getByRole('navigation', { name: 'Designer' });
    await nav.waitFor();
    // Tab until the Tables link has the focus, then follow it.
    for (let i = 0; i < 30 && !(await nav.getByRole('link', { name: 'Tables', exact: true }).evaluate((link) => link === document.activeElement)); i++) {
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Tables', level: 1 }).waitFor();
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('New table');
    await page.keyboard.press('Enter');
    // The form's first field takes the focus.
    await page.keyboard.type('Keyboard');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Keyboard', level: 2 }).waitFor();
    await context.close();
  });
});
