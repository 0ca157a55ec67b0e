import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, PHONE, screenshot, seriousAxeViolations, UI_WAIT_MS } from '../helpers/browser.js';
import { OWNER } from '../helpers/env.js';
import { connectMcp, createUserKey, mcpPost } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';
import { openDesignerMenu, openSection as openDesignerSection } from '../helpers/designer.js';

/**
 * The designer's administration sections in headless Chromium, signed in through the page: MCP
 * keys, integration keys, users, environment, menus, roles, settings and audit, each walked
 * through its real flow and checked against the server; then what a non-admin sees, at a phone's
 * width. One server, one browser and one owner page serve the whole file, in order.
 */
let server: TestServer;
let browser: Browser;
let owner: ReturnType<typeof graphqlClient>;
let page: Page;
/** Everything the owner's page wrote to its console: no secret may appear there. */
const consoleLines: string[] = [];
/** Secrets shown once during the run, checked against the console at the end. */
const secrets: string[] = [];

const CODE = 'export default function P() { return null }';

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  owner = graphqlClient(server.url, await login(server.url));
  for (const [id, name] of [
    ['orders', 'Orders'],
    ['customers', 'Customers'],
  ]) {
    await gqlData(owner, 'mutation($id: ID!, $name: String!, $code: String!) { createFeature(_id: $id, name: $name, customCode: $code) { _id } }', { id, name, code: CODE });
  }
  await gqlData(owner, 'mutation { createUser(email: "dana@example.com", password: "dana-password", role: "designer") { _id } }');
  await gqlData(owner, 'mutation { setEnvironmentVariable(name: "OLD_TOKEN", value: "old") { _id } }');
  ({ page } = await signIn(OWNER.email, OWNER.password, DESKTOP));
  page.on('console', (message) => consoleLines.push(message.text()));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signIn(email: string, password: string, viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  // A step that cannot happen fails in seconds, with the locator named, not at the test's timeout.
  context.setDefaultTimeout(UI_WAIT_MS);
  const page = await context.newPage();
  await page.goto(`${server.url}/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Designer' }).waitFor();
  return { context, page };
}

/** Opens a section through the navigation and waits for its heading. */
const openSection = openDesignerSection;

async function checkPage(name: string, target: Page = page) {
  expect(await seriousAxeViolations(target)).toEqual([]);
  await screenshot(target, name);
}

/** The text of a secret shown once (ShownOnce labels its <code> with the secret's name). */
async function shownOnce(label: string): Promise<string> {
  const text = (await page.getByLabel(label, { exact: true }).textContent()) ?? '';
  expect(text.length).toBeGreaterThan(10);
  secrets.push(text);
  return text;
}

async function waitUntil(what: string, probe: () => Promise<boolean>) {
  const deadline = Date.now() + 10_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the designer, administration sections', () => {
  it('MCP keys: creates a key shown once with a ready client configuration, the key works, and revoking it stops it', async () => {
    await openSection(page, 'MCP keys');
    await page.getByLabel(/^Name/).fill('Claude Code');
    await page.getByRole('checkbox', { name: 'config:read' }).check();
    await page.getByRole('checkbox', { name: 'features:write' }).check();
    const days = page.getByLabel('Expires in (days)');
    expect(await days.inputValue()).toBe('30');
    // Out of range: the page says so and sends nothing.
    await days.fill('400');
    await page.getByRole('button', { name: 'Create MCP key' }).click();
    await page.getByText('Enter a whole number of days from 1 to 365.').waitFor();
    await days.fill('30');
    await page.getByRole('button', { name: 'Create MCP key' }).click();

    const apiKey = await shownOnce('API key');
    await page.getByText('Copy the key now: it will not be shown again.').waitFor();
    const url = `${server.url}/api/mcp`;
    const [json, command] = await page.locator('pre').allTextContents();
    expect(JSON.parse(json!)).toEqual({ mcpServers: { trellis: { type: 'http', url, headers: { Authorization: `Bearer ${apiKey}` } } } });
    expect(command).toBe(`claude mcp add --transport http trellis ${url} --header "Authorization: Bearer ${apiKey}"`);
    await page.getByRole('button', { name: 'Copy configuration' }).waitFor();
    await page.getByRole('button', { name: 'Copy command' }).waitFor();
    await checkPage('designer-mcp-keys');

    // The key works: the tools of its scopes, and a call the audit section shows later.
    const client = await connectMcp(server, apiKey);
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(['get_feature_details', 'create_feature']));
    expect(tools).not.toContain('create_hook');
    await client.callTool({ name: 'get_feature_details', arguments: { _id: 'orders' } });
    await client.close();

    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'MCP keys' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'Claude Code' });
    await row.waitFor();
    expect(await page.content()).not.toContain(apiKey);
    const { keyPrefix } = (await gqlData(owner, '{ mcpApiKeys { keyPrefix } }')).mcpApiKeys[0];
    expect(apiKey.startsWith(keyPrefix)).toBe(true);
    await row.getByText(keyPrefix).waitFor();
    expect(await row.textContent()).toContain('config:read, features:write');

    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.getByText(/^Revoked/).waitFor();
    const refused = await mcpPost(server, apiKey, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } });
    expect(refused.status).toBe(401);
  });

  it('MCP keys, as an admin: lists every key of the application with its owner, and revokes another user’s key', async () => {
    const dana = await createUserKey(server, { email: 'dana@example.com', role: 'designer', scopes: ['config:read'] });
    await openSection(page, 'MCP keys');
    await page.getByRole('heading', { name: 'Your keys' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'dana@example.com key' }).count()).toBe(0);
    await page.getByRole('checkbox', { name: 'Show every key of the application (admin)' }).check();
    await page.getByRole('heading', { name: 'Every key of the application' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'dana@example.com key' });
    await row.waitFor();
    expect(await row.getByRole('cell').nth(1).textContent()).toBe('dana@example.com');
    expect(await page.getByRole('row').filter({ hasText: 'Claude Code' }).getByRole('cell').nth(1).textContent()).toBe(OWNER.email);
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.getByText(/^Revoked/).waitFor();
    const refused = await mcpPost(server, dana.apiKey, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } });
    expect(refused.status).toBe(401);
  });

  it('Integrations: an API key is shown once, exchanged for a token, and deleted after a confirmation', async () => {
    await openSection(page, 'Integrations');
    await page.getByRole('heading', { level: 2, name: 'API Keys' }).waitFor();
    await page.getByLabel(/^Name/).fill('Billing');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const clientId = await shownOnce('Client ID');
    const apiKey = await shownOnce('API key');
    await page.getByText('Copy the API key now: it will not be shown again.').waitFor();
    await page.getByRole('button', { name: 'Copy API key' }).waitFor();
    await checkPage('designer-integrations');

    const exchanged = await postJson(`${server.url}/api/auth/token`, { clientId, apiKey });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.access_token).toEqual(expect.any(String));

    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.content()).not.toContain(apiKey);
    const row = page.getByRole('row').filter({ hasText: 'Billing' });
    await row.getByText(clientId).waitFor();
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByText('Its access tokens stop working at once.').waitFor();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await row.waitFor({ state: 'detached' });
    const refused = await postJson(`${server.url}/api/auth/token`, { clientId, apiKey });
    expect(refused.status).toBe(401);
  });

  it('Users: creates a user, changes their role and disables them, after which they cannot sign in', async () => {
    await openSection(page, 'Users');
    await page.getByLabel('Email', { exact: true }).fill('erin@example.com');
    await page.getByLabel('Name', { exact: true }).fill('Erin');
    await page.getByLabel('Password', { exact: true }).fill('erin-password-1');
    // Scoped to the form: each row of the table has a role select of its own.
    await page.getByRole('form', { name: 'Create a user' }).getByLabel(/^Role/).selectOption({ label: 'viewer' });
    await page.getByRole('button', { name: 'Create user' }).click();
    const row = page.getByRole('row').filter({ hasText: 'erin@example.com' });
    await row.waitFor();
    expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('');
    await login(server.url, 'erin@example.com', 'erin-password-1');

    await page.getByLabel('Role of erin@example.com').selectOption({ label: 'designer' });
    const roleOf = async () => ((await gqlData(owner, '{ users { email roleName disabled } }')).users as { email: string; roleName: string; disabled: boolean }[]).find((u) => u.email === 'erin@example.com')!;
    await waitUntil('the role change', async () => (await roleOf()).roleName === 'designer');
    await page.getByRole('button', { name: 'Disable erin@example.com' }).click();
    await page.getByRole('button', { name: 'Enable erin@example.com' }).waitFor();
    expect(await roleOf()).toMatchObject({ roleName: 'designer', disabled: true });
    const refused = await postJson(`${server.url}/api/auth/login`, { email: 'erin@example.com', password: 'erin-password-1' });
    expect(refused.status).toBe(401);
    await checkPage('designer-users');
  });

  it('Environment: sets a value that is never displayed, lists the name, and deletes a variable after a confirmation', async () => {
    const secret = 'sk_live_never_shown_4711';
    secrets.push(secret);
    await openSection(page, 'Environment');
    await page.getByLabel('Name', { exact: true }).fill('PAYMENT_TOKEN');
    const value = page.getByLabel(/^Value/);
    expect(await value.getAttribute('type')).toBe('password');
    await value.fill(secret);
    await page.getByRole('button', { name: 'Save variable' }).click();
    await page.getByRole('cell', { name: 'PAYMENT_TOKEN', exact: true }).waitFor();
    expect(await value.inputValue()).toBe('');
    expect(await page.content()).not.toContain(secret);
    expect(await page.evaluate(() => document.body.innerText)).not.toContain(secret);
    expect((await gqlData(owner, '{ environmentVariables { name } }')).environmentVariables).toEqual([{ name: 'OLD_TOKEN' }, { name: 'PAYMENT_TOKEN' }]);
    await checkPage('designer-environment');

    const old = page.getByRole('row').filter({ hasText: 'OLD_TOKEN' });
    await old.getByRole('button', { name: 'Delete' }).click();
    await old.getByRole('button', { name: 'Yes, delete' }).click();
    await old.waitFor({ state: 'detached' });
    expect((await gqlData(owner, '{ environmentVariables { name } }')).environmentVariables).toEqual([{ name: 'PAYMENT_TOKEN' }]);
  });

  it('Menus: creates a menu whose entries point at features, moved into order, then deletes it', async () => {
    await openSection(page, 'Menus');
    await page.getByRole('button', { name: 'New menu' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Main');
    await page.getByLabel(/^Position/).fill('1');
    await page.getByRole('button', { name: 'Add entry' }).click();
    await page.getByRole('button', { name: 'Add entry' }).click();
    const first = page.getByRole('group', { name: 'Entry 1' });
    const second = page.getByRole('group', { name: 'Entry 2' });
    await first.getByLabel('Label').fill('Orders');
    await first.getByLabel('Feature').selectOption({ label: 'Orders' });
    await second.getByLabel('Label').fill('Customers');
    // Saving without a feature says which entry lacks one.
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await second.getByText('Choose a feature.').waitFor();
    await second.getByLabel('Feature').selectOption({ label: 'Customers' });
    expect(await second.getByText('Choose a feature.').count()).toBe(0);
    await page.getByRole('button', { name: 'Move up entry 2' }).click();
    expect(await first.getByLabel('Label').inputValue()).toBe('Customers');
    await checkPage('designer-menus');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Edit menu Main' }).waitFor();

    const { menus } = await gqlData(owner, '{ menus { name position entries { label path } } }');
    expect(menus).toEqual([
      {
        name: 'Main',
        position: 1,
        entries: [
          { label: 'Customers', path: '/feature/customers' },
          { label: 'Orders', path: '/feature/orders' },
        ],
      },
    ]);

    await page.getByRole('button', { name: 'Edit menu Main' }).click();
    await page.getByRole('button', { name: 'Delete menu' }).click();
    await page.getByRole('button', { name: 'Yes, delete menu' }).click();
    await page.getByText('No menus yet.').waitFor();
    expect((await gqlData(owner, '{ menus { name } }')).menus).toEqual([]);
  });

  it('Roles: grants a feature to the viewer role through the matrix, and creates, edits and deletes a role', async () => {
    await openSection(page, 'Roles');
    const grant = page.getByRole('checkbox', { name: 'viewer sees Orders' });
    await grant.check();
    await waitUntil('the grant', async () => (await grant.isEnabled()) && (await grant.isChecked()));
    const { roles } = await gqlData(owner, '{ roles { _id name } }');
    const viewerId = (roles as { _id: string; name: string }[]).find((role) => role.name === 'viewer')!._id;
    expect((await gqlData(owner, '{ featureRoles(featureId: "orders") }')).featureRoles).toContain(viewerId);

    await page.getByRole('row').filter({ hasText: 'viewer' }).first().getByText('Built-in roles cannot be changed or deleted.').waitFor();
    const form = page.getByRole('form', { name: 'Create a role' });
    await form.getByLabel('Name', { exact: true }).fill('Auditor');
    await form.getByRole('checkbox', { name: 'ai_designer' }).check();
    await form.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('button', { name: 'Edit permissions of Auditor' }).waitFor();
    const created = (await gqlData(owner, '{ roles { name permissions builtin } }')).roles.find((role: { name: string }) => role.name === 'Auditor');
    expect(created).toEqual({ name: 'Auditor', permissions: ['config:read', 'ai_designer'], builtin: false });
    await checkPage('designer-roles');

    await page.getByRole('button', { name: 'Edit permissions of Auditor' }).click();
    const edit = page.getByRole('group', { name: 'Permissions of Auditor' });
    await edit.getByRole('checkbox', { name: 'ai_designer' }).uncheck();
    await edit.getByRole('checkbox', { name: 'menus:write' }).check();
    await page.getByRole('button', { name: 'Save permissions' }).click();
    // The form closes once the server has the change (its own checkbox says menus:write before that).
    await edit.waitFor({ state: 'detached' });
    const auditor = page.getByRole('row').filter({ hasText: 'Auditor' }).first();
    await auditor.getByText('menus:write').waitFor();
    const edited = (await gqlData(owner, '{ roles { name permissions } }')).roles.find((role: { name: string }) => role.name === 'Auditor');
    expect(edited.permissions).toEqual(['config:read', 'menus:write']);
    await auditor.getByRole('button', { name: 'Delete' }).click();
    await auditor.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByRole('button', { name: 'Edit permissions of Auditor' }).waitFor({ state: 'detached' });
    expect((await gqlData(owner, '{ roles { name } }')).roles.map((role: { name: string }) => role.name)).toEqual(['admin', 'designer', 'viewer']);
  });

  it('Settings: changes the name and the primary colour, previewed live, and shows a refused origin by its field', async () => {
    await openSection(page, 'Settings');
    await page.getByLabel('Application name').fill('Acme Ops');
    await page.getByLabel('primary', { exact: true }).fill('#7c3aed');
    const button = page.getByTestId('preview-button');
    expect(await button.evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(124, 58, 237)');
    expect(await page.getByLabel('primary colour picker').inputValue()).toBe('#7c3aed');

    const origins = page.getByLabel('Allowed CORS origins');
    await origins.fill('shop.example.com');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('alert').filter({ hasText: 'must be an origin' }).waitFor();
    expect(await origins.getAttribute('aria-invalid')).toBe('true');
    await origins.fill('https://shop.example.com');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('.brand').filter({ hasText: 'Acme Ops' }).waitFor();

    const { application } = await gqlData(owner, '{ application { name corsOrigins theme { colors } } }');
    expect(application.name).toBe('Acme Ops');
    expect(application.corsOrigins).toEqual(['https://shop.example.com']);
    expect(application.theme.colors.primary).toBe('#7c3aed');
    await checkPage('designer-settings');
  });

  it('Audit: the MCP call made with the key is listed, filtered by tool, its arguments can be shown, and the log pages', async () => {
    // 50 newer calls push the first one onto the second page.
    const { apiKey } = await createUserKey(server, { email: OWNER.email, role: 'admin', scopes: ['config:read'] });
    secrets.push(apiKey);
    const client = await connectMcp(server, apiKey);
    for (let call = 0; call < 50; call += 1) await client.callTool({ name: 'list_menus', arguments: {} });
    await client.close();

    await openSection(page, 'Audit');
    const rows = page.getByRole('row');
    await rows.filter({ hasText: 'list_menus' }).first().waitFor();
    expect(await rows.count()).toBe(51);
    expect(await rows.filter({ hasText: 'get_feature_details' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('Page 2').waitFor();
    await rows.filter({ hasText: 'get_feature_details' }).waitFor();
    await page.getByRole('button', { name: 'First page' }).click();
    await page.getByText('Page 1').waitFor();
    await rows.filter({ hasText: 'get_feature_details' }).waitFor({ state: 'detached' });

    await page.getByLabel('Tool', { exact: true }).fill('get_feature_details');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const row = page.getByRole('row').filter({ hasText: 'get_feature_details' });
    await row.waitFor();
    expect(await page.getByRole('row').count()).toBe(2);
    expect(await row.textContent()).toContain(OWNER.email);
    // The key by its name and visible prefix (the one the MCP keys test created), not its internal id.
    const keyCell = (await row.getByRole('cell').nth(3).textContent())!;
    expect(keyCell).toMatch(/^Claude Code trellis_[A-Za-z0-9_-]{4}…$/);
    // Filtered by that prefix, and by a key that made no such call.
    await page.getByLabel('Key', { exact: true }).fill(keyCell.split(' ').at(-1)!.replace('…', ''));
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByLabel('Key', { exact: true }).fill(`${OWNER.email} key`);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No calls match.').waitFor();
    await page.getByLabel('Key', { exact: true }).fill('claude code');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await row.waitFor();
    expect(await page.getByRole('row').count()).toBe(2);
    await row.getByRole('button', { name: 'Show arguments' }).click();
    const details = page.locator('pre').filter({ hasText: '"_id": "orders"' });
    await details.waitFor();
    expect(JSON.parse((await details.textContent())!)).toEqual({ _id: 'orders' });
    await checkPage('designer-audit');
  });

  it('nothing secret reached the page console', () => {
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    for (const secret of secrets) expect(consoleLines.join('\n')).not.toContain(secret);
  });

  it('a non-admin, at a phone width, sees no admin sections and the admin-only scopes disabled with the reason', async () => {
    const designer = await signIn('dana@example.com', 'dana-password', PHONE);
    // At a phone's width the sections fold behind the Menu button.
    await openDesignerMenu(designer.page);
    const links = await designer.page.getByRole('navigation', { name: 'Designer' }).getByRole('link').allTextContents();
    expect(links).toEqual(['Features', 'Hooks', 'Tables', 'Menus', 'Roles', 'Environment', 'MCP keys']);
    await openSection(designer.page, 'MCP keys');
    for (const scope of ['hooks:write', 'roles:write', 'env:write', 'config:delete']) {
      const box = designer.page.getByRole('checkbox', { name: scope });
      expect(await box.isDisabled()).toBe(true);
      const describedBy = (await box.getAttribute('aria-describedby'))!;
      const reason = designer.page.locator(`[id="${describedBy}"]`);
      expect(await reason.textContent()).toBe('Only admins can grant this scope');
      expect(await reason.isVisible()).toBe(true);
    }
    expect(await designer.page.getByRole('checkbox', { name: 'features:write' }).isEnabled()).toBe(true);
    expect(await designer.page.getByRole('checkbox', { name: /Show every key/ }).count()).toBe(0);
    await checkPage('designer-mcp-keys-phone', designer.page);
    await openSection(designer.page, 'Environment');
    await designer.page.getByText('You can see the names only').waitFor();
    await designer.page.getByRole('cell', { name: 'PAYMENT_TOKEN', exact: true }).waitFor();
    expect(await designer.page.getByLabel('Value').count()).toBe(0);
    await designer.context.close();
  });
});
