import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OWNER, TEST_ENV } from '../helpers/env.js';
import { TRELLIS_BIN, spawnServer } from '../helpers/process.js';
import { postJson } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * What `trellis serve` prints: readable lines when standard output is a terminal (or with
 * TRELLIS_LOG_FORMAT=pretty), where answers without a failure stay at debug level; JSON lines
 * otherwise; and on a new data folder, what the first start is doing before it listens.
 */
const folders: string[] = [];
afterAll(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function freshDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-output-'));
  folders.push(dir);
  return join(dir, 'data');
}

// eslint-disable-next-line no-control-regex -- the escape that starts a terminal colour
const ANSI = /\u001b\[[0-9;]*m/g;

interface TerminalServer {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** Runs `trellis serve` in a pseudo-terminal (util-linux `script`), as `npm start` in a terminal does. */
async function serveInTerminal(env: Record<string, string>): Promise<TerminalServer> {
  const command = [process.execPath, TRELLIS_BIN, 'serve'].map((word) => `'${word}'`).join(' ');
  const child = spawn('script', ['-qfc', command, '/dev/null'], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await waitFor('the server to listen', () => /listening on (http:\/\/\S+)/.exec(output.replace(ANSI, ''))?.[1], 60_000);
  return {
    url,
    output: () => output.replace(ANSI, '').replaceAll('\r\n', '\n'),
    // The server itself, by the pid its lock file names: `script` ends with it.
    stop: async () => {
      process.kill(JSON.parse(readFileSync(join(env.TRELLIS_DATA_DIR!, 'trellis.lock'), 'utf8')).pid, 'SIGTERM');
      await exited;
    },
  };
}

/** A failed request (404) and a successful one (a sign-in). */
async function twoRequests(url: string): Promise<void> {
  expect((await fetch(`${url}/no-such-page`)).status).toBe(404);
  expect((await postJson(`${url}/api/auth/login`, { email: OWNER.email, password: OWNER.password })).status).toBe(200);
}

const HUMAN_FAILURE = /^\d\d:\d\d:\d\d INFO {2}GET \/no-such-page 404 [\d.]+ ms reqId=\S+$/m;

describe('trellis serve in a terminal', () => {
  it('prints readable lines: a failed answer at info, a successful one not at all, no JSON', async () => {
    const server = await serveInTerminal({ ...TEST_ENV, TRELLIS_LOG_LEVEL: 'info', TRELLIS_DATA_DIR: freshDataDir() });
    try {
      await twoRequests(server.url);
      await waitFor('the line of the failed request', () => HUMAN_FAILURE.test(server.output()));
    } finally {
      await server.stop();
    }
    const output = server.output();
    expect(output).not.toContain('/api/auth/login');
    expect(output).not.toContain('{"level"');
    expect(output).toContain('Trellis is listening on');
  });

  it('prints JSON lines with TRELLIS_LOG_FORMAT=json, every answer at info', async () => {
    const server = await serveInTerminal({ ...TEST_ENV, TRELLIS_LOG_LEVEL: 'info', TRELLIS_LOG_FORMAT: 'json', TRELLIS_DATA_DIR: freshDataDir() });
    try {
      await twoRequests(server.url);
      await waitFor('the line of the sign-in', () => server.output().includes('"path":"/api/auth/login"'));
    } finally {
      await server.stop();
    }
    expect(server.output()).toMatch(/^\{"level":30,.*"msg":"request answered"/m);
  });
});

describe('trellis serve without a terminal', () => {
  it('prints JSON lines, every answer at info', async () => {
    const server = await spawnServer({ ...TEST_ENV, TRELLIS_LOG_LEVEL: 'info', TRELLIS_DATA_DIR: freshDataDir() });
    try {
      await twoRequests(server.url);
      const lines = await waitFor('both request lines', () => {
        const answered = server
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line))
          .filter((entry) => entry.msg === 'request answered');
        return answered.length >= 2 ? answered : undefined;
      });
      expect(lines.map((line: { path: string; status: number; level: number }) => [line.path, line.status, line.level])).toEqual([
        ['/no-such-page', 404, 30],
        ['/api/auth/login', 200, 30],
      ]);
    } finally {
      await server.stop();
    }
  });

  it('prints readable lines with TRELLIS_LOG_FORMAT=pretty', async () => {
    const server = await spawnServer({ ...TEST_ENV, TRELLIS_LOG_LEVEL: 'info', TRELLIS_LOG_FORMAT: 'pretty', TRELLIS_DATA_DIR: freshDataDir() });
    try {
      await twoRequests(server.url);
      await waitFor('the line of the failed request', () => HUMAN_FAILURE.test(server.output()));
    } finally {
      await server.stop();
    }
    // No terminal: no colours.
    expect(server.output()).not.toContain('\u001b[');
  });

  it('tells what a first start on a new data folder does, before it listens', async () => {
    const dataDir = freshDataDir();
    const server = await spawnServer({ ...TEST_ENV, TRELLIS_LOG_LEVEL: 'warn', TRELLIS_DATA_DIR: dataDir });
    await server.stop();
    const lines = server.output().split('\n');
    const listening = lines.findIndex((line) => line.startsWith('Trellis is listening on'));
    expect(lines.indexOf(`First start: creating the database in ${dataDir}…`)).toBeGreaterThanOrEqual(0);
    expect(lines.indexOf(`First start: creating the database in ${dataDir}…`)).toBeLessThan(listening);
    expect(lines.findIndex((line) => /^Database created in \d+\.\d s$/.test(line))).toBeLessThan(listening);

    // The next start of the same folder has nothing to tell.
    const again = await spawnServer({ ...TEST_ENV, TRELLIS_LOG_LEVEL: 'warn', TRELLIS_DATA_DIR: dataDir });
    await again.stop();
    expect(again.output()).not.toContain('First start');
  });
});
