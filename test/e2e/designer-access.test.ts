import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSION_MEANINGS, PERMISSIONS } from '../../src/access/permission-list.js';
import { DESKTOP, launchBrowser, PHONE, screenshot, seriousAxeViolations, UI_WAIT_MS } from '../helpers/browser.js';
import { OWNER } from '../helpers/env.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';
import { openSection as openDesignerSection } from '../helpers/designer.js';

/**
 * Data access by role in headless Chromium: an admin sets a role's rules on a table in the table's
 * Access tab (levels, a filter checked as it is typed and by the server, hidden fields), the Roles
 * and Integrations sections show what each role and key reaches, and on the application page a
 * viewer's feature lists only the viewer's own records, with the hidden field empty and no button
 * that useCurrentUser().can() rules out. Granting a feature in the Roles section says what it gave
 * the role, and each permission there says what it allows. One server and one browser serve the
 * file, in order.
 */
let server: TestServer;
let browser: Browser;
let owner: ReturnType<typeof graphqlClient>;
let page: Page;
let ordersId: string;

const MY_ORDERS = `import { useCurrentUser, useQuery } from '@trellis/runtime';
import { Button, Card, Heading, Stack, Table, Text } from '@trellis/ui';

const LIST = \`query MyOrders { listOrders(sort: [{ field: title }], limit: 100) { items { _id title amount } total } }\`;

export default function MyOrders() {
  const user = useCurrentUser();
  const { data, loading, error } = useQuery(LIST);
  if (!user || (loading && !data)) return <Text>Loading…</Text>;
  if (error) return <Text>{error.message}</Text>;
  const canDelete = user.can('Orders', 'delete');
  return (
    <Card>
      <Stack>
        <Heading>My orders</Heading>
        <Table
          rows={data.listOrders.items}
          columns={[
            { key: 'title', header: 'Title' },
            { key: 'amount', header: 'Amount' },
            { key: '_id', header: 'Actions', render: (order) => (canDelete ? <Button>Delete {order.title}</Button> : null) },
          ]}
        />
        <Text>{data.listOrders.total} orders</Text>
        {user.can('orders', 'create') ? <Button>New order</Button> : null}
      </Stack>
    </Card>
  );
}
`;

/** Lists and creates orders: granting it needs read and create on Orders. */
const ORDER_ENTRY = `import { useMutation, useQuery } from '@trellis/runtime';
import { Button, Stack, Text } from '@trellis/ui';

const LIST = \`query EntryOrders { listOrders(limit: 20) { items { _id title } total } }\`;
const CREATE = \`mutation EnterOrder($data: OrdersInput!) { createOrders(data: $data) { _id } }\`;

export default function OrderEntry() {
  const { data, refetch } = useQuery(LIST);
  const [create] = useMutation(CREATE);
  return (
    <Stack>
      <Text>{data ? data.listOrders.total : 0} orders</Text>
      <Button onClick={() => create({ data: { title: 'New' } }).then(refetch)}>New order</Button>
    </Stack>
  );
}
`;

/** The texts of the elements that describe `element` (aria-describedby). */
async function description(element: Locator): Promise<string> {
  return element.evaluate((node) =>
    (node.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .filter(Boolean)
      .map((id) => document.getElementById(id)?.textContent ?? '')
      .join(' '),
  );
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  owner = graphqlClient(server.url, await login(server.url));
  await gqlData(owner, 'mutation { createUser(email: "dana@example.com", password: "dana-password", role: "designer") { _id } }');
  for (const email of ['vic@example.com', 'wes@example.com']) {
    await gqlData(owner, 'mutation($email: String!) { createUser(email: $email, password: "viewer-password", role: "viewer") { _id } }', { email });
  }
  const created = await gqlData(owner, 'mutation { createTable(name: "Orders", fields: [{ name: "title", type: "text", required: true }, { name: "amount", type: "number" }, { name: "region", type: "text" }]) { _id } }');
  ordersId = created.createTable._id;
  await gqlData(owner, 'mutation { createOrders(data: { title: "Owner order", amount: 10, region: "EU" }) { _id } }');
  await gqlData(owner, 'mutation($code: String!) { createFeature(_id: "my-orders", name: "My orders", customCode: $code, status: "published") { _id } }', { code: MY_ORDERS });
  await gqlData(owner, 'mutation { grantFeatureAccess(featureId: "my-orders", roleIds: ["viewer", "admin"]) }');
  await gqlData(owner, 'mutation($code: String!) { createFeature(_id: "order-entry", name: "Order entry", customCode: $code, status: "published") { _id } }', { code: ORDER_ENTRY });
  ({ page } = await signIn(OWNER.email, OWNER.password, '/', DESKTOP));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Signs in on the designer (/) or the application page (/app...) and waits for its navigation. */
async function signIn(email: string, password: string, path: string, viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(UI_WAIT_MS);
  const target = await context.newPage();
  await target.goto(`${server.url}${path}`);
  await target.getByLabel('Email').fill(email);
  await target.getByLabel('Password').fill(password);
  await target.getByRole('button', { name: 'Sign in' }).click();
  if (path.startsWith('/app')) await target.locator('nav[aria-label="Application"]:not([aria-busy])').waitFor();
  else await target.getByRole('navigation', { name: 'Designer' }).waitFor();
  return { context, page: target };
}

const openSection = (target: Page, link: string) => openDesignerSection(target, link);

async function viewerRules() {
  const { table } = await gqlData(owner, 'query($id: ID!) { table(_id: $id) { access { roleName read { level filter } create { level } update { level } delete { level } hiddenFields readOnlyFields } } }', { id: ordersId });
  return (table.access as { roleName: string }[]).find((entry) => entry.roleName === 'viewer');
}

describe('data access by role', () => {
  it("Access tab: sets viewer to read own, create all, update and delete none with a hidden field; a filter is checked as typed and by the server; the change is audited and survives a reload", async () => {
    await openSection(page, 'Tables');
    await page.getByRole('list', { name: 'Tables' }).getByRole('link', { name: /Orders/ }).click();
    await page.getByRole('tab', { name: 'Access' }).click();
    expect(new URL(page.url()).hash).toBe(`#/tables/${ordersId}/access`);
    const adminRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'admin' }) });
    await expect.poll(() => adminRow.getByRole('cell').allTextContents()).toEqual(['All (admin)', 'All (admin)', 'All (admin)', 'All (admin)']);
    expect(await adminRow.getByRole('combobox').count()).toBe(0);

    // A filter is checked as it is typed: JSON syntax, then the table's field names.
    const before = await viewerRules();
    const audited = async () => server.server.services.ctx.db.selectFrom('audit_events').selectAll().where('action', '=', 'table.access.set').orderBy('id').execute();
    const auditedBefore = (await audited()).length;
    const read = page.getByLabel('Read access of viewer');
    await read.selectOption({ label: 'Filter' });
    const filter = page.getByLabel('Read filter of viewer');
    await filter.fill('{"region":');
    await page.getByText(/^Not valid JSON/).waitFor();
    expect(await filter.getAttribute('aria-invalid')).toBe('true');
    await filter.fill('{"country":{"eq":"EU"}}');
    await page.getByText("'country' is not a field of this table").waitFor();
    // What only the server can tell is shown beside the filter after saving; nothing is stored.
    await filter.fill('{"amount":{"gte":"lots"}}');
    expect(await filter.getAttribute('aria-invalid')).toBeNull();
    await page.getByRole('button', { name: 'Save access' }).click();
    await page.getByText('amount.gte: must be a number', { exact: true }).waitFor();
    expect(await filter.getAttribute('aria-invalid')).toBe('true');
    expect(await viewerRules()).toEqual(before);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-access-refused');

    await read.selectOption({ label: 'Own records' });
    await expect(filter.count()).resolves.toBe(0);
    await page.getByLabel('Create access of viewer').selectOption({ label: 'All' });
    await page.getByLabel('Update access of viewer').selectOption({ label: 'None' });
    await page.getByLabel('Delete access of viewer').selectOption({ label: 'None' });
    await page.getByRole('group', { name: 'Hidden fields of viewer' }).getByRole('checkbox', { name: 'amount' }).check();
    await page.getByText('Changed: viewer').waitFor();
    await page.getByRole('button', { name: 'Save access' }).click();
    await page.getByText('Access of viewer to Orders saved').waitFor();
    await page.getByText('No unsaved changes').waitFor();

    expect(await viewerRules()).toEqual({
      roleName: 'viewer',
      read: { level: 'OWN', filter: null },
      create: { level: 'ALL' },
      update: { level: 'NONE' },
      delete: { level: 'NONE' },
      hiddenFields: ['amount'],
      readOnlyFields: [],
    });
    const audit = await audited();
    expect(audit).toHaveLength(auditedBefore + 1);
    expect(audit.at(-1)).toMatchObject({ resource_type: 'table', resource_id: ordersId, details: { role: 'viewer', read: 'OWN', create: 'ALL', update: 'NONE', delete: 'NONE', hiddenFields: ['amount'] } });

    await page.reload();
    await page.getByRole('tab', { name: 'Access', selected: true }).waitFor();
    expect(await page.getByLabel('Read access of viewer').inputValue()).toBe('OWN');
    expect(await page.getByLabel('Create access of viewer').inputValue()).toBe('ALL');
    expect(await page.getByLabel('Update access of viewer').inputValue()).toBe('NONE');
    expect(await page.getByLabel('Delete access of viewer').inputValue()).toBe('NONE');
    expect(await page.getByRole('group', { name: 'Hidden fields of viewer' }).getByRole('checkbox', { name: 'amount' }).isChecked()).toBe(true);
    expect(await page.getByRole('group', { name: 'Read-only fields of viewer' }).getByRole('checkbox', { name: 'amount' }).isChecked()).toBe(false);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-access');
  });

  it('Access tab: the tabs work by keyboard, and at a phone width every control fits without sideways scrolling and passes axe', async () => {
    const tab = page.getByRole('tab', { name: 'Access', selected: true });
    await tab.focus();
    await page.keyboard.press('ArrowLeft');
    await page.getByRole('tab', { name: 'Fields and records', selected: true }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/tables/${ordersId}`);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Fields and records');
    await page.getByRole('heading', { name: 'Fields', exact: true }).waitFor();
    await page.keyboard.press('End');
    await page.getByLabel('Read access of viewer').waitFor();

    const phone = await signIn(OWNER.email, OWNER.password, `/#/tables/${ordersId}/access`, PHONE);
    await phone.page.getByLabel('Read access of viewer').selectOption({ label: 'Filter' });
    await phone.page.getByLabel('Read filter of viewer').fill('{"_createdBy":{"eq":"$user._id"}}');
    const matrix = phone.page.getByRole('region', { name: 'Access by role and action' });
    expect(await matrix.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true);
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    expect(await seriousAxeViolations(phone.page)).toEqual([]);
    await screenshot(phone.page, 'designer-access-phone');
    await phone.context.close();
  });

  it('Access tab: a designer without roles:write sees the rules but cannot change them', async () => {
    const designer = await signIn('dana@example.com', 'dana-password', `/#/tables/${ordersId}/access`, DESKTOP);
    const read = designer.page.getByLabel('Read access of viewer');
    expect(await read.inputValue()).toBe('OWN');
    expect(await read.isDisabled()).toBe(true);
    expect(await designer.page.getByRole('group', { name: 'Hidden fields of viewer' }).getByRole('checkbox', { name: 'amount' }).isDisabled()).toBe(true);
    await designer.page.getByText('Changing data access needs the roles:write permission.').waitFor();
    expect(await designer.page.getByRole('button', { name: 'Save access' }).count()).toBe(0);
    await designer.context.close();
  });

  it("Roles: lists each role's access to each table in one line, admins as every record", async () => {
    await openSection(page, 'Roles');
    const viewer = page.getByRole('list', { name: 'Data access of viewer' });
    await expect.poll(() => viewer.getByRole('listitem').allTextContents()).toEqual(['Orders: read own, create all, update none, delete none; hidden: amount']);
    await expect.poll(() => page.getByRole('list', { name: 'Data access of designer' }).getByRole('listitem').allTextContents()).toEqual(['Orders: no access']);
    await page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'admin' }) }).getByText('Every record of every table (admin)').waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-roles-data-access');
    await viewer.getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('tab', { name: 'Access', selected: true }).waitFor();
  });

  it('Roles: granting a feature says beside its checkbox what it granted the role and what it left narrower, and revoking it that the data access stays', async () => {
    await openSection(page, 'Roles');
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Order entry' }) });
    const status = row.getByRole('status');
    const designerSees = page.getByRole('checkbox', { name: 'designer sees Order entry' });
    await designerSees.check();
    await status.getByText('Granted designer: read and create on Orders.', { exact: true }).waitFor();
    expect(await description(designerSees)).toBe('Granted designer: read and create on Orders.');
    const { table } = await gqlData(owner, 'query($id: ID!) { table(_id: $id) { access { roleName read { level } create { level } update { level } delete { level } } } }', { id: ordersId });
    expect(table.access.find((entry: { roleName: string }) => entry.roleName === 'designer')).toEqual({
      roleName: 'designer',
      read: { level: 'ALL' },
      create: { level: 'ALL' },
      update: { level: 'NONE' },
      delete: { level: 'NONE' },
    });
    // The section's data access follows without a reload.
    await page.getByRole('list', { name: 'Data access of designer' }).getByText('Orders: read all, create all, update none, delete none').waitFor();

    // The viewer reads only its own orders: the grant leaves that as it is, and says so.
    const viewerBefore = await viewerRules();
    const viewerSees = page.getByRole('checkbox', { name: 'viewer sees Order entry' });
    await viewerSees.check();
    await status.getByText('viewer sees Order entry. Left narrower: read (own records) on Orders.', { exact: true }).waitFor();
    expect(await description(viewerSees)).toBe('viewer sees Order entry. Left narrower: read (own records) on Orders.');
    expect(await description(designerSees)).toBe('');
    expect(await viewerRules()).toEqual(viewerBefore);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-roles-grant');

    await designerSees.uncheck();
    await status.getByText('designer no longer sees Order entry; its data access stays as it was.', { exact: true }).waitFor();
    await page.getByRole('list', { name: 'Data access of designer' }).getByText('Orders: read all, create all, update none, delete none').waitFor();
  });

  it('Roles: each permission says what it allows, beside its checkbox and in a list for those who only read the roles', async () => {
    expect(Object.keys(PERMISSION_MEANINGS)).toEqual([...PERMISSIONS]);
    const form = page.getByRole('form', { name: 'Create a role' });
    for (const permission of PERMISSIONS) {
      const allows = PERMISSION_MEANINGS[permission];
      expect(allows.length, permission).toBeLessThanOrEqual(80);
      expect(await description(form.getByRole('checkbox', { name: permission, exact: true })), permission).toBe(allows);
    }
    const glossary = page.getByRole('group').filter({ has: page.getByText('What each permission allows', { exact: true }) });
    await page.getByText('What each permission allows', { exact: true }).click();
    // Open, it shows the last meaning: what is read below is what a reader sees.
    await glossary.getByRole('definition').last().waitFor();
    const terms = await glossary.getByRole('term').allTextContents();
    const definitions = await glossary.getByRole('definition').allTextContents();
    expect(terms.map((term, index) => ({ permission: term, allows: definitions[index] }))).toEqual(PERMISSIONS.map((permission) => ({ permission, allows: PERMISSION_MEANINGS[permission] })));
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-roles-permissions');

    // A designer, who cannot change roles, reads the same meanings.
    const designer = await signIn('dana@example.com', 'dana-password', '/#/roles', DESKTOP);
    await designer.page.getByText('What each permission allows', { exact: true }).click();
    await designer.page.getByRole('definition').filter({ hasText: PERMISSION_MEANINGS['config:read'] }).waitFor();
    expect(await designer.page.getByRole('form', { name: 'Create a role' }).count()).toBe(0);
    await designer.context.close();
  });

  it('Integrations: a key can act with a role, and a key without one is marked as reaching every record', async () => {
    await openSection(page, 'Integrations');
    for (const [name, role] of [
      ['Warehouse', 'viewer'],
      ['Backup', ''],
    ]) {
      await page.getByLabel(/^Name/).fill(name!);
      if (role) await page.getByLabel('Role (optional)').selectOption({ label: role });
      await page.getByRole('button', { name: 'Create API key' }).click();
      await page.getByRole('button', { name: 'I have copied it' }).click();
    }
    await expect(page.getByRole('row').filter({ hasText: 'Warehouse' }).getByRole('cell').nth(2).textContent()).resolves.toBe('Role viewer');
    await expect(page.getByRole('row').filter({ hasText: 'Backup' }).getByRole('cell').nth(2).textContent()).resolves.toBe('Full data access (every record of every table)');
    const { integrationKeys, roles } = await gqlData(owner, '{ integrationKeys { name roleId } roles { _id name } }');
    const viewerId = (roles as { _id: string; name: string }[]).find((role) => role.name === 'viewer')!._id;
    expect(integrationKeys).toEqual(expect.arrayContaining([{ name: 'Warehouse', roleId: viewerId }, { name: 'Backup', roleId: null }]));
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-integrations-roles');
  });

  it("application page: a viewer's feature lists only the viewer's own orders with the hidden amount empty, and can() leaves out the delete button", async () => {
    for (const [email, title] of [
      ['vic@example.com', 'Vic order'],
      ['wes@example.com', 'Wes order'],
    ]) {
      const viewer = graphqlClient(server.url, await login(server.url, email!, 'viewer-password'));
      await gqlData(viewer, 'mutation($title: String!) { createOrders(data: { title: $title, amount: 5 }) { _id } }', { title });
    }

    const vic = await signIn('vic@example.com', 'viewer-password', '/app/feature/my-orders', DESKTOP);
    const frame = vic.page.frameLocator('iframe[title="My orders"]');
    await frame.getByText('1 orders').waitFor();
    await expect.poll(() => frame.getByRole('row').filter({ hasText: 'Vic order' }).getByRole('cell').allTextContents()).toEqual(['Vic order', '', '']);
    await expect(frame.getByRole('cell', { name: 'Owner order' }).count()).resolves.toBe(0);
    await expect(frame.getByRole('cell', { name: 'Wes order' }).count()).resolves.toBe(0);
    await expect(frame.getByRole('button', { name: /^Delete/ }).count()).resolves.toBe(0);
    await frame.getByRole('button', { name: 'New order' }).waitFor();
    expect(await seriousAxeViolations(vic.page)).toEqual([]);
    await screenshot(vic.page, 'app-access-viewer');
    await vic.context.close();

    // The same feature for an admin: every order, its amount, and the delete buttons.
    const admin = await signIn(OWNER.email, OWNER.password, '/app/feature/my-orders', DESKTOP);
    const adminFrame = admin.page.frameLocator('iframe[title="My orders"]');
    await adminFrame.getByText('3 orders').waitFor();
    await expect.poll(() => adminFrame.getByRole('row').filter({ hasText: 'Vic order' }).getByRole('cell').allTextContents()).toEqual(['Vic order', '5', 'Delete Vic order']);
    await expect(adminFrame.getByRole('button', { name: /^Delete/ }).count()).resolves.toBe(3);
    await admin.context.close();
  });
});
