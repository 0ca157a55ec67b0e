// Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against a fresh
// Trellis server and compares every check with conformance-baseline.json. The suite's client
// sends no credentials, so it talks to a loopback proxy that adds `Authorization: Bearer <key>`
// and forwards everything else, Host and Origin included, untouched.
//
//   node scripts/conformance.mjs [--verbose]
//
// Exit code 0 when every check matches the baseline, 1 otherwise (a new failure, a baseline
// failure that now passes, a check or scenario the baseline does not know).
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { request as httpRequest, createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { URL, fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const TRELLIS_BIN = join(root, 'bin', 'trellis.mjs');
const SUITE_BIN = join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const BASELINE_FILE = join(root, 'conformance-baseline.json');
const SCENARIO_TIMEOUT_MS = 60_000;
const OWNER = { email: 'conformance@example.com', password: 'conformance-password' };
const verbose = process.argv.includes('--verbose');

const started = Date.now();
const baseline = JSON.parse(readFileSync(BASELINE_FILE, 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'trellis-conformance-'));
const serverEnv = {
  PORT: '0',
  HOST: '127.0.0.1',
  TRELLIS_DATA_DIR: join(work, 'data'),
  TRELLIS_ADMIN_EMAIL: OWNER.email,
  TRELLIS_ADMIN_PASSWORD: OWNER.password,
  TRELLIS_LOG_LEVEL: 'warn',
  TRELLIS_DATABASE_URL: '',
  TRELLIS_PUBLIC_URL: '',
};

let server;
let proxy;
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
process.once('SIGTERM', () => void cleanup().then(() => process.exit(143)));
try {
  process.exitCode = await run();
} catch (error) {
  console.error(`conformance: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}

async function run() {
  const scenarios = await listServerScenarios();
  const unknown = scenarios.filter((name) => !(name in baseline.scenarios) && !(name in baseline.notApplicable));
  const applicable = Object.keys(baseline.scenarios).filter((name) => scenarios.includes(name));
  server = startTrellis();
  const serverUrl = await server.url;
  const apiKey = await createOwnerKey(await allScopes());
  proxy = await startBearerProxy(new URL(serverUrl), apiKey);
  const mcpUrl = `http://127.0.0.1:${proxy.address().port}/api/mcp`;

  const results = await Promise.all(applicable.map((scenario) => runScenario(scenario, mcpUrl)));
  const differences = [
    ...unknown.map((name) => `${name}: scenario not in the baseline (add it to "scenarios" or "notApplicable" with a reason)`),
    ...Object.keys({ ...baseline.scenarios, ...baseline.notApplicable })
      .filter((name) => !scenarios.includes(name))
      .map((name) => `${name}: in the baseline but this suite version has no such scenario`),
  ];
  const counts = { passed: 0, failed: 0, expectedFailures: 0 };
  for (const { scenario, checks } of results) differences.push(...compareScenario(scenario, checks, counts));

  for (const line of differences) console.log(`  ✗ ${line}`);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    `conformance: ${applicable.length} scenarios run, ${Object.keys(baseline.notApplicable).length} not applicable; ` +
      `${counts.passed} checks passed, ${counts.failed} failed (${counts.expectedFailures} expected by the baseline); ` +
      `${differences.length} differences from the baseline; ${seconds}s`,
  );
  if (differences.length > 0) {
    console.log('conformance: results differ from conformance-baseline.json: fix the server, or update the baseline (with a reason for each expected failure).');
    return 1;
  }
  return 0;
}

/** Compares a scenario's checks with its baseline entry; returns one line per difference. */
function compareScenario(scenario, checks, counts) {
  const expected = baseline.scenarios[scenario];
  const differences = [];
  const seen = new Set();
  for (const check of checks) {
    if (check.status === 'INFO') continue;
    const key = `${scenario}/${check.id}`;
    seen.add(check.id);
    const entry = expected[check.id];
    const want = entry?.expect ?? 'SUCCESS';
    if (check.status === 'SUCCESS') counts.passed += 1;
    else counts.failed += 1;
    if (check.status !== 'SUCCESS' && want === check.status) counts.expectedFailures += 1;
    if (verbose || check.status !== 'SUCCESS') {
      console.log(`${key}: ${check.status}${check.errorMessage ? ` - ${check.errorMessage}` : ''}`);
      if (verbose && check.details) console.log(`  details: ${JSON.stringify(check.details)}`);
    }
    if (want !== 'SUCCESS' && !entry.reason) differences.push(`${key}: the baseline expects ${want} without a reason: add one`);
    if (check.status === want) continue;
    if (want === 'SUCCESS') differences.push(`${key}: expected SUCCESS, got ${check.status}: ${check.errorMessage ?? check.description}`);
    else differences.push(`${key}: the baseline expects ${want} (${entry.reason}) but it is now ${check.status}: update the baseline`);
  }
  for (const id of Object.keys(expected)) {
    if (!seen.has(id)) differences.push(`${scenario}/${id}: in the baseline but the suite reported no such check`);
  }
  return differences;
}

async function listServerScenarios() {
  const { stdout, stderr } = await runNode([SUITE_BIN, 'list', '--server'], {});
  const names = [...stdout.matchAll(/^\s+- (\S+)$/gm)].map((match) => match[1]);
  if (names.length === 0) throw new Error(`the suite listed no server scenarios:\n${stdout}${stderr}`);
  return names;
}

/** Runs one scenario with the suite's CLI and returns the checks it saved. */
async function runScenario(scenario, url) {
  const outputDir = join(work, 'results', scenario);
  const result = await runNode([SUITE_BIN, 'server', '--url', url, '--scenario', scenario, '--output-dir', outputDir], {}, SCENARIO_TIMEOUT_MS);
  if (verbose) console.log(`--- ${scenario} (exit ${result.code})\n${result.stdout}${result.stderr}`);
  const runDir = (existsSync(outputDir) ? readdirSync(outputDir) : []).find((name) => name.startsWith(`server-${scenario}-`));
  if (!runDir) {
    return { scenario, checks: [{ id: 'run', status: 'FAILURE', errorMessage: `the suite saved no results (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}` }] };
  }
  return { scenario, checks: JSON.parse(readFileSync(join(outputDir, runDir, 'checks.json'), 'utf8')) };
}

/** Spawns `trellis serve`; `url` resolves once it prints where it listens. */
function startTrellis() {
  const child = spawn(process.execPath, [TRELLIS_BIN, 'serve'], { env: { ...process.env, ...serverEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Trellis did not start:\n${output}`)), 60_000);
    const onData = (chunk) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`Trellis exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The scopes an MCP key can hold, read from the source so a new scope is covered too. */
async function allScopes() {
  const bundled = await build({
    entryPoints: [join(root, 'src', 'access', 'permissions.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    logLevel: 'error',
  });
  const module = await import(`data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString('base64')}`);
  return module.SCOPES;
}

async function createOwnerKey(scopes) {
  const args = [TRELLIS_BIN, 'key', 'create', '--email', OWNER.email, '--scopes', scopes.join(','), '--days', '1', '--name', 'conformance', '--json'];
  const result = await runNode(args, serverEnv);
  if (result.code !== 0) throw new Error(`key create failed (exit ${result.code}): ${result.stdout}${result.stderr}`);
  return JSON.parse(result.stdout).apiKey;
}

/** A loopback HTTP proxy that adds the bearer header and streams both ways. */
async function startBearerProxy(target, apiKey) {
  const proxyServer = createServer((incoming, outgoing) => {
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, authorization: `Bearer ${apiKey}` },
      },
      (response) => {
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(outgoing);
      },
    );
    upstream.on('error', (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'text/plain' });
      outgoing.end(`proxy: ${error.message}`);
    });
    incoming.pipe(upstream);
  });
  await new Promise((resolve) => proxyServer.listen(0, '127.0.0.1', resolve));
  return proxyServer;
}

function runNode(args, env, timeoutMs = 60_000) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function cleanup() {
  proxy?.closeAllConnections();
  proxy?.close();
  proxy = undefined;
  const running = server;
  server = undefined;
  await running?.stop();
  rmSync(work, { recursive: true, force: true });
}
