import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { readLiveLock } from '../../src/platform/data-dir.js';
import { connectMcp, createUserKey, firstText, MCP_ACCEPT } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, startTestServer, usingPostgres, type TestServer } from '../helpers/server.js';

const NUL = 'before\u0000after';
const LONE = 'half \ud800 pair';
const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

describe('names and values that used to end in INTERNAL', () => {
  let server: TestServer;
  let gql: ReturnType<typeof graphqlClient>;
  let mcp: Client;
  let mcpKey: string;
  const db = () => server.server.services.ctx.db;
  const count = async (table: 'features' | 'hooks' | 'menus' | 'roles' | 'env_vars' | 'app_tables' | 'users') =>
    Number((await db().selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    server = await startTestServer({ TRELLIS_WEBHOOK_RATE_LIMIT: '1000' });
    gql = graphqlClient(server.url, await login(server.url));
    await gqlData(gql, 'mutation { createTable(name: "Note", fields: [{ name: "title", type: "text", required: true }, { name: "meta", type: "json" }]) { _id } }');
    mcpKey = (await createUserKey(server, { email: 'owner@example.com', role: 'admin', scopes: ['config:read', 'features:write', 'tables:write', 'menus:write', 'hooks:write', 'env:write'] })).apiKey;
    mcp = await connectMcp(server, mcpKey);
  });

  afterAll(async () => {
    await mcp?.close();
    await server?.close();
  });

  describe('reserved field names are refused up front, in every adapter', () => {
    it.each(['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'xmin', 'ctid', 'tableoid', 'XMAX', 'Constructor'])('refuses a field named %s', async (name) => {
      const tables = await count('app_tables');
      const created = await gql('mutation($f: [AppFieldInput!]) { createTable(name: "Reserved", fields: $f) { _id } }', { f: [{ name, type: 'text' }] });
      expect(created.body.errors[0].extensions.code).toBe('BAD_INPUT');
      expect(created.body.errors[0].message).toBe('fields.0.name: is a reserved name (a PostgreSQL system column or a property every JavaScript object has): choose another');
      const added = await gql('mutation($f: AppFieldInput!) { addTableField(tableId: "Note", field: $f) { _id } }', { f: { name, type: 'text' } });
      expect(added.body.errors[0].message).toMatch(/^field\.name: is a reserved name/);
      const viaMcp = await mcp.callTool({ name: 'add_table_field', arguments: { tableId: 'Note', field: { name, type: 'text' } } });
      expect(viaMcp.isError).toBe(true);
      expect(firstText(viaMcp)).toContain('is a reserved name');
      expect(await count('app_tables')).toBe(tables);
    });

    it('refuses __proto__ as a field name by its shape', async () => {
      const result = await gql('mutation { createTable(name: "Proto", fields: [{ name: "__proto__", type: "text" }]) { _id } }');
      expect(result.body.errors[0].message).toMatch(/^fields\.0\.name: must start with a letter/);
    });

    it.each(['constructor', 'toString', 'hasOwnProperty'])('serves a table named %s fully, inline and with variables', async (name) => {
      await gqlData(gql, `mutation { createTable(name: "${name}", fields: [{ name: "label", type: "text" }]) { _id } }`);
      const created = await gqlData(gql, `mutation($d: ${name}Input!) { create${name}(data: $d) { _id label } }`, { d: { label: 'via variables' } });
      const inline = await gqlData(gql, `mutation { create${name}(data: { label: "inline" }) { _id } }`);
      const listed = await gqlData(gql, `{ list${name}(sort: [{ field: label }]) { total items { label } } }`);
      expect(listed[`list${name}`]).toEqual({ total: 2, items: [{ label: 'inline' }, { label: 'via variables' }] });
      expect((await gqlData(gql, `query($id: ID!) { get${name}(Id: $id) { label } }`, { id: created[`create${name}`]._id }))[`get${name}`]).toEqual({ label: 'via variables' });
      expect(inline[`create${name}`]._id).toBeTruthy();
    });
  });

  describe('text PostgreSQL cannot store is refused with BAD_INPUT naming the field', () => {
    it.each([
      ['a text value', { title: NUL }, 'data.title', NUL_MESSAGE],
      ['a JSON value', { title: 'ok', meta: { deep: [NUL] } }, 'data.meta.deep.0', NUL_MESSAGE],
      ['a JSON key', { title: 'ok', meta: { [NUL]: 1 } }, `data.meta.${NUL}`, NUL_MESSAGE],
      ['an unpaired surrogate', { title: LONE }, 'data.title', 'must not contain an unpaired UTF-16 surrogate (it is not valid Unicode)'],
    ])('in %s of a record, through the generated GraphQL', async (_label, data, field, message) => {
      const before = (await gqlData(gql, '{ listNote { total } }')).listNote.total;
      const result = await gql('mutation($d: NoteInput!) { createNote(data: $d) { _id } }', { d: data });
      expect(result.status).toBe(200);
      expect(result.body.errors[0].extensions.code).toBe('BAD_INPUT');
      expect(result.body.errors[0].message).toBe(`${field}: ${message}`);
      expect((await gqlData(gql, '{ listNote { total } }')).listNote.total).toBe(before);
    });

    it('in a filter value', async () => {
      const result = await gql('query($f: NoteFilter) { listNote(filter: $f) { total } }', { f: { title: { eq: NUL } } });
      expect(result.body.errors[0]).toMatchObject({ message: `filter.title.eq: ${NUL_MESSAGE}`, extensions: { code: 'BAD_INPUT' } });
    });

    it('in a record id', async () => {
      const result = await gql('query($id: ID!) { getNote(Id: $id) { _id } }', { id: NUL });
      expect(result.body.errors[0].extensions.code).toBe('BAD_INPUT');
    });

    it.each([
      ['a feature name', 'features', 'mutation($v: String!) { createFeature(name: $v, customCode: "export default () => <p/>") { _id } }', 'name'],
      ['feature code', 'features', 'mutation($v: String!) { createFeature(name: "Nul code", customCode: $v) { _id } }', 'customCode'],
      ['a hook name', 'hooks', 'mutation($v: String!) { createHook(name: $v, type: "webHook", content: "async () => 1") { _id } }', 'name'],
      ['a menu label', 'menus', 'mutation($v: String!) { upsertMenu(name: "Main", entries: [{ label: $v, path: "/feature/x" }]) { menu { _id } } }', 'entries.0.label'],
      ['a role name', 'roles', 'mutation($v: String!) { createRole(name: $v) { _id } }', 'name'],
      ['an environment variable name', 'env_vars', 'mutation($v: String!) { setEnvironmentVariable(name: $v, value: "x") { name } }', 'name'],
      ['a user e-mail', 'users', 'mutation($v: String!) { createUser(email: $v, password: "password-123", role: "viewer") { _id } }', 'email'],
    ] as const)('in %s, through the builder GraphQL', async (_label, table, mutation, field) => {
      const before = await count(table);
      const value = field === 'customCode' ? `export default () => <p>${NUL}</p>` : field === 'email' ? `a${NUL}@example.com` : NUL;
      const result = await gql(mutation, { v: value });
      expect(result.body.errors[0].extensions.code).toBe('BAD_INPUT');
      expect(result.body.errors[0].message).toBe(`${field}: ${NUL_MESSAGE}`);
      expect(await count(table)).toBe(before);
    });

    it('in tool arguments, through MCP', async () => {
      const before = await count('features');
      const result = await mcp.callTool({ name: 'create_feature', arguments: { name: NUL, customCode: 'export default () => <p/>' } });
      expect(result.isError).toBe(true);
      expect(firstText(result)).toContain(`name: ${NUL_MESSAGE}`);
      expect(await count('features')).toBe(before);
    });

    it("in a hook's db call: the hook gets the message and nothing is written", async () => {
      await gqlData(gql, 'mutation($c: String!) { createHook(name: "nul-writer", type: "webHook", content: $c) { _id } }', {
        c: "async (instance) => { try { await db.create('Note', { title: instance.title }); return 'written'; } catch (error) { return error.message; } }",
      });
      const before = (await gqlData(gql, '{ listNote { total } }')).listNote.total;
      const response = await fetch(`${server.url}/api/webhook/nul-writer`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: NUL }) });
      expect(await response.json()).toBe(`data.title: ${NUL_MESSAGE}`);
      expect((await gqlData(gql, '{ listNote { total } }')).listNote.total).toBe(before);
    });

    it.runIf(!usingPostgres)('in a CLI command sent to the server', async () => {
      const lock = readLiveLock(server.config.dataDir)!;
      const before = await count('users');
      const response = await fetch(`${server.url}/api/internal/cli`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-trellis-cli-token': lock.token },
        body: JSON.stringify({ command: 'user create', args: { email: `cli${NUL}@example.com`, password: 'password-123' } }),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toBe(`email: ${NUL_MESSAGE}`);
      expect(await count('users')).toBe(before);
    });
  });

  describe('JSON that cannot be read, on the MCP endpoint', () => {
    const post = (body: string) =>
      fetch(`${server.url}/api/mcp`, { method: 'POST', headers: { ...MCP_ACCEPT, 'content-type': 'application/json', authorization: `Bearer ${mcpKey}` }, body });

    it.each([
      ['malformed JSON', '{"jsonrpc": "2.0", "id": 1,', 400, -32700, 'Parse error: the request body is not valid JSON'],
      ['an empty body', '', 400, -32700, 'Parse error: the request body is empty'],
      ['JSON nested 10 000 levels deep', '['.repeat(10_000) + ']'.repeat(10_000), 400, -32700, 'Parse error: Request body nests objects and arrays deeper than 100 levels'],
      ['an empty batch', '[]', 400, -32600, 'Invalid Request: an empty batch'],
      ['a batch', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', 400, -32600, 'Invalid Request: JSON-RPC batches are not supported; send one message per request'],
    ])('answers %s with a JSON-RPC error and id null', async (_label, body, status, code, message) => {
      const response = await post(body);
      expect(response.status).toBe(status);
      expect(await response.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code, message } });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    });

    it('answers deeply nested JSON on the REST endpoints with 400 BAD_INPUT', async () => {
      const response = await fetch(`${server.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":'.repeat(5000) + '1' + '}'.repeat(5000) });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: { code: 'BAD_INPUT', message: 'Request body nests objects and arrays deeper than 100 levels', details: { maxDepth: 100 } } });
    });
  });
});
