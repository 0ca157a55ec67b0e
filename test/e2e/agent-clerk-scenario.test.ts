import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableExample } from '../../src/features/authoring-guide.js';
import { FEATURE_HEADER } from '../../src/graphql/route.js';
import { TABLE_ACCESS_FIELDS } from '../../src/web/shared/frame-protocol.js';
import { connectMcp, firstText, structuredData } from '../helpers/mcp.js';
import { GRAPHQL_ACCEPT, gqlData, graphqlClient, login, postJson, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 19's scenario, the agent's part of it over MCP alone: an agent creates a table, a page, a
 * menu entry, and grants the page to `clerk`; the clerk then uses it at once, signed in, through
 * the GraphQL the application page uses, with exactly what the page needs (least privilege).
 */
const ORDER_FIELDS = [
  { name: 'customer', type: 'text', required: true },
  { name: 'amount', type: 'number', required: false },
  { name: 'paid', type: 'boolean', required: false },
];
/** The page the authoring guide writes for a table: it lists Orders and adds one. */
const ORDER_PAGE = tableExample({ name: 'Orders', fields: ORDER_FIELDS, operations: { list: 'listOrders', create: 'createOrders', input: 'OrdersInput' } });
/** The page's own GraphQL documents, as the frame sends them. */
const PAGE_LIST = /const LIST = `([^`]+)`;/.exec(ORDER_PAGE)![1]!;
const PAGE_CREATE = /const CREATE = `([^`]+)`;/.exec(ORDER_PAGE)![1]!;
/** What the application page asks when it opens (src/web/app/main.ts). */
const APP_PAGE = `query AppPage { appPage { name menus { _id name entries { label featureId } } features { _id name description } user { email roleName isAdmin } } me { ${TABLE_ACCESS_FIELDS} } }`;

let server: TestServer;
let agent: Client;
let owner: ReturnType<typeof graphqlClient>;
let clerk: ReturnType<typeof graphqlClient>;
let clerkToken: string;
let clerkRoleId: string;

async function call(name: string, args: Record<string, unknown>) {
  const result = await agent.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${firstText(result)}`).toBeFalsy();
  return structuredData(result);
}

/** A call of the page's frame, as the application page relays it: the clerk's session, marked as the feature's. */
function fromPage(featureId: string, query: string, variables: Record<string, unknown> = {}) {
  return postJson(`${server.url}/graphql`, { query, variables }, { authorization: `Bearer ${clerkToken}`, accept: GRAPHQL_ACCEPT, [FEATURE_HEADER]: featureId });
}

/** The clerk's effective rules on Orders, as the application page reads them (`me { tableAccess }`). */
function ordersAccess(page: { me: { tableAccess: Array<{ table: string }> } }) {
  return page.me.tableAccess.find((access) => access.table === 'Orders');
}

beforeAll(async () => {
  server = await startTestServer();
  owner = graphqlClient(server.url, await login(server.url));
  clerkRoleId = (await gqlData(owner, 'mutation { createRole(name: "clerk") { _id } }')).createRole._id;
  await gqlData(owner, 'mutation { createUser(email: "clerk@example.com", password: "clerk-pass-1", role: "clerk") { _id } }');
  clerkToken = await login(server.url, 'clerk@example.com', 'clerk-pass-1');
  clerk = graphqlClient(server.url, clerkToken);
  // The admin's key for the agent: what the scenario needs and no more (no hooks, env or delete).
  const { createMcpApiKey } = await gqlData(owner, 'mutation { createMcpApiKey(name: "agent", scopes: ["config:read", "tables:write", "features:write", "menus:write", "roles:write"], expiresInDays: 1) { apiKey } }');
  agent = await connectMcp(server, createMcpApiKey.apiKey);
});

afterAll(async () => {
  await agent?.close();
  await server?.close();
});

describe('an agent builds a page for clerks over MCP alone', () => {
  let featureId: string;

  it('creates the table without access: the clerk may not read it yet', async () => {
    const created = await call('create_table', { name: 'Orders', fields: ORDER_FIELDS });
    expect(created.entity.name).toBe('Orders');
    const details = await call('get_entity_details', { _id: 'Orders' });
    expect(details.entity.access.find((access: { roleName: string }) => access.roleName === 'clerk')).toMatchObject({
      read: { level: 'NONE' }, create: { level: 'NONE' }, update: { level: 'NONE' }, delete: { level: 'NONE' },
    });
    const refused = await clerk('{ listOrders { items { _id } total } }');
    expect(refused.body.errors?.[0]?.extensions?.code, JSON.stringify(refused.body)).toBe('FORBIDDEN');
    expect(refused.body.errors?.[0]?.message).toContain("Role 'clerk' may not read Orders");
    const page = await gqlData(clerk, APP_PAGE);
    expect(ordersAccess(page)).toMatchObject({ read: 'NONE', create: 'NONE', update: 'NONE', delete: 'NONE' });
  });

  it('writes the page the guide shows (no errors), publishes it and puts it in a menu', async () => {
    const validated = await call('validate_feature_code', { customCode: ORDER_PAGE });
    expect(validated).toMatchObject({ valid: true, errors: [] });
    const created = await call('create_feature', { name: 'Orders', customCode: ORDER_PAGE });
    featureId = created.feature._id;
    expect(created.warnings).toEqual([]);
    expect(created.feature).toMatchObject({ status: 'draft', publishedVersion: null });
    const published = await call('update_feature', { _id: featureId, status: 'published' });
    expect(published.feature).toMatchObject({ status: 'published', publishedVersion: published.feature.version });
    const menu = await call('upsert_menu', { name: 'Main', entries: [{ label: 'Orders', path: created.path }] });
    expect(menu.menu.entries).toEqual([expect.objectContaining({ label: 'Orders', path: `/feature/${featureId}` })]);
    // Nobody but admins sees it yet: not in the clerk's list, its page not runnable.
    expect((await gqlData(clerk, APP_PAGE)).appPage.features).toEqual([]);
  });

  it('grants it to clerk: read and create on Orders, update and delete left NONE, and the audit says so', async () => {
    const answer = await call('grant_feature_access', { featureId, roleIds: ['clerk'] });
    expect(answer.roleIds).toContain(clerkRoleId);
    const granted = answer.dataAccess.granted.map((rule: { role: string; table: string; action: string; level: string }) => `${rule.role} ${rule.action} ${rule.table} ${rule.level}`);
    expect(granted.sort()).toEqual(['clerk create Orders ALL', 'clerk read Orders ALL']);
    expect(answer.dataAccess.leftNarrower).toEqual([]);
    const details = await call('get_entity_details', { _id: 'Orders' });
    expect(details.entity.access.find((access: { roleName: string }) => access.roleName === 'clerk')).toMatchObject({
      read: { level: 'ALL' }, create: { level: 'ALL' }, update: { level: 'NONE' }, delete: { level: 'NONE' }, hiddenFields: [], readOnlyFields: [],
    });
    // The validator has nothing left to warn about for the roles that see it.
    expect(await call('validate_feature_code', { customCode: ORDER_PAGE, featureId })).toMatchObject({ valid: true, errors: [], warnings: [] });

    const mcpLog = await gqlData(owner, '{ mcpAuditLogs(tool: "grant_feature_access", limit: 5) { items { tool outcome keyName arguments } } }');
    expect(mcpLog.mcpAuditLogs.items).toEqual([{ tool: 'grant_feature_access', outcome: 'ok', keyName: 'agent', arguments: { featureId, roleIds: ['clerk'] } }]);
    const events = await server.server.services.ctx.db
      .selectFrom('audit_events')
      .select(['action', 'resource_id', 'details'])
      .where('action', 'in', ['feature.access.grant', 'table.access.set'])
      .orderBy('id')
      .execute();
    expect(events.map((event) => event.action).sort()).toEqual(['feature.access.grant', 'table.access.set']);
    expect(events.find((event) => event.action === 'feature.access.grant')).toMatchObject({ resource_id: featureId, details: { roleIds: [clerkRoleId] } });
    expect(events.find((event) => event.action === 'table.access.set')!.details).toMatchObject({
      name: 'Orders', role: 'clerk', read: 'ALL', create: 'ALL', update: 'NONE', delete: 'NONE', reason: 'feature grant',
    });
  });

  it('works for the clerk at once: the page in the menu, its list and its add, and no update or delete', async () => {
    const page = await gqlData(clerk, APP_PAGE);
    expect(page.appPage.user).toEqual({ email: 'clerk@example.com', roleName: 'clerk', isAdmin: false });
    expect(page.appPage.menus.flatMap((menu: { entries: unknown[] }) => menu.entries)).toEqual([{ label: 'Orders', featureId }]);
    expect(page.appPage.features.map((feature: { _id: string }) => feature._id)).toEqual([featureId]);
    expect(ordersAccess(page)).toMatchObject({ read: 'ALL', create: 'ALL', update: 'NONE', delete: 'NONE' });
    const opened = await gqlData(clerk, 'query($id: ID!) { appFeature(_id: $id) { _id name script } }', { id: featureId });
    expect(opened.appFeature).toMatchObject({ _id: featureId, name: 'Orders' });
    expect(opened.appFeature.script).toContain('listOrders');

    // The page's own documents, relayed from its frame: the list, then the form's add, then the list again.
    const empty = await fromPage(featureId, PAGE_LIST);
    expect(empty.body, JSON.stringify(empty.body)).toEqual({ data: { listOrders: { items: [], total: 0 } } });
    const added = await fromPage(featureId, PAGE_CREATE, { data: { customer: 'Ada', amount: 12.5, paid: false } });
    expect(added.body.errors, JSON.stringify(added.body)).toBeUndefined();
    const orderId = added.body.data.createOrders._id;
    const listed = await fromPage(featureId, PAGE_LIST);
    expect(listed.body.data.listOrders).toEqual({ total: 1, items: [{ _id: orderId, customer: 'Ada', amount: 12.5, paid: false }] });

    // Not granted, so refused: naming the table, the action and the role.
    const update = await fromPage(featureId, 'mutation($id: ID!) { updateOrders(Id: $id, data: { amount: 99 }) { _id } }', { id: orderId });
    expect(update.body.errors?.[0]?.extensions?.code, JSON.stringify(update.body)).toBe('FORBIDDEN');
    expect(update.body.errors[0].message).toContain("Role 'clerk' may not update Orders");
    const remove = await fromPage(featureId, 'mutation($id: ID!) { deleteOrders(Id: $id) }', { id: orderId });
    expect(remove.body.errors?.[0]?.extensions?.code, JSON.stringify(remove.body)).toBe('FORBIDDEN');
    expect(remove.body.errors[0].message).toContain("Role 'clerk' may not delete Orders");
    // The same outside the page: the session's own GraphQL has no more.
    expect((await clerk('mutation($id: ID!) { deleteOrders(Id: $id) }', { id: orderId })).body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const after = await gqlData(owner, '{ listOrders { items { _id amount _createdBy } total } }');
    expect(after.listOrders.total).toBe(1);
    expect(after.listOrders.items[0]).toMatchObject({ _id: orderId, amount: 12.5 });
  });
});
