import type { Browser, BrowserContext, FrameLocator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEVELS, reaches, refusal, rules, type Action, type Level, type Region, signInMatrixPeople, type Who } from '../helpers/access-matrix.js';
import { DESKTOP, launchBrowser, UI_WAIT_MS } from '../helpers/browser.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Data access by role (issue 19, D32) through the application page's bridge, in headless Chromium:
 * a clerk signed in on /app runs a feature whose code lists, gets, creates, updates and deletes
 * records with graphql() from '@trellis/runtime', and each answer the feature receives is checked
 * against the reference model that data-access.test.ts checks the GraphQL paths with. One page load:
 * the test sets the clerk role's rules between runs and clicks the feature's buttons.
 */

type Gql = ReturnType<typeof graphqlClient>;

interface Fixture {
  id: string;
  by: Who;
  region: Region;
}

/** What the feature shows after each run: `data` as graphql() resolved, or the first error's code and every message. */
interface Outcome {
  n: number;
  action: string;
  data?: Record<string, unknown>;
  error?: string;
  message?: string;
}

/** Runs one operation per button on the record ids, title and region typed into it, and shows the outcome as JSON. */
const BRIDGE = `import { useRef, useState } from 'react';
import { graphql } from '@trellis/runtime';
import { Button, Input, Stack } from '@trellis/ui';

const LIST = \`query BridgeList($ids: [ID!]) { listLedger(filter: { _id: { in: $ids } }, limit: 500) { total items { _id } } }\`;
const GET = \`query BridgeGet($id: ID!) { getLedger(Id: $id) { _id } }\`;
const CREATE = \`mutation BridgeCreate($data: LedgerInput!) { createLedger(data: $data) { _id title region _createdBy } }\`;
const UPDATE = \`mutation BridgeUpdate($id: ID!, $data: LedgerInput) { updateLedger(Id: $id, data: $data) { _id title } }\`;
const DELETE = \`mutation BridgeDelete($id: ID!) { deleteLedger(Id: $id) }\`;

export default function LedgerBridge() {
  const [ids, setIds] = useState('');
  const [title, setTitle] = useState('');
  const [region, setRegion] = useState('');
  const [outcome, setOutcome] = useState({ n: 0 });
  const runs = useRef(0);
  // Each call names its document as a const: that is how a grant sees what the feature needs.
  async function run(action, call) {
    const n = ++runs.current;
    try {
      setOutcome({ n, action, data: await call() });
    } catch (failure) {
      const first = failure.errors ? failure.errors[0] : null;
      setOutcome({ n, action, error: first && first.extensions ? first.extensions.code : 'NO_CODE', message: failure.message });
    }
  }
  return (
    <Stack>
      <Input label="Record ids" value={ids} onChange={(event) => setIds(event.target.value)} />
      <Input label="Title" value={title} onChange={(event) => setTitle(event.target.value)} />
      <Input label="Region" value={region} onChange={(event) => setRegion(event.target.value)} />
      <Stack direction="row">
        <Button onClick={() => run('list', () => graphql(LIST, { ids: ids.split(',') }))}>List</Button>
        <Button onClick={() => run('get', () => graphql(GET, { id: ids }))}>Get</Button>
        <Button onClick={() => run('create', () => graphql(CREATE, { data: { title, region } }))}>Create</Button>
        <Button onClick={() => run('update', () => graphql(UPDATE, { id: ids, data: { title } }))}>Update</Button>
        <Button onClick={() => run('delete', () => graphql(DELETE, { id: ids }))}>Delete</Button>
      </Stack>
      <pre role="status" data-run={outcome.n}>{JSON.stringify(outcome)}</pre>
    </Stack>
  );
}
`;

const SET_ACCESS = 'mutation($t: ID!, $r: ID!, $a: TableAccessInput!) { setTableAccess(tableId: $t, roleId: $r, access: $a) { roleId } }';
/** The signed-in user of the page, whom OWN and `$user` mean. */
const USER: Who = 'clerk1';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let frame: FrameLocator;
let admin: Gql;
let tableId: string;
let userIds: Record<Who, string>;
let sessions: Record<Who, Gql>;
let fixtures: Fixture[] = [];
/** What granting the feature to the clerk role answered. */
let grant: { granted: unknown[]; leftNarrower: unknown[] };
let counter = 0;
let runs = 0;

async function setClerkAccess(levels: Partial<Record<Action, Level>>) {
  await gqlData(admin, SET_ACCESS, { t: tableId, r: 'clerk', a: rules(levels) });
}

/** Six records: each creator × each region, made while the clerks may do everything. */
async function makeFixtures(): Promise<Fixture[]> {
  await setClerkAccess({});
  const made: Fixture[] = [];
  for (const by of ['clerk1', 'clerk2', 'owner'] as const) {
    for (const region of ['EU', 'US'] as const) {
      const data = await gqlData(sessions[by], 'mutation($d: LedgerInput!) { createLedger(data: $d) { _id } }', { d: { title: `r${++counter}`, region } });
      made.push({ id: data.createLedger._id, by, region });
    }
  }
  return made;
}

/** Types `fields` into the feature, clicks `button` and answers the outcome the feature shows for that run. */
async function runInFeature(button: 'List' | 'Get' | 'Create' | 'Update' | 'Delete', fields: { 'Record ids'?: string; Title?: string; Region?: string }): Promise<Outcome> {
  for (const [label, value] of Object.entries(fields)) await frame.getByLabel(label, { exact: true }).fill(value);
  await frame.getByRole('button', { name: button, exact: true }).click();
  const text = await frame.locator(`[data-run="${++runs}"]`).textContent();
  return JSON.parse(text!) as Outcome;
}

function expectRefused(outcome: Outcome, code: string, fragment: string) {
  expect(outcome.data, JSON.stringify(outcome)).toBeUndefined();
  expect(outcome.error, JSON.stringify(outcome)).toBe(code);
  expect(outcome.message).toContain(fragment);
}

async function stored(id: string): Promise<{ _id: string; title: string } | null> {
  return (await gqlData(admin, 'query($id: ID!) { getLedger(Id: $id) { _id title } }', { id })).getLedger;
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  admin = graphqlClient(server.url, await login(server.url));
  ({ userIds, sessions } = await signInMatrixPeople(server.url, admin));
  const table = await gqlData(admin, 'mutation { createTable(name: "Ledger", fields: [{ name: "title", type: "text", required: true }, { name: "region", type: "text" }]) { _id } }');
  tableId = table.createTable._id;
  await gqlData(admin, 'mutation($code: String!) { createFeature(_id: "ledger-bridge", name: "Ledger bridge", customCode: $code, status: "published") { _id } }', { code: BRIDGE });
  const granted = await gqlData(admin, 'mutation { grantFeature(featureId: "ledger-bridge", roleIds: ["clerk"]) { granted { role table action level } leftNarrower { action } } }');
  grant = granted.grantFeature;
  fixtures = await makeFixtures();

  context = await browser.newContext({ viewport: DESKTOP });
  context.setDefaultTimeout(UI_WAIT_MS);
  const page = await context.newPage();
  await page.goto(`${server.url}/app/feature/ledger-bridge`);
  await page.getByLabel('Email').fill(`${USER}@example.com`);
  await page.getByLabel('Password').fill('clerk-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('nav[aria-label="Application"]:not([aria-busy])').waitFor();
  frame = page.frameLocator('iframe[title="Ledger bridge"]');
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
});

describe('data access by role through the application page bridge', () => {
  it('gives the clerk role what the feature needs with the feature (grantFeature), and the feature runs for a clerk', async () => {
    expect(grant).toEqual({
      granted: (['read', 'create', 'update', 'delete'] as const).map((action) => ({ role: 'clerk', table: 'Ledger', action, level: 'ALL' })),
      leftNarrower: [],
    });
    const outcome = await runInFeature('List', { 'Record ids': fixtures.map((f) => f.id).join(',') });
    expect(outcome).toMatchObject({ action: 'list', data: { listLedger: { total: fixtures.length } } });
  });

  it.each(LEVELS)('read %s: the feature lists, totals and gets exactly the records inside the rule', async (level) => {
    await setClerkAccess({ read: level });
    const list = await runInFeature('List', { 'Record ids': fixtures.map((f) => f.id).join(',') });
    const expected = fixtures.filter((f) => level !== 'NONE' && reaches(level, f, USER)).map((f) => f.id);
    if (level === 'NONE') {
      expectRefused(list, 'FORBIDDEN', refusal('read', level, 'Ledger', 'clerk'));
    } else {
      const answer = list.data?.listLedger as { total: number; items: { _id: string }[] };
      expect(answer.items.map((item) => item._id).sort()).toEqual([...expected].sort());
      expect(answer.total).toBe(expected.length);
    }
    for (const fixture of fixtures) {
      const got = await runInFeature('Get', { 'Record ids': fixture.id });
      if (level === 'NONE') expectRefused(got, 'FORBIDDEN', refusal('read', level, 'Ledger', 'clerk'));
      else expect(got.data, `${fixture.by}/${fixture.region}`).toEqual({ getLedger: expected.includes(fixture.id) ? { _id: fixture.id } : null });
    }
  });

  it.each(LEVELS)('create %s: the feature writes only records that satisfy the rule, and nothing else', async (level) => {
    await setClerkAccess({ create: level });
    for (const region of ['EU', 'US'] as const) {
      const title = `new${++counter}`;
      const created = await runInFeature('Create', { Title: title, Region: region });
      if (level !== 'NONE' && reaches(level, { by: USER, region }, USER)) {
        expect(created.error, JSON.stringify(created)).toBeUndefined();
        expect(created.data?.createLedger).toMatchObject({ title, region, _createdBy: userIds[USER] });
      } else {
        expectRefused(created, 'FORBIDDEN', refusal('create', level, 'Ledger', 'clerk'));
        expect((await gqlData(admin, 'query($t: String!) { listLedger(filter: { title: { eq: $t } }) { total } }', { t: title })).listLedger.total).toBe(0);
      }
    }
  });

  it.each(LEVELS)('update %s: the feature changes only records inside the rule; the others stay as they were', async (level) => {
    await setClerkAccess({ update: level });
    for (const fixture of fixtures) {
      const title = `changed${++counter}`;
      const updated = await runInFeature('Update', { 'Record ids': fixture.id, Title: title });
      if (level !== 'NONE' && reaches(level, fixture, USER)) {
        expect(updated.data, JSON.stringify(updated)).toEqual({ updateLedger: { _id: fixture.id, title } });
        expect((await stored(fixture.id))?.title).toBe(title);
      } else {
        expectRefused(updated, 'FORBIDDEN', refusal('update', level, 'Ledger', 'clerk'));
        expect((await stored(fixture.id))?.title).not.toBe(title);
      }
    }
  });

  it.each(LEVELS)('delete %s: the feature deletes only records inside the rule', async (level) => {
    const fresh = await makeFixtures();
    await setClerkAccess({ delete: level });
    for (const fixture of fresh) {
      const deleted = await runInFeature('Delete', { 'Record ids': fixture.id });
      if (level !== 'NONE' && reaches(level, fixture, USER)) {
        expect(deleted.data, JSON.stringify(deleted)).toEqual({ deleteLedger: true });
        expect(await stored(fixture.id)).toBeNull();
      } else {
        expectRefused(deleted, 'FORBIDDEN', refusal('delete', level, 'Ledger', 'clerk'));
        expect(await stored(fixture.id)).toMatchObject({ _id: fixture.id });
      }
    }
  });

  it('answers NOT_FOUND, not FORBIDDEN, to an update or delete of a record outside read', async () => {
    await setClerkAccess({ read: 'OWN' });
    const others = fixtures.find((f) => f.by === 'clerk2')!;
    expectRefused(await runInFeature('Update', { 'Record ids': others.id, Title: 'x' }), 'NOT_FOUND', others.id);
    expectRefused(await runInFeature('Delete', { 'Record ids': others.id }), 'NOT_FOUND', others.id);
    expect(await stored(others.id)).toMatchObject({ _id: others.id });
  });
});
