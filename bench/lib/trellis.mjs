/* global fetch */
// A Trellis server for benchmarks: `trellis serve` as a child process on a fresh data folder
// (embedded PGlite) or, with BENCH_DATABASE_URL, on a fresh PostgreSQL database.
import { randomBytes } from 'node:crypto';
import { URL, fileURLToPath } from 'node:url';
import pg from 'pg';
import { atCleanup, runNode, startNode, tempFolder } from './processes.mjs';

export const TRELLIS_BIN = fileURLToPath(new URL('../../bin/trellis.mjs', import.meta.url));
export const OWNER_EMAIL = 'bench-owner@example.com';
export const MCP_PROTOCOL_VERSION = '2025-11-25';
/** The PostgreSQL server of the benchmarks that need one: BENCH_DATABASE_URL, else the local default. */
export const POSTGRES_ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** The headers of every MCP request the benchmarks send. */
export function mcpHeaders(apiKey) {
  return {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': MCP_PROTOCOL_VERSION,
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  };
}

/** A JSON-RPC tools/call body. */
export function toolCallBody(name, args = {}, id = 1) {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
}

/**
 * Starts Trellis with the rate limits raised for the bench. `nodeArgs` go before the script
 * (for example `--cpu-prof`); `postgresAdminUrl` puts it on a fresh database of that server
 * (default: BENCH_DATABASE_URL, else the embedded PGlite). Resolves with { url, env, mcpUrl,
 * createMcpKey, createAccessToken, callTool, stop }.
 */
export async function startTrellis({ nodeArgs = [], env: extraEnv = {}, postgresAdminUrl = process.env.BENCH_DATABASE_URL } = {}) {
  const env = {
    PORT: '0',
    HOST: '127.0.0.1',
    TRELLIS_DATA_DIR: tempFolder('data'),
    TRELLIS_ADMIN_EMAIL: OWNER_EMAIL,
    TRELLIS_ADMIN_PASSWORD: `bench-${randomBytes(8).toString('hex')}`,
    TRELLIS_LOG_LEVEL: 'warn',
    TRELLIS_MCP_RATE_LIMIT: '100000000',
    TRELLIS_AUTH_FAILURES_PER_MINUTE: '100000000',
    TRELLIS_WEBHOOK_RATE_LIMIT: '100000000',
    ...(await freshDatabase(postgresAdminUrl)),
    ...extraEnv,
  };
  const server = await startNode([...nodeArgs, TRELLIS_BIN, 'serve'], { env, ready: /listening on (http:\/\/\S+)/, label: 'trellis serve' });
  atCleanup(() => server.stop());
  const url = server.match;
  return {
    url,
    env,
    mcpUrl: `${url}/api/mcp`,
    output: server.output,
    pid: server.child.pid,
    stop: server.stop,
    /** Creates an MCP key for the owner through the CLI (`trellis key create --json`); resolves with the raw key. */
    async createMcpKey(scopes) {
      const args = [TRELLIS_BIN, 'key', 'create', '--email', OWNER_EMAIL, '--scopes', scopes.join(','), '--days', '1', '--name', `bench ${scopes.join(' ')}`, '--json'];
      const { code, stdout, stderr } = await runNode(args, { env });
      if (code !== 0) throw new Error(`trellis key create failed (exit ${code}):\n${stdout}${stderr}`);
      return JSON.parse(stdout).apiKey;
    },
    /**
     * Creates an integration key through the CLI (`trellis integration create --json`, with
     * `--role` when given) and exchanges it at /api/auth/token; resolves with the access token.
     */
    async createAccessToken(name, role) {
      const roleArgs = role ? ['--role', role] : [];
      const { code, stdout, stderr } = await runNode([TRELLIS_BIN, 'integration', 'create', '--name', name, ...roleArgs, '--json'], { env });
      if (code !== 0) throw new Error(`trellis integration create failed (exit ${code}):\n${stdout}${stderr}`);
      const { clientId, apiKey } = JSON.parse(stdout);
      const response = await fetch(`${url}/api/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ clientId, apiKey }) });
      const answer = await response.json();
      if (response.status !== 200 || !answer.access_token) throw new Error(`/api/auth/token answered ${response.status}: ${JSON.stringify(answer)}`);
      return answer.access_token;
    },
    /** Calls one MCP tool with `apiKey`; resolves with the data of its fenced answer, throws on an error. */
    async callTool(apiKey, name, args) {
      const answer = await checkedCall(`${url}/api/mcp`, mcpHeaders(apiKey), toolCallBody(name, args));
      return unfenced(answer.message.result);
    },
  };
}

/** With a PostgreSQL admin URL: creates a database for this run (dropped at cleanup) and names it. */
async function freshDatabase(adminUrl) {
  if (!adminUrl) return {};
  const name = `trellis_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  atCleanup(async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { TRELLIS_DATABASE_URL: url.toString(), TRELLIS_SECRET: randomBytes(32).toString('hex') };
}

/**
 * Sends one request and checks it is a 200 with a JSON-RPC result that is not an error; throws
 * otherwise. Resolves with { body (raw text), message (the parsed JSON-RPC answer) }.
 */
export async function checkedCall(url, headers, body) {
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 500)}`);
  const message = parseRpcAnswer(text, response.headers.get('content-type') ?? '');
  if (!message?.result || message.result.isError) throw new Error(`${url} answered with an error: ${text.slice(0, 500)}`);
  return { body: text, message, contentType: response.headers.get('content-type') };
}

function parseRpcAnswer(text, contentType) {
  if (!contentType.includes('text/event-stream')) return JSON.parse(text);
  const data = text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .join('');
  return JSON.parse(data);
}

/** The data of a tool answer: structuredContent.data (typed, D40); a failure has only its fenced text. */
export function unfenced(result) {
  if (result.isError || !result.structuredContent) throw new Error(`tool call failed: ${result.content?.[0]?.text ?? JSON.stringify(result)}`);
  return result.structuredContent.data;
}
