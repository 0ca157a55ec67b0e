import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/access/permissions.js';
import { connectMcp, createUserKey, firstText, structuredData } from '../helpers/mcp.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * One entity, one name or the other: tools that call a table `_id` also take `tableId` (as
 * add_table_field and list_hooks call it), and the other way round; features and hooks likewise.
 * Both given with different values is refused, naming the argument meant.
 */
let server: TestServer;
let client: Client;
let tableId: string;

beforeAll(async () => {
  server = await startTestServer();
  const { apiKey } = await createUserKey(server, { email: 'owner@example.com', role: 'admin', scopes: [...SCOPES] });
  client = await connectMcp(server, apiKey);
  const created = await client.callTool({ name: 'create_table', arguments: { name: 'Orders', fields: [{ name: 'title', type: 'text' }] } });
  tableId = JSON.stringify(structuredData(created)).match(/"_id":"([^"]+)"/)![1]!;
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

describe('argument names across tools', () => {
  it('get_entity_details and update_table take tableId for _id; add_table_field takes _id for tableId', async () => {
    const details = await client.callTool({ name: 'get_entity_details', arguments: { tableId } });
    expect(details.isError, firstText(details)).toBeFalsy();
    expect(structuredData(details).entity).toMatchObject({ _id: tableId, name: 'Orders' });
    const updated = await client.callTool({ name: 'update_table', arguments: { tableId, description: 'What customers ordered' } });
    expect(updated.isError, firstText(updated)).toBeFalsy();
    const added = await client.callTool({ name: 'add_table_field', arguments: { _id: tableId, field: { name: 'amount', type: 'number' } } });
    expect(added.isError, firstText(added)).toBeFalsy();
    const after = structuredData(await client.callTool({ name: 'get_entity_details', arguments: { _id: tableId } })).entity;
    expect(after).toMatchObject({ description: 'What customers ordered' });
    expect((after.fields as { name: string }[]).map((field) => field.name)).toEqual(['title', 'amount']);
  });

  it('refuses both names with different values, and names the argument meant when it is missing', async () => {
    const both = await client.callTool({ name: 'get_entity_details', arguments: { _id: tableId, tableId: 'other' } });
    expect(both.isError).toBe(true);
    expect(firstText(both)).toContain('_id: give the value once, as _id (tableId is accepted as another name for it)');
    const same = await client.callTool({ name: 'get_entity_details', arguments: { _id: tableId, tableId } });
    expect(same.isError).toBeFalsy();
    const missing = await client.callTool({ name: 'get_entity_details', arguments: {} });
    expect(missing.isError).toBe(true);
    expect(firstText(missing)).toMatch(/Invalid arguments for get_entity_details: _id: [^"]* \(also accepted as tableId\)/);
  });

  it('features and hooks: featureId and hookId stand for _id', async () => {
    const feature = await client.callTool({ name: 'create_feature', arguments: { name: 'Notes', customCode: 'export default function Notes() { return null; }' } });
    const featureId = JSON.stringify(structuredData(feature)).match(/"_id":"([^"]+)"/)![1]!;
    const details = await client.callTool({ name: 'get_feature_details', arguments: { featureId } });
    expect(details.isError, firstText(details)).toBeFalsy();
    const hook = await client.callTool({ name: 'create_hook', arguments: { name: 'Ping', type: 'webHook', content: 'async function (body) { return { ok: true }; }' } });
    expect(hook.isError, firstText(hook)).toBeFalsy();
    const hookId = JSON.stringify(structuredData(hook)).match(/"_id":"([^"]+)"/)![1]!;
    const hookDetails = await client.callTool({ name: 'get_hook_details', arguments: { hookId } });
    expect(hookDetails.isError, firstText(hookDetails)).toBeFalsy();
  });
});
