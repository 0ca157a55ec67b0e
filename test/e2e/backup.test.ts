import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { readLiveLock } from '../../src/platform/data-dir.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { TEST_ENV } from '../helpers/env.js';
import { connectMcp } from '../helpers/mcp.js';
import { runTrellis } from '../helpers/process.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, usingPostgres, type TestServer } from '../helpers/server.js';

const DESIGNER = { email: 'backup-designer@example.com', password: 'designer-pass' };
const SHOP_TOKEN = 'shop-token-5c1d9e7a';
const KEY_FIELDS = '_id name keyPrefix scopes expiresAt lastUsedAt revokedAt createdAt userId userEmail';

const folders: string[] = [];
afterAll(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A new temporary folder; `name` inside it is a path that does not exist yet. */
function scratch(name?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-backup-'));
  folders.push(dir);
  return name ? join(dir, name) : dir;
}

type Gql = ReturnType<typeof graphqlClient>;

/** Every Orders record's _id, through the server's generated GraphQL. */
async function orderIds(gql: Gql): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let offset = 0; ; offset += 500) {
    const page = (await gqlData(gql, `{ listOrders(limit: 500, offset: ${offset}) { items { _id } } }`)).listOrders.items as { _id: string }[];
    page.forEach((order) => ids.add(order._id));
    if (page.length < 500) return ids;
  }
}

/** Creates Orders records, a few at a time, until `stop()`; `answered` holds each one the server confirmed. */
function startWriters(gql: Gql, writers: number) {
  const answered: string[] = [];
  let running = true;
  const loops = Array.from({ length: writers }, async (_, worker) => {
    for (let i = 0; running; i++) {
      const created = await gqlData(gql, 'mutation($t: String!) { createOrders(data: { title: $t }) { _id } }', { t: `order ${worker}-${i}` });
      answered.push(created.createOrders._id);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });
  return {
    answered,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

describe.skipIf(usingPostgres)('trellis backup and restore of the embedded data folder', () => {
  let server: TestServer;
  let owner: Gql;
  let mcpKey: string;
  let integration: { clientId: string; apiKey: string };

  beforeAll(async () => {
    // No TRELLIS_SECRET: the deployment secret lives in the data folder, and the backup must carry it.
    server = await startTestServer({ TRELLIS_SECRET: '', TRELLIS_WEBHOOK_RATE_LIMIT: '1000' });
    owner = graphqlClient(server.url, await login(server.url));
    await gqlData(owner, 'mutation { createTable(name: "Orders", fields: [{ name: "title", type: "text", required: true }]) { _id } }');
    await gqlData(owner, 'mutation($e: String!, $p: String!) { createUser(email: $e, password: $p, role: "designer") { _id } }', { e: DESIGNER.email, p: DESIGNER.password });
    await gqlData(owner, 'mutation($v: String!) { setEnvironmentVariable(name: "SHOP_TOKEN", value: $v) { name } }', { v: SHOP_TOKEN });
    await gqlData(owner, 'mutation($c: String!) { createHook(name: "shopToken", type: "webHook", content: $c) { _id } }', {
      c: 'async function (body) { return { token: env.SHOP_TOKEN }; }',
    });
    const key = await runTrellis(['key', 'create', '--email', DESIGNER.email, '--scopes', 'config:read,features:write', '--days', '30', '--json'], server.env);
    mcpKey = JSON.parse(key.stdout).apiKey;
    const created = await runTrellis(['integration', 'create', '--name', 'Warehouse', '--json'], server.env);
    integration = JSON.parse(created.stdout);
    const client = await connectMcp(server, mcpKey);
    await client.callTool({ name: 'list_features', arguments: {} });
    await client.close();
  });
  afterAll(async () => server?.close());

  it('restores a backup taken while the server serves writes into a new folder, where a server finds every record, key, user and audit entry', async () => {
    const writers = startWriters(owner, 2);
    while (writers.answered.length < 20) await new Promise((resolve) => setTimeout(resolve, 20));
    const before = {
      orders: [...writers.answered],
      users: (await gqlData(owner, '{ users { _id email name roleId roleName isOwner disabled createdAt } }')).users,
      keys: (await gqlData(owner, `{ mcpApiKeys(all: true) { ${KEY_FIELDS} } }`)).mcpApiKeys,
      integrations: (await gqlData(owner, '{ integrationKeys { _id name clientId createdAt } }')).integrationKeys,
      auditEvents: await server.server.services.ctx.db.selectFrom('audit_events').selectAll().orderBy('id').execute(),
      mcpAudit: (await server.server.services.ctx.db.selectFrom('mcp_audit_logs').select('id').execute()).map((row) => String(row.id)),
    };
    const file = join(scratch(), 'trellis.backup');
    const backup = await runTrellis(['backup', file, '--json'], server.env);
    const answeredDuringBackup = writers.answered.length - before.orders.length;
    await writers.stop();
    expect(backup.code, backup.stderr).toBe(0);
    expect(answeredDuringBackup).toBeGreaterThan(0);
    const written = JSON.parse(backup.stdout);
    expect(written).toMatchObject({ file, bytes: statSync(file).size, manifest: { format: 'trellis-backup', secret: 'included', application: { name: 'Test app' } } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const sourceOrders = await orderIds(owner);

    const restoredDir = scratch('restored');
    const restore = await runTrellis(['restore', file], { ...server.env, TRELLIS_DATA_DIR: restoredDir });
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stdout).toContain(`Restored 'Test app'`);
    expect(restore.stdout).toContain(`into ${restoredDir}`);

    const restored: RunningServer = await startServer(loadConfig({ ...server.env, TRELLIS_DATA_DIR: restoredDir }));
    try {
      const restoredOwner = graphqlClient(restored.url, await login(restored.url));
      const orders = await orderIds(restoredOwner);
      expect(before.orders.filter((id) => !orders.has(id))).toEqual([]);
      expect([...orders].filter((id) => !sourceOrders.has(id))).toEqual([]);

      expect((await gqlData(restoredOwner, '{ users { _id email name roleId roleName isOwner disabled createdAt } }')).users).toEqual(before.users);
      expect((await gqlData(restoredOwner, `{ mcpApiKeys(all: true) { ${KEY_FIELDS} } }`)).mcpApiKeys).toEqual(before.keys);
      expect((await gqlData(restoredOwner, '{ integrationKeys { _id name clientId createdAt } }')).integrationKeys).toEqual(before.integrations);
      const auditEvents = await restored.services.ctx.db.selectFrom('audit_events').selectAll().where('id', '<=', before.auditEvents.at(-1)!.id).orderBy('id').execute();
      expect(auditEvents).toEqual(before.auditEvents);
      const mcpAudit = (await restored.services.ctx.db.selectFrom('mcp_audit_logs').select('id').execute()).map((row) => String(row.id));
      expect(before.mcpAudit.filter((id) => !mcpAudit.includes(id))).toEqual([]);

      expect(await login(restored.url, DESIGNER.email, DESIGNER.password)).toMatch(/^trs_/);
      const client = await connectMcp({ url: restored.url } as TestServer, mcpKey);
      const tools = await client.callTool({ name: 'list_features', arguments: {} });
      await client.close();
      expect(tools.isError).toBeFalsy();
      const token = await postJson(`${restored.url}/api/auth/token`, integration);
      expect(token.status).toBe(200);
      const webhook = await postJson(`${restored.url}/api/webhook/shopToken`, {});
      expect(webhook.body).toEqual({ token: SHOP_TOKEN });
    } finally {
      await restored.close();
    }
  });

  it('backs up a folder that no server holds, and lets the folder go', async () => {
    const idle = scratch('idle');
    cpSync(inject('pgliteTemplate'), idle, { recursive: true });
    const file = join(scratch(), 'idle.backup');
    const run = await runTrellis(['backup', file], { ...TEST_ENV, TRELLIS_DATA_DIR: idle });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`to ${file}`);
    expect(run.stdout).toContain('The deployment secret is TRELLIS_SECRET, which the file does not hold');
    expect(readdirSync(idle)).toEqual(['pgdata']);
  });

  it('restores over a folder that holds data only with --force, replacing its data and secret', async () => {
    const file = join(scratch(), 'served.backup');
    expect((await runTrellis(['backup', file], server.env)).code).toBe(0);
    const occupied = scratch('occupied');
    cpSync(inject('pgliteTemplate'), occupied, { recursive: true });
    writeFileSync(join(occupied, 'secret.key'), 'an-older-secret-0123456789abcdef0123456789');
    const env = { ...server.env, TRELLIS_DATA_DIR: occupied };

    const refused = await runTrellis(['restore', file], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Error: ${occupied} is not empty (pgdata, secret.key): restore into a new or empty folder, or pass --force`);
    expect(readFileSync(join(occupied, 'secret.key'), 'utf8')).toBe('an-older-secret-0123456789abcdef0123456789');

    const forced = await runTrellis(['restore', file, '--force'], env);
    expect(forced.code, forced.stderr).toBe(0);
    expect(readdirSync(occupied).sort()).toEqual(['pgdata', 'secret.key']);
    expect(readFileSync(join(occupied, 'secret.key'), 'utf8')).toBe(readFileSync(join(server.config.dataDir, 'secret.key'), 'utf8'));
    const users = JSON.parse((await runTrellis(['user', 'list', '--json'], env)).stdout);
    expect(users.map((user: { email: string }) => user.email)).toContain(DESIGNER.email);
  });

  it('never restores into the folder a running server holds, even with --force', async () => {
    const file = join(scratch(), 'held.backup');
    expect((await runTrellis(['backup', file], server.env)).code).toBe(0);
    const run = await runTrellis(['restore', file, '--force'], server.env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Error: ${server.config.dataDir} is in use by the Trellis server process ${process.pid} (${server.url}): stop it`);
  });

  it('refuses to replace an existing file unless --force', async () => {
    const file = join(scratch(), 'existing.backup');
    writeFileSync(file, 'keep me');
    const run = await runTrellis(['backup', file], server.env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Error: ${file} already exists: choose another file, or pass --force to replace it`);
    expect(readFileSync(file, 'utf8')).toBe('keep me');
    expect((await runTrellis(['backup', file, '--force'], server.env)).code).toBe(0);
    expect(readFileSync(file).subarray(0, 15).toString()).toBe('TRELLIS-BACKUP\n');
  });

  describe('refuses a target inside a data folder, even with --force, and the server and the CLI still agree on every write', () => {
    const dataDir = () => server.config.dataDir;
    /** A scratch folder holding a link named `link` to `target`. */
    const linkTo = (target: string) => {
      const link = join(scratch(), 'link');
      symlinkSync(target, link);
      return link;
    };
    const otherDataFolder = () => {
      const dir = scratch('other-data');
      cpSync(inject('pgliteTemplate'), dir, { recursive: true });
      return dir;
    };
    const folderWith = (entry: string) => {
      const dir = scratch();
      writeFileSync(join(dir, entry), '');
      return dir;
    };
    const inside = (dir: string) => `inside the data folder ${dir}: write the backup outside every data folder`;
    const cases: [string, () => string, (target: string) => string][] = [
      ['the live lock', () => join(dataDir(), 'trellis.lock'), () => inside(dataDir())],
      ['a new file in the data folder', () => join(dataDir(), 'trellis.backup'), () => inside(dataDir())],
      ['a file of the database', () => join(dataDir(), 'pgdata', 'PG_VERSION'), () => inside(dataDir())],
      ['a new file deep in the database folder', () => join(dataDir(), 'pgdata', 'base', 'new', 'file'), () => inside(dataDir())],
      ['the data folder itself', () => dataDir(), () => inside(dataDir())],
      ['a path through a link to the data folder', () => join(linkTo(dataDir()), 'trellis.backup'), () => inside(dataDir())],
      ['a link to the live lock', () => linkTo(join(dataDir(), 'trellis.lock')), () => inside(dataDir())],
      ['a file in another data folder', () => join(otherDataFolder(), 'trellis.backup'), (target) => inside(dirname(target))],
      ['a lock file of another folder', () => join(folderWith('trellis.lock'), 'trellis.lock'), (target) => inside(dirname(target))],
      ['a file in a PostgreSQL data directory', () => join(folderWith('PG_VERSION'), 'base.backup'), (target) => inside(dirname(target))],
      ['a folder', () => scratch(), () => 'a folder: name the file to write'],
    ];
    it.each(cases)('%s', async (_case, targetOf, reason) => {
      const lockBefore = readFileSync(join(dataDir(), 'trellis.lock'), 'utf8');
      const target = targetOf();
      const run = await runTrellis(['backup', target, '--force', '--json'], server.env);
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout).error).toEqual({
        code: 'BAD_INPUT',
        message: expect.stringMatching(new RegExp(`^${escape(target)} is ${escape(reason(target))}`)),
      });
      expect(readFileSync(join(dataDir(), 'trellis.lock'), 'utf8')).toBe(lockBefore);
    });

    it('leaves the lock with the server: a write through either side is seen by the other', async () => {
      expect(readLiveLock(dataDir())).toMatchObject({ url: server.url, pid: process.pid });
      await gqlData(owner, 'mutation { createUser(email: "after-refusal-1@example.com", password: "after-refusal-1", role: "viewer") { _id } }');
      const listed = await runTrellis(['user', 'list', '--json'], server.env);
      expect(JSON.parse(listed.stdout).map((user: { email: string }) => user.email)).toContain('after-refusal-1@example.com');
      const created = await runTrellis(['user', 'create', '--email', 'after-refusal-2@example.com', '--password', 'after-refusal-2', '--json'], server.env);
      expect(created.code, created.stdout).toBe(0);
      const users = (await gqlData(owner, '{ users { email } }')).users.map((user: { email: string }) => user.email);
      expect(users).toEqual(expect.arrayContaining(['after-refusal-1@example.com', 'after-refusal-2@example.com']));
      expect(await login(server.url, 'after-refusal-2@example.com', 'after-refusal-2')).toMatch(/^trs_/);
    });
  });

  describe('refuses a file that is not a Trellis backup, and creates nothing', () => {
    let good: Buffer;
    beforeAll(async () => {
      const file = join(scratch(), 'good.backup');
      expect((await runTrellis(['backup', file], server.env)).code).toBe(0);
      good = readFileSync(file);
    });

    const cases: [string, () => Buffer, string][] = [
      ['a text file', () => Buffer.from('hello\n'), 'is not a Trellis backup: it does not start with the TRELLIS-BACKUP header'],
      ['a gzip archive', () => gzipSync(Buffer.from('not a data folder')), 'is not a Trellis backup'],
      ['an empty file', () => Buffer.alloc(0), 'is not a Trellis backup'],
      ['a header without its manifest', () => Buffer.from('TRELLIS-BACKUP\n{"hello":1}\n'), 'is not a Trellis backup'],
      ['a truncated backup', () => good.subarray(0, good.length - 1000), 'is a damaged Trellis backup: it holds'],
      ['a backup with one byte changed', () => flipLastByte(good), 'is a damaged Trellis backup: its data does not match the SHA-256 it recorded'],
    ];
    it.each(cases)('%s', async (_case, content, message) => {
      const file = join(scratch(), 'candidate');
      writeFileSync(file, content());
      const target = scratch('target');
      const run = await runTrellis(['restore', file], { ...server.env, TRELLIS_DATA_DIR: target });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`Error: ${file} ${message}`);
      expect(existsSync(target)).toBe(false);
    });

    it('names a file that cannot be read', async () => {
      const missing = join(scratch(), 'missing.backup');
      const run = await runTrellis(['restore', missing, '--json'], { ...server.env, TRELLIS_DATA_DIR: scratch('target') });
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout)).toEqual({ error: { code: 'BAD_INPUT', message: `Cannot read ${missing}: there is no such file` } });
    });
  });
});

describe('trellis backup and restore on PostgreSQL', () => {
  it.each([
    [['backup', 'trellis.backup'], 'back it up with pg_dump'],
    [['restore', 'trellis.backup'], 'restore a pg_dump file with pg_restore into a new, empty database'],
  ])('trellis %j points to the PostgreSQL tools and touches nothing', async (args, message) => {
    const cwd = scratch();
    const run = await runTrellis([args[0]!, join(cwd, args[1]!)], { ...TEST_ENV, TRELLIS_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/trellis' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Error: Trellis runs on a PostgreSQL server (TRELLIS_DATABASE_URL): ${message}`);
    expect(readdirSync(cwd)).toEqual([]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function flipLastByte(bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  copy[copy.length - 1] = copy[copy.length - 1]! ^ 0xff;
  return copy;
}
