import type { Browser, Dialog, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, PHONE, screenshot, seriousAxeViolations, UI_WAIT_MS } from '../helpers/browser.js';
import { OWNER } from '../helpers/env.js';
import { connectMcp, createUserKey, structuredData } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';
import { openSection as openDesignerSection } from '../helpers/designer.js';

/**
 * A person building alone in the designer (issue 20, docs/scenarios.md 10), in headless Chromium: a table
 * of four fields where only one is required (the add form starts over after each field), a field
 * whose type was a mistake changed with the features that use it listed first, a field deleted
 * after a confirmation that names the records and features that lose it, and in the feature editor
 * a `<Text>` without its import stopped by the validator at its line. One server, one browser, in order.
 */
let server: TestServer;
let browser: Browser;
let owner: ReturnType<typeof graphqlClient>;
let page: Page;

const ORDER_LIST = `import { useQuery } from '@trellis/runtime';
import { Card, Table } from '@trellis/ui';

const LIST = \`query { listOrders { items { _id title amount note } } }\`;

export default function OrderList() {
  const { data } = useQuery(LIST);
  return (
    <Card title="Orders">
      <Table rows={data?.listOrders.items ?? []} columns={[{ key: 'title', header: 'Title' }, { key: 'note', header: 'Note' }]} />
    </Card>
  );
}
`;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  owner = graphqlClient(server.url, await login(server.url));
  page = await openDesigner(DESKTOP);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function openDesigner(viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const opened = await context.newPage();
  opened.setDefaultTimeout(UI_WAIT_MS);
  await opened.goto(`${server.url}/`);
  await opened.getByLabel('Email').fill(OWNER.email);
  await opened.getByLabel('Password').fill(OWNER.password);
  await opened.getByRole('button', { name: 'Sign in' }).click();
  await opened.getByRole('navigation', { name: 'Designer' }).waitFor();
  return opened;
}

const openSection = (target: Page, name: string) => openDesignerSection(target, name);

async function orders() {
  const { tables } = await gqlData(owner, '{ tables { _id name fields { name type required unique } } }');
  return tables.find((table: { name: string }) => table.name === 'Orders');
}

describe('tables in the designer, for a person building alone', () => {
  it('creates a table of four fields, only one required: the add form starts over after each field', async () => {
    await openSection(page, 'Tables');
    await page.getByRole('button', { name: 'New table' }).click();
    await page.getByLabel('Name of the new table').fill('Orders');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('heading', { name: 'Orders', level: 2 }).waitFor();
    const form = page.getByRole('form', { name: 'Add a field' });
    const required = form.getByRole('checkbox', { name: 'Required' });
    const unique = form.getByRole('checkbox', { name: 'Unique' });
    // amount as text is the mistake the next test corrects.
    for (const [name, type, isRequired] of [
      ['title', 'text', true],
      ['amount', 'text', false],
      ['due', 'date', false],
      ['note', 'text', false],
    ] as const) {
      expect(await required.isChecked()).toBe(false);
      expect(await unique.isChecked()).toBe(false);
      await form.getByLabel('Field name').fill(name);
      await form.getByLabel('Field type').selectOption(type);
      if (isRequired) await required.check();
      await form.getByRole('button', { name: 'Add field' }).click();
      await page.getByRole('region', { name: 'Fields' }).getByRole('cell', { name, exact: true }).waitFor();
      await expect(form.getByLabel('Field name').inputValue()).resolves.toBe('');
      await expect(form.getByLabel('Field type').inputValue()).resolves.toBe('text');
    }
    expect(await required.isChecked()).toBe(false);
    expect((await orders()).fields).toEqual([
      { name: 'title', type: 'text', required: true, unique: false },
      { name: 'amount', type: 'text', required: false, unique: false },
      { name: 'due', type: 'date', required: false, unique: false },
      { name: 'note', type: 'text', required: false, unique: false },
    ]);

    // Two orders, the first through the record form, and a page that lists them.
    await page.getByRole('button', { name: 'New record' }).click();
    const record = page.getByRole('form', { name: 'New record' });
    await record.getByLabel('title').fill('Desk');
    await record.getByLabel('amount').fill('120.5');
    await record.getByLabel('note').fill('Oak');
    await record.getByRole('button', { name: 'Create record' }).click();
    await page.getByRole('table', { name: 'Records of Orders' }).getByRole('cell', { name: 'Desk' }).waitFor();
    await gqlData(owner, 'mutation { createOrders(data: { title: "Chair", amount: "40", note: "Beech" }) { _id } }');
    await gqlData(owner, 'mutation($c: String!) { createFeature(_id: "order-list", name: "Order list", customCode: $c, status: "published") { _id } }', { c: ORDER_LIST });
  });

  it("changes a field's type after listing the feature that uses it, converting the stored values", async () => {
    await page.reload();
    await page.getByRole('heading', { name: 'Orders', level: 2 }).waitFor();
    // A change the stored values refuse says so on the form and changes nothing.
    await page.getByRole('button', { name: 'Edit field title' }).click();
    const titleEditor = page.getByRole('form', { name: 'Change field title' });
    await titleEditor.getByRole('combobox', { name: /^Type/ }).selectOption('number');
    await titleEditor.getByRole('button', { name: 'Save field' }).click();
    await titleEditor.getByRole('group', { name: 'Change title of Orders: text → number?' }).getByRole('button', { name: 'Save the change' }).click();
    await titleEditor.getByRole('alert').filter({ hasText: "type: 2 values of field 'title' cannot change from text to number, e.g. " }).waitFor();
    await titleEditor.getByRole('button', { name: 'Cancel' }).click();
    expect((await orders()).fields[0]).toEqual({ name: 'title', type: 'text', required: true, unique: false });

    await page.getByRole('button', { name: 'Edit field amount' }).click();
    const editor = page.getByRole('form', { name: 'Change field amount' });
    await editor.getByRole('combobox', { name: /^Type/ }).selectOption('number');
    await editor.getByRole('textbox', { name: /^Label/ }).fill('Amount (EUR)');
    await editor.getByRole('button', { name: 'Save field' }).click();
    const question = editor.getByRole('group', { name: 'Change amount of Orders: text → number?' });
    await question.getByRole('listitem').filter({ hasText: 'Feature Order list: selects amount (line 4)' }).waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-tables-change');
    await question.getByRole('button', { name: 'Save the change' }).click();
    await page.getByText('Field amount saved').waitFor();
    await page.getByRole('region', { name: 'Fields' }).getByRole('row', { name: /^amount Amount \(EUR\) number/ }).waitFor();
    const { listOrders } = await gqlData(owner, '{ listOrders(sort: [{ field: title }]) { items { title amount } } }');
    expect(listOrders.items).toEqual([
      { title: 'Chair', amount: 40 },
      { title: 'Desk', amount: 120.5 },
    ]);

    // Flags alone: nothing uses due, so it is saved without a question.
    await page.getByRole('button', { name: 'Edit field due' }).click();
    await page.getByRole('form', { name: 'Change field due' }).getByRole('checkbox', { name: 'Unique' }).check();
    await page.getByRole('form', { name: 'Change field due' }).getByRole('button', { name: 'Save field' }).click();
    await page.getByText('Field due saved').waitFor();
    expect((await orders()).fields.find((field: { name: string }) => field.name === 'due')).toEqual({ name: 'due', type: 'date', required: false, unique: true });
  });

  it('deletes a field after a confirmation that names the records and the features that lose it', async () => {
    await page.getByRole('button', { name: 'Delete field note' }).click();
    const question = page.getByRole('group', { name: 'Delete field note of Orders?' });
    await question.getByText('Its value in 2 records is lost; this cannot be undone.').waitFor();
    await question.getByRole('listitem').filter({ hasText: 'Feature Order list: selects note (line 4)' }).waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-tables-delete');
    await question.getByRole('button', { name: 'Yes, delete note' }).click();
    await page.getByText('Field note deleted').waitFor();
    await page.getByRole('region', { name: 'Fields' }).getByRole('cell', { name: 'note', exact: true }).waitFor({ state: 'detached' });
    expect((await orders()).fields.map((field: { name: string }) => field.name)).toEqual(['title', 'amount', 'due']);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-tables');
  });

  it('fits a phone: the fields, the change form and the confirmation of a deletion', async () => {
    const phone = await openDesigner(PHONE);
    await openSection(phone, 'Tables');
    await phone.getByRole('list', { name: 'Tables' }).getByRole('link', { name: /Orders/ }).click();
    await phone.getByRole('heading', { name: 'Orders', level: 2 }).waitFor();
    await phone.getByRole('button', { name: 'Edit field title' }).click();
    await phone.getByRole('form', { name: 'Change field title' }).waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    expect(await seriousAxeViolations(phone)).toEqual([]);
    await screenshot(phone, 'designer-tables-phone');
    await phone.getByRole('button', { name: 'Delete table' }).click();
    await phone.getByRole('group', { name: 'Delete table Orders?' }).getByText('Its 2 records and 3 fields are lost; this cannot be undone.').waitFor();
    await phone.getByRole('group', { name: 'Delete table Orders?' }).getByRole('listitem').filter({ hasText: 'Feature Order list: listOrders (line 4)' }).waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await screenshot(phone, 'designer-tables-delete-phone');
    await phone.getByRole('group', { name: 'Delete table Orders?' }).getByRole('button', { name: 'Cancel' }).click();
    await phone.getByRole('button', { name: 'Delete table' }).waitFor();
    await phone.context().close();
  });

  it("stops a <Text> used without its import at its line in the feature editor", async () => {
    await openSection(page, 'Features');
    await page.getByRole('button', { name: 'New feature' }).click();
    await page.getByLabel('Name of the new feature').fill('Greeting');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const editor = page.getByRole('textbox', { name: 'Feature code' });
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText("import { Card } from '@trellis/ui';\n\nexport default function Greeting() {\n  return <Card><Text>Hello</Text></Card>;\n}\n");
    const problems = page.getByRole('list', { name: 'Problems in the code' });
    await problems.getByText("Error (line 4): 'Text' is not declared: add it to the import from '@trellis/ui' at line 1").waitFor();
    await page.locator('.cm-lint-marker-error').first().waitFor();
    await screenshot(page, 'designer-tables-validator');
  });

  it("answers the same over MCP's validate_feature_code: an undeclared <Text>, and an Input handing its event to a state setter", async () => {
    const { apiKey } = await createUserKey(server, { email: OWNER.email, role: 'admin', scopes: ['config:read'] });
    const client = await connectMcp(server, apiKey);
    const code = [
      "import { useState } from 'react';",
      "import { Input } from '@trellis/ui';",
      '',
      'export default function NewOrder() {',
      "  const [title, setTitle] = useState('');",
      '  return (',
      '    <div>',
      '      <Input label="Title" value={title} onChange={setTitle} />',
      '      <Text>{title}</Text>',
      '    </div>',
      '  );',
      '}',
    ].join('\n');
    const result = structuredData(await client.callTool({ name: 'validate_feature_code', arguments: { customCode: code } }));
    expect(result.valid).toBe(false);
    expect(result.errors).toEqual([
      { code: 'EVENT_TO_SETTER', message: expect.stringContaining('write onChange={(event) => setTitle(event.target.value)}'), line: 8, column: 42 },
      { code: 'UNDECLARED_NAME', message: "'Text' is not declared: add it to the import from '@trellis/ui' at line 2", line: 9, column: 8 },
    ]);
    await client.close();
  });

  it('deletes a whole table after a confirmation naming it and the records lost: the list and builder GraphQL no longer have it', async () => {
    await gqlData(owner, 'mutation { createTable(name: "Drafts", fields: [{ name: "subject", type: "text" }, { name: "words", type: "number" }]) { _id } }');
    const subjects = ['Spring offer', 'Price list', 'Thank-you note'];
    for (const subject of subjects) await gqlData(owner, 'mutation($s: String!) { createDrafts(data: { subject: $s }) { _id } }', { s: subject });
    expect((await gqlData(owner, '{ listDrafts { total } }')).listDrafts.total).toBe(subjects.length);

    // The test before left code unsaved in the feature editor: leaving it asks first, and the person leaves.
    const leave = (dialog: Dialog) => void dialog.accept();
    page.once('dialog', leave);
    await openSection(page, 'Tables');
    page.off('dialog', leave);
    const list = page.getByRole('list', { name: 'Tables' });
    await list.getByRole('link', { name: /^Drafts/ }).click();
    await page.getByRole('heading', { name: 'Drafts', level: 2 }).waitFor();
    await page.getByRole('button', { name: 'Delete table' }).click();
    const question = page.getByRole('group', { name: 'Delete table Drafts?' });
    await question.getByText(`Its ${subjects.length} records and 2 fields are lost; this cannot be undone.`).waitFor();
    await question.getByText('No feature, hook or access rule uses it.').waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-tables-delete-table');
    await question.getByRole('button', { name: 'Yes, delete Drafts' }).click();

    await page.getByRole('status').getByText('Table Drafts deleted').waitFor();
    await list.getByRole('link', { name: /^Drafts/ }).waitFor({ state: 'detached' });
    await expect.poll(() => list.getByRole('link').allTextContents()).toEqual([expect.stringMatching(/^Orders/)]);
    await page.getByText('Choose a table, or create one.').waitFor();
    const { tables } = await gqlData(owner, '{ tables { name } }');
    expect(tables).toEqual([{ name: 'Orders' }]);
    // Its generated operations went with it.
    const gone = await owner('{ listDrafts { total } }');
    expect(gone.body.errors?.[0]?.message).toMatch(/listDrafts/);
  });
});
