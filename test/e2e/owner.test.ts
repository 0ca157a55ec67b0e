import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER } from '../helpers/env.js';
import { runTrellis } from '../helpers/process.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, type HttpResult, type TestServer } from '../helpers/server.js';

/**
 * Issue 18, item 2: the owner's account changes only by the owner (or the operator at the
 * machine); ownership moves only by an explicit transfer; hook changes always reach the owner;
 * every change to an admin account is e-mailed to that account and audited.
 */

type Gql = ReturnType<typeof graphqlClient>;

const PASSWORD = 'password-123';
const ACCOUNT_CHANGED = 'Your Trellis account was changed';
const UPDATE_USER = 'mutation($id: ID!, $name: String, $role: String, $password: String, $disabled: Boolean) { updateUser(_id: $id, name: $name, role: $role, password: $password, disabled: $disabled) { _id } }';
const TRANSFER = 'mutation($id: ID!) { transferOwnership(userId: $id) { _id email isOwner } }';
const USERS = '{ users { _id email isOwner disabled roleName } }';

interface Setup {
  server: TestServer;
  ownerGql: Gql;
  ownerId: string;
}

async function setUp(): Promise<Setup> {
  const server = await startTestServer();
  const ownerGql = graphqlClient(server.url, await login(server.url));
  const ownerId = (await gqlData(ownerGql, '{ me { _id } }')).me._id;
  return { server, ownerGql, ownerId };
}

async function createUser(gql: Gql, email: string, role: string): Promise<string> {
  const created = await gqlData(gql, 'mutation($e: String!, $p: String!, $r: String!) { createUser(email: $e, password: $p, role: $r) { _id } }', { e: email, p: PASSWORD, r: role });
  return created.createUser._id;
}

function outbox(server: TestServer, to: string, subject: string) {
  return server.server.services.ctx.db.selectFrom('mail_outbox').selectAll().where('to_address', '=', to).where('subject', '=', subject).orderBy('id').execute();
}

function auditOf(server: TestServer, action: string, resourceId: string) {
  return server.server.services.ctx.db.selectFrom('audit_events').selectAll().where('action', '=', action).where('resource_id', '=', resourceId).orderBy('id').execute();
}

function expectError(result: HttpResult, code: string, fragment: string) {
  expect(result.body.errors?.[0]?.extensions?.code, JSON.stringify(result.body)).toBe(code);
  expect(result.body.errors[0].message).toContain(fragment);
}

/** The CLI against this server's data: through the server when it holds the embedded folder, else (PostgreSQL) directly, committed when it exits. */
async function trellis(server: TestServer, ...args: string[]) {
  const run = await runTrellis([...args, '--json'], server.env);
  if (run.code !== 0) throw new Error(`trellis ${args.join(' ')} failed: ${run.stdout}${run.stderr}`);
  return JSON.parse(run.stdout);
}

describe("the owner's account", () => {
  let s: Setup;
  let secondAdmin: Gql;
  let secondAdminId: string;

  beforeAll(async () => {
    s = await setUp();
    secondAdminId = await createUser(s.ownerGql, 'second-admin@example.com', 'admin');
    secondAdmin = graphqlClient(s.server.url, await login(s.server.url, 'second-admin@example.com', PASSWORD));
  });
  afterAll(async () => s?.server.close());

  it.each([
    ['disable', { disabled: true }],
    ['demote', { role: 'designer' }],
    ['reset the password of', { password: 'taken-over-1' }],
    ['rename', { name: 'Not the owner' }],
  ])('refuses a second admin who tries to %s the owner with FORBIDDEN, and changes nothing', async (_change, change) => {
    expectError(await secondAdmin(UPDATE_USER, { id: s.ownerId, ...change }), 'FORBIDDEN', "Only the owner changes the owner's account");
    const owner = (await gqlData(s.ownerGql, '{ me { name roleName disabled } }')).me;
    expect(owner).toEqual({ name: 'Owner', roleName: 'admin', disabled: false });
    expect((await postJson(`${s.server.url}/api/auth/login`, { email: OWNER.email, password: 'taken-over-1' })).status).toBe(401);
    expect(await login(s.server.url)).toMatch(/^trs_/);
  });

  it.each([
    ['disable', { disabled: true }],
    ['demote', { role: 'designer' }],
  ])('refuses the owner who tries to %s themselves with CONFLICT: ownership is transferred first', async (_change, change) => {
    expectError(await s.ownerGql(UPDATE_USER, { id: s.ownerId, ...change }), 'CONFLICT', 'transferOwnership');
    expect((await gqlData(s.ownerGql, '{ me { roleName disabled } }')).me).toEqual({ roleName: 'admin', disabled: false });
  });

  it("refuses a role change by another admin that would take 'admin' from the owner", async () => {
    const role = await gqlData(s.ownerGql, 'mutation { createRole(name: "chiefs", permissions: ["admin"]) { _id } }');
    await gqlData(s.ownerGql, UPDATE_USER, { id: s.ownerId, role: 'chiefs' });
    const demoting = await secondAdmin('mutation($id: ID!) { updateRole(_id: $id, permissions: ["config:read"]) { _id } }', { id: role.createRole._id });
    expectError(demoting, 'FORBIDDEN', "Only the owner changes the owner's account");
    expect((await gqlData(s.ownerGql, '{ roles { name permissions } }')).roles).toContainEqual({ name: 'chiefs', permissions: ['admin'] });
    await gqlData(s.ownerGql, UPDATE_USER, { id: s.ownerId, role: 'admin' });
  });

  it('refuses transferOwnership to anyone but the owner', async () => {
    expectError(await secondAdmin(TRANSFER, { id: secondAdminId }), 'FORBIDDEN', 'Only the owner transfers ownership');
    const users = (await gqlData(s.ownerGql, USERS)).users;
    expect(users.filter((user: { isOwner: boolean }) => user.isOwner).map((user: { email: string }) => user.email)).toEqual([OWNER.email]);
  });

  it('refuses to make a user who is not an enabled admin the owner', async () => {
    const designerId = await createUser(s.ownerGql, 'owner-designer@example.com', 'designer');
    expectError(await s.ownerGql(TRANSFER, { id: designerId }), 'CONFLICT', 'is not an enabled admin');
  });

  it('lets the owner change their own account like any admin changes theirs', async () => {
    await gqlData(s.ownerGql, UPDATE_USER, { id: s.ownerId, name: 'The owner' });
    expect((await gqlData(s.ownerGql, '{ me { name } }')).me.name).toBe('The owner');
  });
});

describe('every change to an admin account', () => {
  let s: Setup;

  beforeAll(async () => {
    s = await setUp();
  });
  afterAll(async () => s?.server.close());

  it.each([
    ['disabled', 'admin', {}, { disabled: true }, 'Disabled: you can no longer sign in'],
    ['enabled again', 'admin', { disabled: true }, { disabled: false }, 'Enabled: you can sign in again'],
    ['demoted', 'admin', {}, { role: 'designer' }, 'Role: admin -> designer'],
    ['promoted', 'designer', {}, { role: 'admin' }, 'Role: designer -> admin'],
    ['given a new password by another admin', 'admin', {}, { password: 'reset-by-other-1' }, 'Password: set by someone else'],
    ['renamed', 'admin', {}, { name: 'Ada L.' }, 'Name: "Ada L."'],
  ])('is e-mailed to the account and audited when it is %s', async (label, role, before, change, line) => {
    const email = `${label.replace(/\W+/g, '-')}@example.com`;
    const id = await createUser(s.ownerGql, email, role);
    if (Object.keys(before).length) await gqlData(s.ownerGql, UPDATE_USER, { id, ...before });
    const mailsBefore = (await outbox(s.server, email, ACCOUNT_CHANGED)).length;
    const auditsBefore = (await auditOf(s.server, 'user.update', id)).length;
    await gqlData(s.ownerGql, UPDATE_USER, { id, ...change });
    const mails = await outbox(s.server, email, ACCOUNT_CHANGED);
    expect(mails).toHaveLength(mailsBefore + 1);
    expect(mails.at(-1)!.body).toContain(line);
    expect(mails.at(-1)!.body).toContain(`Changed by: ${OWNER.email}`);
    const audits = await auditOf(s.server, 'user.update', id);
    expect(audits).toHaveLength(auditsBefore + 1);
    expect(audits.at(-1)).toMatchObject({ actor_id: s.ownerId, source: 'graphql' });
  });

  it('is e-mailed to every holder of a role that loses the admin permission, and the role change is audited', async () => {
    const role = (await gqlData(s.ownerGql, 'mutation { createRole(name: "operators", permissions: ["admin"]) { _id } }')).createRole;
    await createUser(s.ownerGql, 'operator-1@example.com', 'operators');
    await gqlData(s.ownerGql, 'mutation($id: ID!) { updateRole(_id: $id, permissions: ["config:read"]) { _id } }', { id: role._id });
    const [mail] = await outbox(s.server, 'operator-1@example.com', ACCOUNT_CHANGED);
    expect(mail!.body).toContain('Role: "operators" lost the admin permission');
    expect(await auditOf(s.server, 'role.update', role._id)).toEqual([expect.objectContaining({ actor_id: s.ownerId, details: expect.objectContaining({ permissions: ['config:read'] }) })]);
  });

  it("e-mails an admin who changes their own password, and no one's password appears in the mail", async () => {
    const id = await createUser(s.ownerGql, 'self-service@example.com', 'admin');
    const own = graphqlClient(s.server.url, await login(s.server.url, 'self-service@example.com', PASSWORD));
    await gqlData(own, 'mutation { changeMyPassword(currentPassword: "password-123", newPassword: "brand-new-pass-1") { token } }');
    const [mail] = await outbox(s.server, 'self-service@example.com', ACCOUNT_CHANGED);
    expect(mail!.body).toContain('Password: changed');
    expect(mail!.body).not.toContain('brand-new-pass-1');
    expect(await auditOf(s.server, 'user.password.change', id)).toHaveLength(1);
  });

  it('is e-mailed and audited when the operator changes it with the CLI', async () => {
    const id = await createUser(s.ownerGql, 'cli-changed@example.com', 'admin');
    await trellis(s.server, 'user', 'disable', 'cli-changed@example.com');
    const [mail] = await outbox(s.server, 'cli-changed@example.com', ACCOUNT_CHANGED);
    expect(mail!.body).toContain('Disabled: you can no longer sign in');
    expect(mail!.body).toContain('Changed by: the operator (trellis CLI)');
    expect(await auditOf(s.server, 'user.update', id)).toEqual([expect.objectContaining({ actor_id: null, source: 'cli' })]);
  });
});

describe('hook changes while the owner is disabled', () => {
  let s: Setup;
  let secondAdmin: Gql;

  beforeAll(async () => {
    s = await setUp();
    await createUser(s.ownerGql, 'hook-admin@example.com', 'admin');
    secondAdmin = graphqlClient(s.server.url, await login(s.server.url, 'hook-admin@example.com', PASSWORD));
  });
  afterAll(async () => s?.server.close());

  it('are still announced to the owner: a hook created, modified and deleted by another admin is e-mailed to the owner and audited', async () => {
    await trellis(s.server, 'user', 'disable', OWNER.email);
    expect((await postJson(`${s.server.url}/api/auth/login`, OWNER)).status).toBe(401);
    const hook = (await gqlData(secondAdmin, 'mutation { createHook(name: "quiet-hook", type: "webHook", content: "async () => 1") { _id } }')).createHook;
    await gqlData(secondAdmin, 'mutation($id: ID!) { updateHook(_id: $id, content: "async () => 2") { _id } }', { id: hook._id });
    await gqlData(secondAdmin, 'mutation($id: ID!) { deleteHook(_id: $id, confirm: true) }', { id: hook._id });
    for (const change of ['created', 'modified', 'deleted']) {
      const mails = await outbox(s.server, OWNER.email, `Hook "quiet-hook" ${change}`);
      expect(mails, change).toHaveLength(1);
      expect(mails[0]!.body).toContain('Author: hook-admin@example.com');
    }
    const actions = await s.server.server.services.ctx.db.selectFrom('audit_events').select('action').where('resource_id', '=', hook._id).orderBy('id').execute();
    expect(actions.map((row) => row.action)).toEqual(['hook.create', 'hook.update', 'hook.delete']);
  });
});

describe('transferring ownership', () => {
  let s: Setup;
  let heirId: string;

  beforeAll(async () => {
    s = await setUp();
    heirId = await createUser(s.ownerGql, 'heir@example.com', 'admin');
  });
  afterAll(async () => s?.server.close());

  it('moves ownership to another enabled admin when the owner asks, e-mails both and records it', async () => {
    const moved = (await gqlData(s.ownerGql, TRANSFER, { id: heirId })).transferOwnership;
    expect(moved).toEqual({ _id: heirId, email: 'heir@example.com', isOwner: true });
    const owners = (await gqlData(s.ownerGql, USERS)).users.filter((user: { isOwner: boolean }) => user.isOwner);
    expect(owners.map((user: { email: string }) => user.email)).toEqual(['heir@example.com']);
    expect(await outbox(s.server, 'heir@example.com', 'You are now the owner of the Trellis application')).toHaveLength(1);
    expect(await outbox(s.server, OWNER.email, 'You are no longer the owner of the Trellis application')).toHaveLength(1);
    const [event] = await auditOf(s.server, 'user.ownership.transfer', heirId);
    expect(event).toMatchObject({ actor_id: s.ownerId, source: 'graphql', details: { to: 'heir@example.com', from: [OWNER.email] } });
  });

  it('protects the new owner and no longer the former one', async () => {
    const heir = graphqlClient(s.server.url, await login(s.server.url, 'heir@example.com', PASSWORD));
    expectError(await s.ownerGql(UPDATE_USER, { id: heirId, disabled: true }), 'FORBIDDEN', "Only the owner changes the owner's account");
    await gqlData(heir, UPDATE_USER, { id: s.ownerId, role: 'designer' });
    expect((await gqlData(heir, USERS)).users.find((user: { _id: string }) => user._id === s.ownerId)).toMatchObject({ roleName: 'designer', isOwner: false });
  });

  it('lets the operator give ownership to an admin with trellis user transfer-ownership, e-mailed and audited as the CLI', async () => {
    const rescuerId = await createUser(graphqlClient(s.server.url, await login(s.server.url, 'heir@example.com', PASSWORD)), 'rescuer@example.com', 'admin');
    const moved = await trellis(s.server, 'user', 'transfer-ownership', 'rescuer@example.com');
    expect(moved).toMatchObject({ _id: rescuerId, email: 'rescuer@example.com', isOwner: true });
    const owners = await s.server.server.services.ctx.db.selectFrom('users').select('email').where('is_owner', '=', true).execute();
    expect(owners).toEqual([{ email: 'rescuer@example.com' }]);
    expect(await outbox(s.server, 'heir@example.com', 'You are no longer the owner of the Trellis application')).toHaveLength(1);
    expect(await auditOf(s.server, 'user.ownership.transfer', rescuerId)).toEqual([
      expect.objectContaining({ actor_id: null, source: 'cli', details: expect.objectContaining({ to: 'rescuer@example.com', from: ['heir@example.com'] }) }),
    ]);
  });
});
