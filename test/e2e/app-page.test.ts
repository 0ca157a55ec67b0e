import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { featureAuthoringGuide } from '../../src/features/authoring-guide.js';
import { ALLOWED_FEATURE_MODULES } from '../../src/features/modules.js';
import { DESKTOP, PHONE, launchBrowser, screenshot, seriousAxeViolations } from '../helpers/browser.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The application page (/app) in headless Chromium: a user of a role opens the features their role
 * sees, data goes through the shell to /graphql, hooks' rejections reach the user, and a feature
 * cannot leave its frame (network, parent, storage, top navigation).
 */
let server: TestServer;
let browser: Browser;
let owner: ReturnType<typeof graphqlClient>;
/** Requests that reached the outside listener: a feature that escaped its frame would show here. */
const outside: string[] = [];
let outsideServer: Server;
let outsideUrl: string;

const ORDERS = `import { useState } from 'react';
import { useMutation, useQuery, useCurrentUser } from '@trellis/runtime';
import { Button, Card, Form, Heading, Input, Stack, Table, Text } from '@trellis/ui';

const LIST = \`query Orders { listOrders(sort: [{ field: title }], limit: 100) { items { _id title amount } total } }\`;
const CREATE = \`mutation CreateOrder($data: OrdersInput!) { createOrders(data: $data) { _id } }\`;

export default function OrdersPage() {
  const user = useCurrentUser();
  const { data, loading, error, refetch } = useQuery(LIST);
  const [create, creating] = useMutation(CREATE);
  const [message, setMessage] = useState('');
  async function save(values) {
    setMessage('');
    try {
      await create({ data: { title: values.title, amount: Number(values.amount) } });
      setMessage('Saved');
      await refetch();
    } catch (failure) {
      setMessage(failure.message);
    }
  }
  if (loading && !data) return <Text>Loading…</Text>;
  if (error) return <Text>{error.message}</Text>;
  return (
    <Card>
      <Stack>
        <Heading>Orders</Heading>
        <Text muted>Signed in as {user ? user.email : ''}</Text>
        <Table rows={data.listOrders.items} columns={[{ key: 'title', header: 'Title' }, { key: 'amount', header: 'Amount' }]} />
        <Text>{data.listOrders.total} orders</Text>
        <Form onSubmit={save}>
          <Stack direction="row">
            <Input label="Title" name="title" />
            <Input label="Amount" name="amount" type="number" />
            <Button type="submit" disabled={creating.loading}>Add order</Button>
          </Stack>
        </Form>
        {message ? <Text role="status">{message}</Text> : null}
      </Stack>
    </Card>
  );
}
`;

/** Tries every way out of the frame it can think of and prints what happened. */
const escapeCode = (url: string) => `import { useEffect, useState } from 'react';
import { graphql, navigate } from '@trellis/runtime';

async function attempt(name, run) {
  try {
    const result = await run();
    return name + ': allowed ' + String(result).slice(0, 60);
  } catch (error) {
    return name + ': blocked';
  }
}

export default function Escape() {
  const [lines, setLines] = useState([]);
  useEffect(() => {
    const g = globalThis;
    Promise.all([
      attempt('fetch', () => g['fe' + 'tch']('${url}/fetch').then((r) => r.status)),
      attempt('fetch-graphql', () => g['fe' + 'tch']('/graphql', { method: 'POST' }).then((r) => r.status)),
      attempt('xhr', () => new Promise((resolve, reject) => { const x = new g['XMLHttp' + 'Request'](); x.onload = () => resolve(x.status); x.onerror = () => reject(new Error('x')); x.open('GET', '${url}/xhr'); x.send(); })),
      attempt('beacon', () => { if (!g.navigator['send' + 'Beacon']('${url}/beacon', 'x')) throw new Error('refused'); return 'queued'; }),
      attempt('image', () => new Promise((resolve, reject) => { const i = new Image(); i.onload = () => resolve('loaded'); i.onerror = () => reject(new Error('x')); i.src = '${url}/image'; })),
      attempt('parent-document', () => g['par' + 'ent'].document.title),
      attempt('parent-storage', () => g['par' + 'ent'].localStorage.getItem('trellis.session')),
      attempt('storage', () => g['local' + 'Storage'].getItem('trellis.session')),
      attempt('cookie', () => { const c = g.document['coo' + 'kie']; if (c === undefined) throw new Error('none'); return c; }),
      attempt('top-navigation', () => { g['to' + 'p'].location.href = '${url}/top'; return 'navigated'; }),
      attempt('open', () => { const w = g['op' + 'en']('${url}/open'); if (!w) throw new Error('refused'); return 'opened'; }),
      attempt('builder-operation', () => graphql('query { us' + 'ers { email } }').then((d) => JSON.stringify(d))),
    ]).then(setLines);
  }, []);
  return <ul>{lines.map((line) => <li key={line}>{line}</li>)}</ul>;
}
`;

const THROWS = `export default function Broken() { throw new Error('Broken on purpose'); }`;

/** A feature that imports every export the authoring guide lists and renders each component. */
function everyExportCode(): string {
  const runtime = ALLOWED_FEATURE_MODULES.find((m) => m.name === '@trellis/runtime')!.exports!;
  const ui = ALLOWED_FEATURE_MODULES.find((m) => m.name === '@trellis/ui')!.exports!;
  return `import * as React from 'react';
import { format, addDays } from 'date-fns';
import { sortBy } from 'lodash-es';
import { ${runtime.join(', ')} } from '@trellis/runtime';
import { ${ui.join(', ')} } from '@trellis/ui';

export default function Everything() {
  const runtime = [${runtime.join(', ')}].every((f) => typeof f === 'function');
  const sorted = sortBy([3, 1, 2]).join(',');
  const day = format(addDays(new Date(2026, 0, 1), 1), 'yyyy-MM-dd');
  return (
    <Stack>
      <Heading>Everything</Heading>
      <Text>runtime {String(runtime)} sorted {sorted} day {day}</Text>
      <Card title="Card"><Badge>badge</Badge></Card>
      <Form onSubmit={() => {}}><Input label="Name" name="name" /><Select label="Kind" options={['a', 'b']} /><Button type="submit">Go</Button></Form>
      <Table rows={[{ _id: '1', a: 'row' }]} columns={[{ key: 'a', header: 'A' }]} />
      <Modal open title="Dialog"><Text>inside</Text></Modal>
    </Stack>
  );
}
`;
}

beforeAll(async () => {
  outsideServer = createServer((request, response) => {
    outside.push(request.url ?? '');
    response.end('ok');
  });
  await new Promise<void>((resolve) => outsideServer.listen(0, '127.0.0.1', resolve));
  outsideUrl = `http://127.0.0.1:${(outsideServer.address() as AddressInfo).port}`;
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  owner = graphqlClient(server.url, await login(server.url));
  const roles = (await gqlData(owner, '{ roles { _id name } }')).roles as { _id: string; name: string }[];
  const roleId = (name: string) => roles.find((role) => role.name === name)!._id;
  await gqlData(owner, 'mutation { createUser(email: "dana@example.com", password: "dana-password", role: "designer") { _id } }');
  await gqlData(owner, 'mutation { createUser(email: "vic@example.com", password: "vic-password", role: "viewer") { _id } }');
  const table = await gqlData(owner, 'mutation { createTable(name: "Orders", fields: [{ name: "title", type: "text", required: true }, { name: "amount", type: "number" }]) { _id } }');
  await gqlData(owner, 'mutation($t: ID!, $c: String!) { createHook(name: "no-negative", type: "beforeSave", tableId: $t, content: $c) { _id } }', {
    t: table.createTable._id,
    c: "async function (instance) { if (instance.amount < 0) throw new Error('Amount must not be negative'); return instance; }",
  });
  await gqlData(owner, 'mutation { createOrders(data: { title: "First order", amount: 10 }) { _id } }');
  const features: [string, string, string][] = [
    ['orders', 'Orders', ORDERS],
    ['escape', 'Escape', escapeCode(outsideUrl)],
    ['broken', 'Broken', THROWS],
    ['everything', 'Everything', everyExportCode()],
    ['guide-example', 'Guide example', featureAuthoringGuide({ colors: {}, shell: {} }).example.replaceAll('Tasks', 'Orders').replaceAll('done', 'amount').replace('task.amount ? \'Done\' : \'Open\'', 'String(task.amount)')],
  ];
  for (const [id, name, code] of features) {
    await gqlData(owner, 'mutation($id: ID!, $name: String!, $code: String!) { createFeature(_id: $id, name: $name, customCode: $code, status: "published") { _id } }', { id, name, code });
    await gqlData(owner, 'mutation($id: ID!, $roles: [ID!]!) { grantFeatureAccess(featureId: $id, roleIds: $roles) }', { id, roles: [roleId('designer')] });
  }
  await gqlData(owner, 'mutation { createFeature(_id: "secret", name: "Secret", customCode: "export default function S() { return null }", status: "published") { _id } }');
  await gqlData(owner, 'mutation { upsertMenu(name: "Main", entries: [{ label: "Orders", path: "/feature/orders" }, { label: "Escape", path: "/feature/escape" }, { label: "Broken", path: "/feature/broken" }, { label: "Secret", path: "/feature/secret" }]) { created } }');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await new Promise((resolve) => outsideServer?.close(resolve));
});

async function signedIn(email: string, password: string, path = '/app', viewport: { width: number; height: number } = DESKTOP): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(`${server.url}${path}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // The shell's navigation is there at once and busy until the menus arrive (behind the Menu button at a phone's width).
  await page.locator('nav[aria-label="Application"]:not([aria-busy])').waitFor({ state: 'attached' });
  return { context, page };
}

describe('the application page', () => {
  it('shows a designer the menu of the features their role sees and runs a feature that lists and creates records', async () => {
    const { context, page } = await signedIn('dana@example.com', 'dana-password');
    const nav = page.getByRole('navigation', { name: 'Application' });
    await expect.poll(() => nav.getByRole('link').allTextContents()).toEqual(['Orders', 'Escape', 'Broken']);
    await nav.getByRole('link', { name: 'Orders' }).click();
    expect(new URL(page.url()).pathname).toBe('/app/feature/orders');
    const frame = page.frameLocator('iframe[title="Orders"]');
    await frame.getByRole('cell', { name: 'First order' }).waitFor();
    await frame.getByText('Signed in as dana@example.com').waitFor();
    await screenshot(page, 'app-orders-desktop');
    expect(await seriousAxeViolations(page)).toEqual([]);

    await frame.getByLabel('Title').fill('Second order');
    await frame.getByLabel('Amount').fill('25');
    await frame.getByRole('button', { name: 'Add order' }).click();
    await frame.getByRole('cell', { name: 'Second order' }).waitFor();
    await frame.getByText('2 orders').waitFor();

    await frame.getByLabel('Title').fill('Refund');
    await frame.getByLabel('Amount').fill('-5');
    await frame.getByRole('button', { name: 'Add order' }).click();
    await frame.getByRole('status').filter({ hasText: 'Amount must not be negative' }).waitFor();
    const stored = await gqlData(owner, '{ listOrders { total items { title } } }');
    expect(stored.listOrders.total).toBe(2);
    expect(stored.listOrders.items.map((item: { title: string }) => item.title).sort()).toEqual(['First order', 'Second order']);
    await context.close();
  });

  it('refuses a feature the role does not see, on the server and in the page', async () => {
    const { context, page } = await signedIn('vic@example.com', 'vic-password', '/app/feature/orders');
    await expect(page.getByRole('navigation', { name: 'Application' }).getByRole('link').count()).resolves.toBe(0);
    await page.getByRole('heading', { name: 'You do not have access to this page' }).waitFor();
    expect(await page.locator('iframe').count()).toBe(0);
    const viewer = graphqlClient(server.url, await login(server.url, 'vic@example.com', 'vic-password'));
    const refused = await viewer('{ appFeature(_id: "orders") { script } }');
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(refused.body.data).toEqual({ appFeature: null });
    // A page that does not exist answers the same, and neither answer names a feature the role does not see.
    const unknown = await viewer('{ appFeature(_id: "ordrs") { script } }');
    expect(unknown.body.errors[0]).toMatchObject({ message: "Your role 'viewer' sees no page 'ordrs'", extensions: { code: 'FORBIDDEN' } });
    expect(refused.body.errors[0].message).toBe("Your role 'viewer' sees no page 'orders'");
    const designer = graphqlClient(server.url, await login(server.url, 'dana@example.com', 'dana-password'));
    const secret = await designer('{ appFeature(_id: "secret") { script } }');
    expect(secret.body.errors[0].extensions.code).toBe('FORBIDDEN');
    await context.close();
  });

  it('keeps a feature inside its frame: no network, no parent, no storage, no top navigation, no builder operations', async () => {
    const { context, page } = await signedIn('dana@example.com', 'dana-password', '/app/feature/escape');
    const frame = page.frameLocator('iframe[title="Escape"]');
    await frame.getByText('builder-operation:').waitFor();
    const lines = await frame.getByRole('listitem').allTextContents();
    expect(lines).toEqual([
      'fetch: blocked',
      'fetch-graphql: blocked',
      'xhr: blocked',
      // sendBeacon only queues: the browser then drops the request under connect-src 'none' (nothing reaches the listener below).
      'beacon: allowed queued',
      'image: blocked',
      'parent-document: blocked',
      'parent-storage: blocked',
      'storage: blocked',
      'cookie: blocked',
      'top-navigation: blocked',
      'open: blocked',
      'builder-operation: blocked',
    ]);
    expect(new URL(page.url()).pathname).toBe('/app/feature/escape');
    // Give anything queued (the beacon) time to be sent, had the policy let it.
    await page.waitForTimeout(500);
    expect(outside).toEqual([]);
    await context.close();
  });

  it('refuses builder operations relayed for a feature on the server, whatever the page sends', async () => {
    const token = await login(server.url, 'dana@example.com', 'dana-password');
    const headers = { authorization: `Bearer ${token}`, 'x-trellis-feature': 'orders' };
    const builder = await postJson(`${server.url}/graphql`, { query: 'fragment F on Query { users { email } } query { ...F }' }, headers);
    expect(builder.status).toBe(403);
    expect(builder.body.errors[0].message).toBe('"users" is a builder operation: a feature reaches only the application\'s generated operations');
    const generated = await postJson(`${server.url}/graphql`, { query: '{ listOrders { total } }' }, headers);
    expect(generated.status).toBe(200);
  });

  it('shows an error panel in the frame of a feature that throws, and the shell keeps working', async () => {
    const { context, page } = await signedIn('dana@example.com', 'dana-password', '/app/feature/broken');
    const frame = page.frameLocator('iframe[title="Broken"]');
    await frame.getByRole('alert').filter({ hasText: 'Broken on purpose' }).waitFor();
    await page.getByRole('navigation', { name: 'Application' }).getByRole('link', { name: 'Orders' }).click();
    await page.frameLocator('iframe[title="Orders"]').getByRole('cell', { name: 'First order' }).waitFor();
    await context.close();
  });

  it('renders a feature that imports every export the guide lists, and the guide\'s own example', async () => {
    const { context, page } = await signedIn('dana@example.com', 'dana-password', '/app/feature/everything');
    const frame = page.frameLocator('iframe[title="Everything"]');
    await frame.getByText('runtime true sorted 1,2,3 day 2026-01-02').waitFor();
    await frame.getByRole('dialog', { name: 'Dialog' }).waitFor();
    await frame.getByLabel('Kind').waitFor();
    await page.goto(`${server.url}/app/feature/guide-example`);
    await page.frameLocator('iframe[title="Guide example"]').getByRole('cell', { name: 'First order' }).waitFor();
    await context.close();
  });

  it('works at a phone\'s width, and sends the user back to sign in when the session ends', async () => {
    const { context, page } = await signedIn('dana@example.com', 'dana-password', '/app/feature/orders', PHONE);
    await page.frameLocator('iframe[title="Orders"]').getByRole('cell', { name: 'First order' }).waitFor();
    await screenshot(page, 'app-orders-phone');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.evaluate(() => localStorage.setItem('trellis.session', JSON.stringify({ ...JSON.parse(localStorage.getItem('trellis.session')!), token: 'ended' })));
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation', { name: 'Application' }).getByRole('link', { name: 'Escape' }).click();
    await page.getByText('Your session has ended. Sign in again.').waitFor();
    await context.close();
  });
});
