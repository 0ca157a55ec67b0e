import { spawn } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { readLiveLock } from '../../src/platform/data-dir.js';
import { openServices } from '../../src/server.js';
import { OWNER } from '../helpers/env.js';
import { TRELLIS_BIN, runTrellis, spawnServer, spawnTrellis } from '../helpers/process.js';
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
    // The binary itself, as a person runs it: another process, which reaches the folder only through the server.
    const run = await spawnTrellis(['key', 'create', '--email', DESIGNER, '--scopes', 'config:read', '--days', '1', '--json'], server.env);
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
    const listed = (await gqlData(ownerGql, '{ integrationKeys { _id name clientId roleId createdAt } }')).integrationKeys;
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
    const run = await spawnTrellis(['--version'], server.env);
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

  it('says within 5 s that the server holding the folder does not answer, or cannot be reached', async () => {
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

describe.skipIf(usingPostgres)('CLI trust in the lock file of a data folder', () => {
  // Stands for a server of another user: it records whatever a CLI sends it.
  const received: string[] = [];
  const listener = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push(`${request.url} ${request.headers['x-trellis-cli-token']} ${body}`);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"result":[]}');
    });
  });
  let listenerUrl: string;
  const folders: string[] = [];

  beforeAll(async () => {
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    folders.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
    await new Promise((resolve) => listener.close(resolve));
  });

  /** A folder of this user (0700) whose lock (0600) names `url` for a live process (this one). */
  function lockedFolder(url = listenerUrl): string {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-cli-lock-'));
    folders.push(dir);
    writeFileSync(join(dir, 'trellis.lock'), JSON.stringify({ pid: process.pid, url, token: 'the-lock-token' }), { mode: 0o600 });
    return dir;
  }
  const createUser = (dir: string) =>
    runTrellis(['user', 'create', '--email', 'lock-victim@example.com', '--password', 'operator-secret-1'], { ...server.env, TRELLIS_DATA_DIR: dir });

  it('sends the command to the server named by a lock of this user that others cannot write', async () => {
    received.length = 0;
    const run = await runTrellis(['user', 'list', '--json'], { ...server.env, TRELLIS_DATA_DIR: lockedFolder() });
    expect(run.code, run.stderr).toBe(0);
    expect(received).toEqual([expect.stringMatching(/^\/api\/internal\/cli the-lock-token /)]);
  });

  const UID = process.getuid!();
  const spoiled: [string, (dir: string) => void, string][] = [
    ['the folder belongs to another user', (dir) => chownSync(dir, 65534, 65534), `the folder belongs to uid 65534, not to you (uid ${UID}) or root`],
    ['the lock file belongs to another user', (dir) => chownSync(join(dir, 'trellis.lock'), 65534, 65534), `the lock file belongs to uid 65534, not to you (uid ${UID}) or root`],
    ['other users may write in the folder', (dir) => chmodSync(dir, 0o702), 'other users may write in the folder (mode 0702)'],
    ['the group may write in the folder', (dir) => chmodSync(dir, 0o770), 'other users may write in the folder (mode 0770)'],
    ['other users may write the lock file', (dir) => chmodSync(join(dir, 'trellis.lock'), 0o602), 'other users may write the lock file (mode 0602)'],
    [
      'the lock file is a symbolic link',
      (dir) => {
        const elsewhere = join(mkdtempSync(join(tmpdir(), 'trellis-cli-lock-')), 'lock');
        folders.push(dirname(elsewhere));
        writeFileSync(elsewhere, readFileSync(join(dir, 'trellis.lock')), { mode: 0o600 });
        rmSync(join(dir, 'trellis.lock'));
        symlinkSync(elsewhere, join(dir, 'trellis.lock'));
      },
      'the lock file is not a regular file',
    ],
    ['the lock names an address of another machine', (dir) => writeLock(dir, 'http://192.0.2.10:3000'), 'it names http://192.0.2.10:3000, not a loopback address of this machine'],
    ['the lock names a DNS name', (dir) => writeLock(dir, listenerUrl.replace('127.0.0.1', '127.0.0.1.nip.io')), 'not a loopback address of this machine'],
    ['the lock names another scheme', (dir) => writeLock(dir, listenerUrl.replace('http:', 'ftp:')), 'not a loopback address of this machine'],
  ];
  it.each(spoiled)('refuses in one line, sending nothing, when %s', async (_case, spoil, reason) => {
    received.length = 0;
    const dir = lockedFolder();
    spoil(dir);
    const run = await createUser(dir);
    expect(run.code).toBe(1);
    expect(run.stderr.startsWith(`Error: Refusing the lock file of ${dir}: `)).toBe(true);
    expect(run.stderr).toContain(reason);
    expect(run.stderr.endsWith(`. ${LOCK_ADVICE}\n`)).toBe(true);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stdout).toBe('');
    expect(received).toEqual([]);
  });

  it('refuses a backup through a lock it does not trust, and writes no file', async () => {
    received.length = 0;
    const dir = lockedFolder();
    chmodSync(dir, 0o777);
    const file = join(dir, '..', `${dir.split('/').at(-1)}.backup`);
    const run = await runTrellis(['backup', file, '--json'], { ...server.env, TRELLIS_DATA_DIR: dir });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).error.message).toContain(`Refusing the lock file of ${dir}: other users may write in the folder (mode 0777)`);
    expect(received).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });
});

/** The advice after each refusal of a lock. */
const LOCK_ADVICE =
  'A server of another user could read what the command sends (passwords, the lock token): check who holds this folder, or point TRELLIS_DATA_DIR at a folder only you can write';

function writeLock(dir: string, url: string): void {
  writeFileSync(join(dir, 'trellis.lock'), JSON.stringify({ pid: process.pid, url, token: 'the-lock-token' }), { mode: 0o600 });
}

describe('trellis user create without the password on its command line', () => {
  const USER_FIELDS = '{ users { email roleName } }';

  it('reads the password from standard input with --password-stdin', async () => {
    const run = await runTrellis(['user', 'create', '--email', 'stdin-user@example.com', '--password-stdin', '--role', 'designer', '--json'], server.env, 'stdin-password-1\n');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ email: 'stdin-user@example.com', roleName: 'designer' });
    expect(await login(server.url, 'stdin-user@example.com', 'stdin-password-1')).toMatch(/^trs_/);
  });

  it('takes the first line of standard input, without its line break, and refuses an empty one', async () => {
    const run = await runTrellis(['user', 'create', '--email', 'crlf-user@example.com', '--password-stdin'], server.env, 'crlf-password-1\r\nignored\n');
    expect(run.code, run.stderr).toBe(0);
    expect(await login(server.url, 'crlf-user@example.com', 'crlf-password-1')).toMatch(/^trs_/);
    const empty = await runTrellis(['user', 'create', '--email', 'empty-user@example.com', '--password-stdin', '--json'], server.env, '\n');
    expect(empty.code).toBe(1);
    expect(JSON.parse(empty.stdout)).toEqual({ error: { code: 'BAD_USAGE', message: '--password-stdin: standard input holds no password (send it as its first line)' } });
  });

  it.each([
    ['neither --password nor --password-stdin, without a terminal', ['--email', 'nopass@example.com'], undefined, 'a password is required: send it on standard input with --password-stdin, or run the command in a terminal to be asked for it'],
    ['both --password and --password-stdin', ['--email', 'both@example.com', '--password', 'x-password-1', '--password-stdin'], 'y-password-1\n', 'give the password either with --password or with --password-stdin, not both'],
  ])('refuses %s, creating nobody', async (_case, args, input, message) => {
    const run = await runTrellis(['user', 'create', ...args, '--json'], server.env, input);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({ error: { code: 'BAD_USAGE', message } });
    const emails = (await gqlData(ownerGql, USER_FIELDS)).users.map((user: { email: string }) => user.email);
    expect(emails).not.toContain(args[1]);
  });

  it('keeps --password working', async () => {
    const run = await runTrellis(['user', 'create', '--email', 'argv-user@example.com', '--password', 'argv-password-1'], server.env);
    expect(run.code, run.stderr).toBe(0);
    expect(await login(server.url, 'argv-user@example.com', 'argv-password-1')).toMatch(/^trs_/);
  });

  it('asks for the password twice in a terminal, without echoing it', async () => {
    const { output, code } = await inTerminal(['user', 'create', '--email', 'tty-user@example.com', '--json'], server.env, ['tty-password-1', 'tty-password-1']);
    expect(code, output).toBe(0);
    expect(output).toContain('Password: ');
    expect(output).toContain('Repeat the password: ');
    expect(output).not.toContain('tty-password-1');
    expect(await login(server.url, 'tty-user@example.com', 'tty-password-1')).toMatch(/^trs_/);
  });

  it('refuses in a terminal when the two passwords differ', async () => {
    const { output, code } = await inTerminal(['user', 'create', '--email', 'tty-typo@example.com'], server.env, ['tty-password-1', 'tty-pasword-1']);
    expect(code).toBe(1);
    expect(output).toContain('Error: the two passwords differ; nothing was created');
    expect(output).not.toContain('tty-pas');
  });
});

/**
 * Runs the CLI in a pseudo-terminal (util-linux `script`) and types each answer once the CLI asks
 * for it; resolves with everything the terminal showed and the exit code.
 */
function inTerminal(args: string[], env: Record<string, string>, answers: string[]): Promise<{ output: string; code: number | null }> {
  const command = [process.execPath, TRELLIS_BIN, ...args].map((word) => `'${word}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let asked = 0;
  const onOutput = (chunk: Buffer) => {
    output += chunk;
    const prompts = output.match(/Password: |Repeat the password: /g)?.length ?? 0;
    while (asked < prompts && asked < answers.length) child.stdin.write(`${answers[asked++]}\r`);
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  return new Promise((resolve) => child.once('exit', (code) => {
    child.stdin.end();
    resolve({ output, code });
  }));
}

// The commands run as processes here: whatever they print, from any module, is read.
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
      const cliKey = await spawnTrellis(['key', 'create', '--email', OWNER.email, '--scopes', 'config:read', '--days', '5', '--json'], env);
      const cliIntegration = await spawnTrellis(['integration', 'create', '--name', 'Logged via CLI', '--json'], env);
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

  it('never prints a password given to trellis user create, on its standard input or its command line', async () => {
    const folder = usingPostgres ? undefined : freeDataFolder();
    const env = { ...(folder?.env ?? server.env), TRELLIS_LOG_LEVEL: 'debug', PORT: '0' };
    const child = await spawnServer(env);
    try {
      const passwords = ['logged-stdin-password', 'logged-argv-password', 'short'];
      const runs = [
        await spawnTrellis(['user', 'create', '--email', 'logged-stdin@example.com', '--password-stdin'], env, `${passwords[0]}\n`),
        await spawnTrellis(['user', 'create', '--email', 'logged-argv@example.com', '--password', passwords[1]!], env),
        await spawnTrellis(['user', 'create', '--email', 'logged-short@example.com', '--password-stdin', '--json'], env, `${passwords[2]}\n`),
      ];
      expect(runs.map((run) => run.code)).toEqual([0, 0, 1]);
      expect(await child.stop()).toBe(0);
      const output = [child.output(), ...runs.flatMap((run) => [run.stdout, run.stderr])].join('\n');
      // On the embedded folder the commands went through the server, whose log is checked too.
      if (!usingPostgres) expect(child.output()).toContain('/api/internal/cli');
      for (const password of passwords) expect(output).not.toContain(password);
    } finally {
      if (child.child.exitCode === null) await child.stop();
      if (folder) rmSync(folder.dir, { recursive: true, force: true });
    }
  });
});
