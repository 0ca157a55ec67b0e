import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

// Updates of a table whose beforeSave hooks cannot write (their code never names `db`) run the
// hooks with no transaction open and write only if the record is still the version the hooks saw.
// A loopback "control" server, called by the hook through fetch, changes the record behind the
// save's back, the way a concurrent writer would.

type Gql = ReturnType<typeof graphqlClient>;

const TICKET = '_id title note score';
const CREATE = `mutation($data: TicketInput!) { createTicket(data: $data) { ${TICKET} } }`;
const UPDATE = `mutation($Id: ID!, $data: TicketInput) { updateTicket(Id: $Id, data: $data) { ${TICKET} } }`;
const GET = `query($Id: ID!) { getTicket(Id: $Id) { ${TICKET} } }`;

let server: TestServer;
let gql: Gql;
let control: Server;
let sqlTable: string;
/** How many more calls of the hook for a record change that record behind the save (none when absent). */
const interference = new Map<string, number>();
const hookCalls = new Map<string, number>();

const db = () => server.server.services.ctx.db;

async function changeBehindTheSave(id: string, title: string): Promise<void> {
  await sql`update ${sql.table(sqlTable)} set title = ${title}, _updated_at = now() where _id = ${id}`.execute(db());
}

beforeAll(async () => {
  control = createServer((request, response) => {
    const id = decodeURIComponent(request.url!.split('/').pop()!);
    const calls = (hookCalls.get(id) ?? 0) + 1;
    hookCalls.set(id, calls);
    const changes = interference.get(id) ?? 0;
    if (changes > 0) interference.set(id, changes - 1);
    const change = changes > 0 ? changeBehindTheSave(id, `raced ${calls}`) : Promise.resolve();
    change.then(
      () => response.end('{}'),
      (error: unknown) => {
        response.statusCode = 500;
        response.end(String(error));
      },
    );
  });
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  const port = (control.address() as AddressInfo).port;
  server = await startTestServer({ TRELLIS_HOOK_EGRESS_ALLOW: `127.0.0.1:${port}` });
  gql = graphqlClient(server.url, await login(server.url));
  const table = await gqlData(gql, 'mutation { createTable(name: "Ticket", fields: [{ name: "title", type: "text", required: true }, { name: "note", type: "text" }, { name: "score", type: "number" }]) { _id } }');
  const tableId = table.createTable._id as string;
  sqlTable = (await db().selectFrom('app_tables').select('sql_name').where('id', '=', tableId).executeTakeFirstOrThrow()).sql_name;
  const code = `async function (instance) {
    await fetch('http://127.0.0.1:${port}/touch/' + encodeURIComponent(instance._id));
    instance.score = instance.title.length;
    return instance;
  }`;
  await gqlData(gql, 'mutation($t: ID, $c: String!) { createHook(name: "score-title", type: "beforeSave", tableId: $t, content: $c) { _id } }', { t: tableId, c: code });
});

afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => control?.close(resolve));
});

async function createTicket(title: string): Promise<string> {
  return (await gqlData(gql, CREATE, { data: { title } })).createTicket._id;
}

describe('beforeSave hooks that cannot write, on update', () => {
  it('run on the whole stored record and save what they computed', async () => {
    const id = await createTicket('four');
    const updated = await gqlData(gql, UPDATE, { Id: id, data: { note: 'n' } });
    expect(updated.updateTicket).toEqual({ _id: id, title: 'four', note: 'n', score: 4 });
    expect(hookCalls.get(id)).toBe(2);
  });

  it('run on the fresh record when another writer changed it since this server last wrote it', async () => {
    const id = await createTicket('old');
    await changeBehindTheSave(id, 'changed elsewhere');
    const updated = await gqlData(gql, UPDATE, { Id: id, data: { note: 'mine' } });
    expect(updated.updateTicket).toEqual({ _id: id, title: 'changed elsewhere', note: 'mine', score: 'changed elsewhere'.length });
  });

  it('run again on the fresh record when it changes while they run, and lose neither write', async () => {
    const id = await createTicket('first');
    interference.set(id, 1);
    const before = hookCalls.get(id)!;
    const updated = await gqlData(gql, UPDATE, { Id: id, data: { note: 'after the race' } });
    expect(updated.updateTicket).toEqual({ _id: id, title: `raced ${before + 1}`, note: 'after the race', score: `raced ${before + 1}`.length });
    expect(hookCalls.get(id)).toBe(before + 2);
  });

  it('answer CONFLICT when the record keeps changing while they run, and keep what the other writer stored', async () => {
    const id = await createTicket('busy');
    interference.set(id, Infinity);
    const result = await gql(UPDATE, { Id: id, data: { note: 'never stored' } });
    expect(result.body.errors).toHaveLength(1);
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', status: 409 });
    expect(result.body.errors[0].message).toContain('kept changing during the save');
    interference.delete(id);
    const stored = (await gqlData(gql, GET, { Id: id })).getTicket;
    expect(stored.note).toBeNull();
    expect(stored.title).toMatch(/^raced \d+$/);
  });

  it('answer NOT_FOUND for a record deleted since this server last wrote it', async () => {
    const id = await createTicket('doomed');
    await sql`delete from ${sql.table(sqlTable)} where _id = ${id}`.execute(db());
    const result = await gql(UPDATE, { Id: id, data: { note: 'too late' } });
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('reject the save with their message and keep the stored record', async () => {
    const id = await createTicket('x');
    await gqlData(gql, 'mutation($t: ID!) { updateHook(_id: $t, content: "async function (instance) { if (instance.note === \\"bad\\") throw new Error(\\"note must not be bad\\"); return instance; }") { _id } }', {
      t: (await db().selectFrom('hooks').select('id').where('name', '=', 'score-title').executeTakeFirstOrThrow()).id,
    });
    const result = await gql(UPDATE, { Id: id, data: { note: 'bad' } });
    expect(result.body.errors[0]).toMatchObject({ message: expect.stringContaining('note must not be bad'), extensions: { code: 'BAD_INPUT' } });
    expect((await gqlData(gql, GET, { Id: id })).getTicket).toEqual({ _id: id, title: 'x', note: null, score: 1 });
  });
});
