import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { readLiveLock } from '../../src/platform/data-dir.js';
import { openServices } from '../../src/server.js';
import { OWNER } from '../helpers/env.js';
import { runTrellis, spawnServer } from '../helpers/process.js';
import { gqlData, graphqlClient, login, startTestServer, usingPostgres, type TestServer } from '../helpers/server.js';

const DESIGNER = 'cli-designer@example.com';
const KEY_FIELDS = '_id name keyPrefix scopes expiresAt lastUsedAt revokedAt createdAt userId';

let server: TestServer;
let ownerGql: ReturnType<typeof graphqlClient>;
let designerId: string;

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
  const created = await gqlData(ownerGql, 'mutation($e: String!) { createUser(email: $e, password: "designer-pass", role: "designer") { _id } }', {
    e: DESIGNER,
  });
  designerId = created.createUser._id;
});
afterAll(async () => server?.close());

const db = () => server.server.services.ctx.db;

async function keyCount(): Promise<number> {
  const row = await db().selectFrom('mcp_api_keys').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A copy of the migrated template folder that no server holds (embedded mode only). */
function freeDataFolder(): { env: Record<string, string>; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-cli-'));
  cpSync(inject('pgliteTemplate'), dir, { recursive: true });
  return { env: { ...server.env, TRELLIS_DATA_DIR: dir }, dir };
}

describe(`trellis key create ${usingPostgres ? 'on the PostgreSQL database' : 'through the running server'}`, () => {
  it.skipIf(usingPostgres)('goes through the server that holds the embedded folder, which the CLI could not open itself', async () => {
    expect(readLiveLock(server.config.dataDir)).toMatchObject({ url: server.url, pid: process.pid });
    const run = await runTrellis(['key', 'create', '--email', DESIGNER, '--scopes', 'config:read', '--days', '1', '--json'], server.env);
    expect(run.code).toBe(0);
    expect(readLiveLock(server.config.dataDir)).toMatchObject({ url: server.url, pid: process.pid });
  });

  it('prints with --json the object GraphQL returns, and the key acts as the user with its scopes', async () => {
    const run = await runTrellis(['key', 'create', '--email', DESIGNER, '--scopes', 'config:read, features:write', '--days', '10', '--json'], server.env);
    expect(run.code).toBe(0);
    const created = JSON.parse(run.stdout);
    expect(created.apiKey).toMatch(/^trellis_[A-Za-z0-9_-]{43}$/);
    const designerGql = graphqlClient(server.url, await login(server.url, DESIGNER, 'designer-pass'));
    const listed = (await gqlData(designerGql, `{ mcpApiKeys { ${KEY_FIELDS} } }`)).mcpApiKeys;
    expect(listed).toContainEqual(created.key);
    expect(created.key).toMatchObject({ name: 'cli key', keyPrefix: created.apiKey.slice(0, 12), scopes: ['config:read', 'features:write'] });

    const resolved = await server.server.services.keys.resolveMcpKey(created.apiKey);
    expect(resolved.principal).toMatchObject({ userId: designerId, source: 'mcp', credentialId: created.key._id });
    expect([...resolved.principal.permissions].sort()).toEqual(['config:read', 'features:write']);
    const event = await db().selectFrom('audit_events').selectAll().where('resource_id', '=', created.key._id).executeTakeFirstOrThrow();
    expect(event).toMatchObject({ action: 'mcp_key.create', source: 'cli', actor_id: null });
  });

  it('prints the raw key on its own line, then what it is', async () => {
    const run = await runTrellis(['key', 'create', '--email', DESIGNER, '--scopes', 'config:read', '--days', '365', '--name', 'ci agent'], server.env);
    expect(run.code).toBe(0);
    const [apiKey, description] = run.stdout.trim().split('\n');
    expect(apiKey).toMatch(/^trellis_[A-Za-z0-9_-]{43}$/);
    expect(description).toContain(`MCP API key 'ci agent' for ${DESIGNER}`);
    expect(description).toContain('shown only now');
    await expect(server.server.services.keys.resolveMcpKey(apiKey!)).resolves.toMatchObject({ principal: { userId: designerId } });
  });

  it.each([
    ['an unknown e-mail', ['--email', 'nobody@example.com', '--scopes', 'config:read', '--days', '30'], "User 'nobody@example.com' does not exist"],
    ['an unknown scope', ['--email', DESIGNER, '--scopes', 'config:read,root', '--days', '30'], "unknown scope 'root'; valid scopes are config:read"],
    ['0 days', ['--email', DESIGNER, '--scopes', 'config:read', '--days', '0'], 'days: must be a whole number of days from 1 to 365'],
    ['366 days', ['--email', DESIGNER, '--scopes', 'config:read', '--days', '366'], 'days: must be at most 365 days'],
    ['days that are not a number', ['--email', DESIGNER, '--scopes', 'config:read', '--days', 'soon'], 'days: must be a whole number of days'],
    ['an admin-only scope for a user who is not an admin', ['--email', DESIGNER, '--scopes', 'hooks:write', '--days', '30'], "'hooks:write'"],
  ])('exits with 1 and a clear message for %s, creating nothing', async (_case, args, message) => {
    const before = await keyCount();
    const run = await runTrellis(['key', 'create', ...args], server.env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Error: `);
    expect(run.stderr).toContain(message);
    expect(run.stdout).toBe('');
    expect(await keyCount()).toBe(before);
  });

  it('prints the error as JSON with --json', async () => {
    const run = await runTrellis(['key', 'create', '--email', DESIGNER, '--scopes', 'config:read', '--days', '366', '--json'], server.env);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({ error: { code: 'BAD_INPUT', message: 'days: must be at most 365 days' } });
    // A usage error too: JSON on stdout, no help text.
    const usage = await runTrellis(['key', 'create', '--scopes', 'config:read', '--days', '3', '--json'], server.env);
    expect(usage.code).toBe(1);
    expect(JSON.parse(usage.stdout)).toEqual({ error: { code: 'BAD_USAGE', message: "required option '--email <email>' not specified" } });
    expect(usage.stderr).toBe('');
  });
});

describe(`trellis integration create ${usingPostgres ? 'on the PostgreSQL database' : 'through the running server'}`, () => {
  it('prints a clientId and an apiKey that verify', async () => {
    const run = await runTrellis(['integration', 'create', '--name', 'Shop'], server.env);
    expect(run.code).toBe(0);
    const clientId = /^clientId: (trc_\S+)$/m.exec(run.stdout)?.[1];
    const apiKey = /^apiKey: (trik_\S+)$/m.exec(run.stdout)?.[1];
    expect(clientId).toMatch(/^trc_[A-Za-z0-9_-]{16}$/);
    expect(apiKey).toMatch(/^trik_[A-Za-z0-9_-]{43}$/);
    await expect(server.server.services.integrations.verifyIntegrationCredentials(clientId!, apiKey!)).resolves.toMatchObject({ name: 'Shop' });
  });

  it('prints with --json the object GraphQL returns', async () => {
    const run = await runTrellis(['integration', 'create', '--name', 'Ledger', '--json'], server.env);
    expect(run.code).toBe(0);
    const created = JSON.parse(run.stdout);
    const listed = (await gqlData(ownerGql, '{ integrationKeys { _id name clientId createdAt } }')).integrationKeys;
    expect(listed).toContainEqual(created.integration);
    expect(created).toEqual({ clientId: created.integration.clientId, apiKey: expect.stringMatching(/^trik_/), integration: expect.any(Object) });
  });

  it('exits with 1 and names the clash for a duplicate name', async () => {
    await runTrellis(['integration', 'create', '--name', 'Mailer'], server.env);
    const run = await runTrellis(['integration', 'create', '--name', 'MAILER'], server.env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("Error: An integration key named 'Mailer' already exists");
  });
});

describe.skipIf(usingPostgres)('CLI on an embedded data folder that no server holds', () => {
  let folder: { env: Record<string, string>; dir: string };

  beforeAll(() => {
    folder = freeDataFolder();
  });
  afterAll(() => rmSync(folder.dir, { recursive: true, force: true }));

  /** Opens the folder in this process (after the CLI has let it go) and runs `check`. */
  async function withFolder<T>(check: (services: Awaited<ReturnType<typeof openServices>>['services']) => Promise<T>): Promise<T> {
    const opened = await openServices(loadConfig(folder.env));
    try {
      return await check(opened.services);
    } finally {
      await opened.close();
    }
  }

  it('creates a working key by opening the folder itself, and lets the folder go', async () => {
    const run = await runTrellis(['key', 'create', '--email', OWNER.email, '--scopes', 'config:read,hooks:write', '--days', '1', '--json'], folder.env);
    expect(run.code).toBe(0);
    const created = JSON.parse(run.stdout);
    expect(existsSync(join(folder.dir, 'trellis.lock'))).toBe(false);
    const principal = await withFolder(async (services) => (await services.keys.resolveMcpKey(created.apiKey)).principal);
    expect(principal.label).toBe(OWNER.email);
    expect([...principal.permissions].sort()).toEqual(['config:read', 'hooks:write']);
  });

  it('creates integration credentials that verify', async () => {
    const run = await runTrellis(['integration', 'create', '--name', 'Offline', '--json'], folder.env);
    expect(run.code).toBe(0);
    const created = JSON.parse(run.stdout);
    const integration = await withFolder((services) => services.integrations.verifyIntegrationCredentials(created.clientId, created.apiKey));
    expect(integration.name).toBe('Offline');
  });

  it('exits with 1 and a clear message for bad input', async () => {
    const run = await runTrellis(['key', 'create', '--email', OWNER.email, '--scopes', 'config:read', '--days', '0'], folder.env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Error: days: must be a whole number of days from 1 to 365');
  });
});

describe.skipIf(usingPostgres)('CLI commands that never surprise', () => {
  const folders: string[] = [];
  afterAll(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const emptyFolder = () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-cli-empty-'));
    folders.push(dir);
    return dir;
  };

  it('prints its version', async () => {
    const run = await runTrellis(['--version'], server.env);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')).version);
  });

  it('refuses a command on a folder that holds no Trellis data, naming it, and creates nothing there', async () => {
    const dir = emptyFolder();
    const run = await runTrellis(['key', 'create', '--email', OWNER.email, '--scopes', 'config:read', '--days', '1'], { ...server.env, TRELLIS_DATA_DIR: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Error: ${dir} holds no Trellis data: start the server once with \`trellis serve\``);
    expect(run.stdout).not.toMatch(/trellis_/);
    expect(existsSync(join(dir, 'pgdata'))).toBe(false);
  });

  it('says within 5 s that the server holding the folder does not answer, or cannot be reached', { timeout: 30_000 }, async () => {
    const hung = createServer(() => {});
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const hungUrl = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    try {
      for (const [url, expected] of [
        [hungUrl, 'did not answer within 5 s'],
        ['http://127.0.0.1:1', 'cannot be reached'],
      ] as const) {
        const dir = emptyFolder();
        // A lock of a live process (this one) that names the URL.
        writeFileSync(join(dir, 'trellis.lock'), JSON.stringify({ pid: process.pid, url, token: 'x' }));
        const started = performance.now();
        const run = await runTrellis(['key', 'create', '--email', OWNER.email, '--scopes', 'config:read', '--days', '1'], { ...server.env, TRELLIS_DATA_DIR: dir });
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(expected);
        expect(run.stderr).not.toContain('fetch failed');
        expect(performance.now() - started).toBeLessThan(8000);
      }
    } finally {
      hung.closeAllConnections();
      await new Promise((resolve) => hung.close(resolve));
    }
  });
});

describe('a server process with debug logging', () => {
  it('never prints a raw MCP key or integration apiKey while they are created through GraphQL and the CLI', async () => {
    const folder = usingPostgres ? undefined : freeDataFolder();
    const env = { ...(folder?.env ?? server.env), TRELLIS_LOG_LEVEL: 'debug', PORT: '0' };
    const child = await spawnServer(env);
    try {
      const gql = graphqlClient(child.url, await login(child.url));
      const viaGraphql = (
        await gqlData(gql, 'mutation { createMcpApiKey(name: "logged?", scopes: ["config:read"], expiresInDays: 5) { apiKey } }')
      ).createMcpApiKey.apiKey;
      const integration = (await gqlData(gql, 'mutation { createIntegrationKey(name: "Logged?") { apiKey } }')).createIntegrationKey.apiKey;
      const cliKey = await runTrellis(['key', 'create', '--email', OWNER.email, '--scopes', 'config:read', '--days', '5', '--json'], env);
      const cliIntegration = await runTrellis(['integration', 'create', '--name', 'Logged via CLI', '--json'], env);
      expect([cliKey.code, cliIntegration.code]).toEqual([0, 0]);
      await gql('mutation { createMcpApiKey(name: "bad", scopes: ["root"], expiresInDays: 5) { apiKey } }');

      const secrets = [viaGraphql, integration, JSON.parse(cliKey.stdout).apiKey, JSON.parse(cliIntegration.stdout).apiKey];
      expect(await child.stop()).toBe(0);
      const output = child.output();
      expect(output).toContain('"level":');
      for (const secret of secrets) expect(output).not.toContain(secret.slice(secret.indexOf('_') + 1));
    } finally {
      if (child.child.exitCode === null) await child.stop();
      if (folder) rmSync(folder.dir, { recursive: true, force: true });
    }
  });
});
