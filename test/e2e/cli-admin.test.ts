import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_MAX_ATTEMPTS } from '../../src/platform/mail.js';
import { OWNER } from '../helpers/env.js';
import { connectMcp, mcpPost } from '../helpers/mcp.js';
import { runTrellis } from '../helpers/process.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, usingPostgres, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const DESIGNER = { email: 'admin-cli-designer@example.com', password: 'designer-pass' };
const KEY_FIELDS = '_id name keyPrefix scopes expiresAt lastUsedAt revokedAt createdAt userId userEmail';
const USER_FIELDS = '_id email name roleId roleName isOwner disabled createdAt';
const CREATE_KEY = 'mutation($n: String!) { createMcpApiKey(name: $n, scopes: ["config:read"], expiresInDays: 30) { apiKey key { _id } } }';

type Gql = ReturnType<typeof graphqlClient>;

let server: TestServer;
let ownerGql: Gql;
let designerGql: Gql;
let designerId: string;

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
  designerId = (
    await gqlData(ownerGql, 'mutation($e: String!, $p: String!) { createUser(email: $e, password: $p, role: "designer") { _id } }', {
      e: DESIGNER.email,
      p: DESIGNER.password,
    })
  ).createUser._id;
  designerGql = graphqlClient(server.url, await login(server.url, DESIGNER.email, DESIGNER.password));
});
afterAll(async () => server?.close());

const db = () => server.server.services.ctx.db;
const trellis = (...args: string[]) => runTrellis(args, server.env);
const json = async (...args: string[]) => {
  const run = await trellis(...args, '--json');
  if (run.code !== 0) throw new Error(`trellis ${args.join(' ')} failed: ${run.stdout}${run.stderr}`);
  return JSON.parse(run.stdout);
};

/**
 * Through the server that holds the embedded folder a change is seen by the next request; on
 * PostgreSQL the CLI writes directly and the server hears of it by NOTIFY, a moment later.
 */
const afterChange = <T>(what: string, probe: () => Promise<T>): Promise<T> => (usingPostgres ? waitFor(what, probe) : probe());

/** Every raw key and stored hash the database holds, none of which a command may print. */
async function storedSecrets(): Promise<string[]> {
  const keys = await db().selectFrom('mcp_api_keys').select('key_hash').execute();
  const integrations = await db().selectFrom('integration_keys').select('key_hash').execute();
  return [...keys, ...integrations].map((row) => row.key_hash);
}

describe('trellis key list and revoke', () => {
  let designerKey: { apiKey: string; key: { _id: string } };

  beforeAll(async () => {
    await gqlData(ownerGql, CREATE_KEY, { n: 'owner key' });
    designerKey = (await gqlData(designerGql, CREATE_KEY, { n: 'designer key' })).createMcpApiKey;
    const client = await connectMcp(server, designerKey.apiKey);
    await client.listTools();
    await client.close();
  });

  it('lists every key of the application as GraphQL does, with owner e-mail, scopes, expiry and last use', async () => {
    const listed = await json('key', 'list');
    expect(listed).toEqual((await gqlData(ownerGql, `{ mcpApiKeys(all: true) { ${KEY_FIELDS} } }`)).mcpApiKeys);
    expect(listed.map((key: { userEmail: string }) => key.userEmail).sort()).toEqual([DESIGNER.email, OWNER.email]);
    expect(listed.find((key: { _id: string }) => key._id === designerKey.key._id).lastUsedAt).toEqual(expect.any(String));
  });

  it('prints one line per key for people, and never a raw key or a hash in either form', async () => {
    const run = await trellis('key', 'list');
    expect(run.code).toBe(0);
    const [header, ...lines] = run.stdout.trim().split('\n');
    expect(header).toMatch(/^_ID +NAME +PREFIX +OWNER +SCOPES +EXPIRES +LAST USED +STATE$/);
    const designerLine = lines.find((line) => line.startsWith(designerKey.key._id))!;
    expect(designerLine).toMatch(new RegExp(`designer key +${designerKey.apiKey.slice(0, 12)}… +${DESIGNER.email} +config:read +\\S+Z +\\S+Z +active$`));
    const printed = run.stdout + (await trellis('key', 'list', '--json')).stdout;
    for (const secret of [designerKey.apiKey, ...(await storedSecrets())]) expect(printed).not.toContain(secret.slice(13));
  });

  it.each([
    ['e-mail', () => DESIGNER.email],
    ['_id', () => designerId],
  ])("lists only one user's keys with --user <%s>", async (_by, user) => {
    const listed = await json('key', 'list', '--user', user());
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((key: { userId: string }) => key.userId === designerId)).toBe(true);
  });

  it('revokes a key, which stops authenticating at once; the audit records the CLI as the author', async () => {
    const created = (await gqlData(designerGql, CREATE_KEY, { n: 'to revoke' })).createMcpApiKey;
    const call = () => mcpPost(server, created.apiKey, { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect((await call()).status).toBe(200);

    const run = await trellis('key', 'revoke', created.key._id);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Revoked MCP key 'to revoke' (_id ${created.key._id}, ${created.apiKey.slice(0, 12)}…) of ${DESIGNER.email}`);
    await afterChange('the revoked key to be refused', async () => (await call()).status === 401);
    expect((await call()).status).toBe(401);
    const event = await db().selectFrom('audit_events').selectAll().where('action', '=', 'mcp_key.revoke').where('resource_id', '=', created.key._id).executeTakeFirstOrThrow();
    expect(event).toMatchObject({ source: 'cli', actor_id: null });
    const listed = await json('key', 'list');
    expect(listed.find((key: { _id: string }) => key._id === created.key._id).revokedAt).toEqual(expect.any(String));
  });

  it('exits with 1 naming a key that does not exist', async () => {
    const run = await trellis('key', 'revoke', 'no-such-key');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("Error: MCP API key 'no-such-key' does not exist");
  });

  it("takes an _id that begins with '-' (ids are random base64url) as the key, not as an option", async () => {
    for (const command of [['key', 'revoke', '-Hckf1qVV3qL4'], ['user', 'disable', '-Hckf1qVV3qL4'], ['integration', 'revoke', '-Hckf1qVV3qL4']]) {
      const run = await trellis(...command);
      expect(run.code).toBe(1);
      expect(run.stderr).not.toContain('unknown option');
      expect(run.stderr).toContain("'-Hckf1qVV3qL4'");
    }
  });
});

describe('trellis integration list and revoke', () => {
  const createIntegration = async (name: string) =>
    (await gqlData(ownerGql, 'mutation($n: String!) { createIntegrationKey(name: $n) { clientId apiKey integration { _id } } }', { n: name })).createIntegrationKey;

  it('lists the integration keys as GraphQL does, and never an apiKey or a hash', async () => {
    const created = await createIntegration('Listed shop');
    const listed = await json('integration', 'list');
    expect(listed).toEqual((await gqlData(ownerGql, '{ integrationKeys { _id name clientId roleId createdAt } }')).integrationKeys);
    const run = await trellis('integration', 'list');
    expect(run.stdout.split('\n')[0]).toMatch(/^NAME +CLIENT ID +_ID +CREATED$/);
    expect(run.stdout).toMatch(new RegExp(`^Listed shop +${created.clientId} +${created.integration._id} +\\S+Z$`, 'm'));
    for (const secret of [created.apiKey, ...(await storedSecrets())]) expect(run.stdout + JSON.stringify(listed)).not.toContain(secret.slice(5));
  });

  it('revokes an integration key: its credentials and access tokens stop working at once; the audit records the CLI', async () => {
    const created = await createIntegration('Revoked shop');
    const credentials = { clientId: created.clientId, apiKey: created.apiKey };
    const token = (await postJson(`${server.url}/api/auth/token`, credentials)).body.access_token;
    const useToken = () => postJson(`${server.url}/graphql`, { query: '{ integrationKeys { _id } }' }, { authorization: `Bearer ${token}` });
    expect((await useToken()).status).toBe(200);

    const run = await trellis('integration', 'revoke', created.clientId, '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ revoked: true, clientId: created.clientId, name: 'Revoked shop' });
    await afterChange('the revoked token to be refused', async () => (await useToken()).status === 401);
    expect((await useToken()).status).toBe(401);
    expect((await postJson(`${server.url}/api/auth/token`, credentials)).status).toBe(401);
    const event = await db().selectFrom('audit_events').selectAll().where('action', '=', 'integration_key.delete').where('resource_id', '=', created.integration._id).executeTakeFirstOrThrow();
    expect(event).toMatchObject({ source: 'cli', actor_id: null });
    expect((await json('integration', 'list')).map((key: { clientId: string }) => key.clientId)).not.toContain(created.clientId);
  });

  it('exits with 1 naming a clientId that does not exist', async () => {
    const run = await trellis('integration', 'revoke', 'trc_nothing');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("Error: Integration key 'trc_nothing' does not exist");
  });
});

describe('trellis user list, disable and enable', () => {
  it('lists the users as GraphQL does, one line each for people', async () => {
    expect(await json('user', 'list')).toEqual((await gqlData(ownerGql, `{ users { ${USER_FIELDS} } }`)).users);
    const run = await trellis('user', 'list');
    expect(run.stdout.split('\n')[0]).toMatch(/^EMAIL +ROLE +STATE +OWNER +_ID +CREATED$/);
    expect(run.stdout).toMatch(new RegExp(`^${OWNER.email} +admin +enabled +owner `, 'm'));
    expect(run.stdout).toMatch(new RegExp(`^${DESIGNER.email} +designer +enabled +- +${designerId} `, 'm'));
  });

  it("disables a user: their sessions and MCP keys stop working until they are enabled again; the audit records the CLI", async () => {
    const email = 'disabled-by-cli@example.com';
    const userId = (await gqlData(ownerGql, 'mutation($e: String!) { createUser(email: $e, password: "password-123", role: "designer") { _id } }', { e: email })).createUser._id;
    const session = await login(server.url, email, 'password-123');
    const apiKey = (await gqlData(graphqlClient(server.url, session), CREATE_KEY, { n: 'soon disabled' })).createMcpApiKey.apiKey;
    const mcp = () => mcpPost(server, apiKey, { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect((await mcp()).status).toBe(200);

    const disabled = await trellis('user', 'disable', email);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stdout).toContain(`User ${email} (_id ${userId}, role designer) is disabled`);
    await afterChange('the disabled user to be refused', async () => (await mcp()).status === 401);
    expect((await mcp()).status).toBe(401);
    expect((await graphqlClient(server.url, session)('{ me { _id } }')).status).toBe(401);
    expect((await postJson(`${server.url}/api/auth/login`, { email, password: 'password-123' })).status).toBe(401);
    const event = await db().selectFrom('audit_events').selectAll().where('action', '=', 'user.update').where('resource_id', '=', userId).executeTakeFirstOrThrow();
    expect(event).toMatchObject({ source: 'cli', actor_id: null, details: { disabled: true } });

    const enabled = await json('user', 'enable', userId);
    expect(enabled).toMatchObject({ _id: userId, email, disabled: false });
    await afterChange('the enabled user to be accepted', async () => (await mcp()).status === 200);
    expect((await mcp()).status).toBe(200);
    expect(await login(server.url, email, 'password-123')).toMatch(/^trs_/);
  });

  it('refuses to disable the last enabled admin, and a user who does not exist', async () => {
    const owner = await trellis('user', 'disable', OWNER.email);
    expect(owner.code).toBe(1);
    expect(owner.stderr).toContain('Error: The application must keep at least one enabled admin');
    const nobody = await trellis('user', 'disable', 'nobody@example.com');
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain("Error: User 'nobody@example.com' does not exist");
  });
});

describe('trellis mail list', () => {
  const BODY_SECRET = 'body-secret-4b8e1f';
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    // A hook change queues a real notification to the owner; the other states are written as the sender would leave them.
    await gqlData(ownerGql, 'mutation($c: String!) { createHook(name: "mailed", type: "webHook", content: $c) { _id } }', { c: 'async function (body) { return body; }' });
    const rows = [
      { state: 'retrying', to_address: 'ops@example.com', subject: 'Retrying', attempts: 2, last_error: 'connect ECONNREFUSED 127.0.0.1:2525' },
      { state: 'failed', to_address: 'ops@example.com', subject: 'Given up', attempts: MAIL_MAX_ATTEMPTS, last_error: '550 mailbox unavailable' },
      { state: 'sent', to_address: 'ops@example.com', subject: 'Delivered', attempts: 1, last_error: null, sent_at: new Date() },
    ];
    for (const { state, ...row } of rows) {
      const inserted = await db()
        .insertInto('mail_outbox')
        .values({ ...row, body: `Do not print: ${BODY_SECRET}`, next_attempt_at: new Date() })
        .returning('id')
        .executeTakeFirstOrThrow();
      ids[state] = String(inserted.id);
    }
  });

  it('lists each e-mail with state, recipient, subject, attempts and last error, newest first, and never its body', async () => {
    const page = await json('mail', 'list');
    const byId = new Map(page.items.map((mail: { _id: string }) => [mail._id, mail]));
    expect(byId.get(ids.retrying)).toEqual({
      _id: ids.retrying,
      state: 'retrying',
      to: 'ops@example.com',
      subject: 'Retrying',
      attempts: 2,
      lastError: 'connect ECONNREFUSED 127.0.0.1:2525',
      nextAttemptAt: expect.any(String),
      createdAt: expect.any(String),
      sentAt: null,
    });
    expect(byId.get(ids.failed)).toMatchObject({ state: 'failed', attempts: MAIL_MAX_ATTEMPTS, lastError: '550 mailbox unavailable', nextAttemptAt: null });
    expect(byId.get(ids.sent)).toMatchObject({ state: 'sent', sentAt: expect.any(String), nextAttemptAt: null });
    expect(page.items).toContainEqual(expect.objectContaining({ state: 'queued', to: OWNER.email, subject: 'Hook "mailed" created', attempts: 0 }));
    expect(page.items.map((mail: { _id: string }) => Number(mail._id))).toEqual([...page.items.map((mail: { _id: string }) => Number(mail._id))].sort((a, b) => b - a));

    const run = await trellis('mail', 'list');
    expect(run.stdout.split('\n')[0]).toMatch(/^_ID +STATE +TO +SUBJECT +ATTEMPTS +CREATED +LAST ERROR$/);
    expect(run.stdout).toMatch(new RegExp(`^${ids.failed} +failed +ops@example.com +Given up +${MAIL_MAX_ATTEMPTS} +\\S+Z +550 mailbox unavailable$`, 'm'));
    for (const printed of [run.stdout, JSON.stringify(page)]) {
      expect(printed).not.toContain(BODY_SECRET);
      expect(printed).not.toContain('SHA-256 of the stored code');
    }
  });

  it('filters by state and pages with --limit and --before', async () => {
    expect((await json('mail', 'list', '--state', 'failed')).items.map((mail: { _id: string }) => mail._id)).toEqual([ids.failed]);
    const first = await json('mail', 'list', '--limit', '2');
    expect(first.items.map((mail: { _id: string }) => mail._id)).toEqual([ids.sent, ids.failed]);
    const second = await json('mail', 'list', '--limit', '2', '--before', first.nextCursor);
    expect(second.items[0]._id).toBe(ids.retrying);
    const human = await trellis('mail', 'list', '--limit', '2');
    expect(human.stdout.trim().split('\n').at(-1)).toBe(`More e-mails: --before ${first.nextCursor}`);
  });

  it('exits with 1 naming the states for an unknown one', async () => {
    const run = await trellis('mail', 'list', '--state', 'lost');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Error: state: must be one of queued, retrying, failed, sent');
  });
});

describe.skipIf(usingPostgres)('the admin commands on a folder without Trellis data', () => {
  const folders: string[] = [];
  afterAll(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it.each([
    ['user', 'list'],
    ['user', 'disable', OWNER.email],
    ['user', 'enable', OWNER.email],
    ['key', 'list'],
    ['key', 'revoke', 'some-key'],
    ['integration', 'list'],
    ['integration', 'revoke', 'trc_x'],
    ['mail', 'list'],
    ['backup', 'trellis.backup'],
  ])('trellis %s %s refuses, naming the folder, and creates nothing there', async (...args) => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-no-data-'));
    folders.push(dir);
    const withFile = args[0] === 'backup' ? [args[0], `${dir}.${args[1]!}`] : args;
    const run = await runTrellis(withFile, { ...server.env, TRELLIS_DATA_DIR: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Error: ${dir} holds no Trellis data: start the server once with \`trellis serve\``);
    expect(readdirSync(dir)).toEqual([]);
    expect(existsSync(`${dir}.trellis.backup`)).toBe(false);
  });

  it('trellis backup refuses a data folder that does not exist, without creating it', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'trellis-no-data-')), 'absent');
    folders.push(join(dir, '..'));
    const run = await runTrellis(['backup', join(dir, '..', 'trellis.backup')], { ...server.env, TRELLIS_DATA_DIR: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Error: ${dir} holds no Trellis data`);
    expect(existsSync(dir)).toBe(false);
  });
});

describe('trellis serve --help', () => {
  /** The Configuration table of README.md: each variable with the default it documents. */
  function documentedSettings(): { name: string; defaultValue: string | undefined }[] {
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('### Running on PostgreSQL'));
    return [...section.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map(([, name, documented]) => ({
      name: name!,
      defaultValue: /^`([^`]*)`$/.exec(documented!.trim())?.[1],
    }));
  }

  it("lists every setting of README's configuration table, with its default and meaning", async () => {
    const run = await runTrellis(['serve', '--help'], {});
    expect(run.code).toBe(0);
    const listed = [...run.stdout.matchAll(/^ {2}([A-Z_]+) \(default: (.*)\)\n {6}(\S.*)$/gm)].map(([, name, defaultValue, meaning]) => ({
      name,
      defaultValue: defaultValue === 'unset' ? undefined : defaultValue,
      meaning,
    }));
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    const documented = documentedSettings().sort(byName);
    expect(documented.length).toBeGreaterThan(20);
    expect(listed.map(({ name, defaultValue }) => ({ name: name!, defaultValue })).sort(byName)).toEqual(documented);
    for (const setting of listed) expect(setting.meaning!.length).toBeGreaterThan(10);
  });

  it('refuses bad settings with one message naming each, without a stack, before touching the data folder', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'trellis-badenv-')), 'data');
    try {
      const run = await runTrellis(['serve'], { TRELLIS_DATA_DIR: dataDir, PORT: 'abc', TRELLIS_HOOK_WORKERS: '0', TRELLIS_SMTP_URL: 'http://mail' });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('Invalid environment:\n  PORT: must be a whole number from 0 to 65535\n');
      expect(run.stderr).toContain('  TRELLIS_HOOK_WORKERS: must be a whole number from 1 to 256\n');
      expect(run.stderr).toContain('  TRELLIS_SMTP_URL: must be a smtp:// or smtps:// URL with a host, not http://');
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(existsSync(dataDir)).toBe(false);
      // Every other command answers the same way, as text or as JSON.
      const list = await runTrellis(['user', 'list'], { TRELLIS_DATA_DIR: dataDir, TRELLIS_DISK_RESERVE_MB: '2' });
      expect(list).toMatchObject({ code: 2, stderr: 'Invalid environment:\n  TRELLIS_DISK_RESERVE_MB: must be a whole number from 16 to 1048576\n' });
      const json = await runTrellis(['key', 'list', '--json'], { TRELLIS_DATA_DIR: dataDir, PORT: '-1' });
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'BAD_CONFIGURATION', message: 'Invalid environment:\n  PORT: must be a whole number from 0 to 65535' } });
    } finally {
      rmSync(dirname(dataDir), { recursive: true, force: true });
    }
  });
});
