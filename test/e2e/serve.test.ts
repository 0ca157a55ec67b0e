import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_ENV } from '../helpers/env.js';
import { spawnServer } from '../helpers/process.js';
import { login, postJson, usingPostgres } from '../helpers/server.js';

const folders: string[] = [];
afterAll(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function freshDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-serve-'));
  folders.push(dir);
  return dir;
}

describe.runIf(!usingPostgres)('trellis serve on an empty embedded data folder', () => {
  it('creates the application in a folder of its own, prints the generated owner password once, and serves', async () => {
    const dataDir = join(freshDataDir(), 'data');
    const env = { TRELLIS_DATA_DIR: dataDir, PORT: '0', TRELLIS_LOG_LEVEL: 'warn', TRELLIS_ADMIN_EMAIL: 'boss@example.com' };
    const first = await spawnServer(env);
    const password = /shown once.*: (\S+)/.exec(first.output())?.[1];
    expect(first.output()).toContain(`Data: ${dataDir} (embedded PostgreSQL)`);
    expect(password).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(await login(first.url, 'boss@example.com', password)).toMatch(/^trs_/);
    expect(existsSync(join(dataDir, 'secret.key'))).toBe(true);
    expect(JSON.parse(readFileSync(join(dataDir, 'trellis.lock'), 'utf8')).url).toBe(first.url);
    // Other accounts of the machine reach nothing: PGlite writes its files 0666, its folder is 0700.
    const modeOf = (path: string) => statSync(path).mode & 0o777;
    expect([dataDir, join(dataDir, 'pgdata')].map(modeOf)).toEqual([0o700, 0o700]);
    expect([join(dataDir, 'secret.key'), join(dataDir, 'trellis.lock')].map(modeOf)).toEqual([0o600, 0o600]);
    expect(await first.stop()).toBe(0);
    expect(existsSync(join(dataDir, 'trellis.lock'))).toBe(false);
    // A folder an earlier version left open to every account is closed at the next start.
    chmodSync(join(dataDir, 'pgdata'), 0o755);

    const second = await spawnServer(env);
    expect(second.output()).not.toContain('shown once');
    expect(await login(second.url, 'boss@example.com', password)).toMatch(/^trs_/);
    expect(modeOf(join(dataDir, 'pgdata'))).toBe(0o700);
    expect(await second.stop()).toBe(0);
  });

  it('refuses to start on a folder that a running server holds', async () => {
    const dataDir = freshDataDir();
    const env = { ...TEST_ENV, TRELLIS_DATA_DIR: dataDir, TRELLIS_LOG_LEVEL: 'warn' };
    const holder = await spawnServer(env);
    // One line saying what to do, no stack: the reason is the machine's, not a fault.
    const refusal = await spawnServer(env).then(
      () => '',
      (error: Error) => error.message,
    );
    expect(refusal).toMatch(/^server exited with 1:\nTrellis could not start: The data folder .+ is in use by process \d+ \(http:\/\/127\.0\.0\.1:\d+\)\. Stop that server, or give this one another folder with TRELLIS_DATA_DIR\.\n$/);
    // The same for a port another program holds.
    const port = new URL(holder.url).port;
    const taken = await spawnServer({ ...env, TRELLIS_DATA_DIR: freshDataDir(), PORT: port }).then(
      () => '',
      (error: Error) => error.message,
    );
    expect(taken).toContain(`Trellis could not start: 127.0.0.1:${port} is already in use by another program. Stop it, or choose another port`);
    expect(taken).not.toMatch(/\n\s+at /);
    // And for an address that is not this machine's.
    const elsewhere = await spawnServer({ ...env, TRELLIS_DATA_DIR: freshDataDir(), HOST: '203.0.113.1' }).then(
      () => '',
      (error: Error) => error.message,
    );
    // After what the first start of its new folder did, the one line.
    expect(elsewhere).toMatch(/^server exited with 1:\n(?:First start: .+\nDatabase created in .+\n)?Trellis could not start: 203\.0\.113\.1 is not an address of this machine\. Set HOST to one of its addresses, 127\.0\.0\.1 or 0\.0\.0\.0\.\n$/);
    expect((await postJson(`${holder.url}/api/auth/login`, { email: TEST_ENV.TRELLIS_ADMIN_EMAIL, password: TEST_ENV.TRELLIS_ADMIN_PASSWORD })).status).toBe(200);
    expect(await holder.stop()).toBe(0);
  });
});

describe('trellis serve configuration', () => {
  it('refuses to start with a message naming each bad variable', async () => {
    await expect(spawnServer({ TRELLIS_DATA_DIR: freshDataDir(), PORT: 'abc', TRELLIS_ADMIN_PASSWORD: 'short' })).rejects.toThrow(
      /PORT[\s\S]*TRELLIS_ADMIN_PASSWORD: must be at least 8 characters/,
    );
  });
});
