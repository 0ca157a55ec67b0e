import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { randomSecret } from '../../src/platform/crypto.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { OWNER, TEST_ENV } from './env.js';

export const usingPostgres = process.env.TRELLIS_TEST_DATABASE === 'postgres';
const ADMIN_URL = process.env.TRELLIS_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestServer {
  readonly url: string;
  readonly server: RunningServer;
  readonly config: Config;
  /** Environment that points a CLI process at this server's data. */
  readonly env: Record<string, string>;
  /** Stops the server as a crash or a restart would (its data stays); `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a real Trellis server on a free loopback port: on a copy of the embedded template
 * folder, or (TRELLIS_TEST_DATABASE=postgres) on a fresh PostgreSQL database of its own.
 */
export async function startTestServer(extraEnv: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'trellis-test-'));
  const env: Record<string, string> = { ...TEST_ENV, TRELLIS_DATA_DIR: dataDir, ...extraEnv };
  let dropDatabase = async () => {};
  if (usingPostgres && !extraEnv.TRELLIS_DATABASE_URL) {
    const database = await createPostgresDatabase(inject('postgresTemplate'));
    env.TRELLIS_DATABASE_URL = database.url;
    dropDatabase = database.drop;
  } else if (!usingPostgres) {
    cpSync(inject('pgliteTemplate'), dataDir, { recursive: true });
  }
  const config = loadConfig(env);
  let server: RunningServer | null = await startServer(config);
  const url = server.url;
  return {
    url,
    get server() {
      if (!server) throw new Error('The test server is stopped');
      return server;
    },
    config,
    env,
    stop: async () => {
      await server?.close();
      server = null;
    },
    start: async () => {
      server ??= await startServer(loadConfig({ ...env, PORT: new URL(url).port }));
    },
    close: async () => {
      await server?.close();
      server = null;
      await dropDatabase();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Where a spawned server of a test keeps its data: a new PostgreSQL database in the PostgreSQL
 * suite, else a new embedded folder; `cleanups` gets what removes it.
 */
export async function freshDataEnv(cleanups: (() => Promise<void> | void)[], prefix = 'trellis-spawned-'): Promise<Record<string, string>> {
  if (usingPostgres) {
    const database = await createPostgresDatabase();
    cleanups.push(() => database.drop());
    return { TRELLIS_DATABASE_URL: database.url };
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return { TRELLIS_DATA_DIR: dir };
}

/**
 * A new PostgreSQL database on the local server, and a function that drops it: empty, or a copy of
 * `template` (the suite's migrated and bootstrapped one, as test servers on the embedded database
 * start from a copy of its template folder).
 */
export async function createPostgresDatabase(template?: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `trellis_test_${randomSecret(9).toLowerCase().replace(/[^a-z0-9]/g, '')}`;
  await adminQuery(template ? `create database ${name} template ${template}` : `create database ${name}`);
  return {
    url: ADMIN_URL.replace(/\/[^/]*$/, `/${name}`),
    drop: () => dropDatabase(name),
  };
}

/**
 * Drops a test database once its connections have gone. A client that was just ended may still
 * have its backend for a moment: `with (force)` at once would send it a FATAL error on a socket its
 * pool no longer listens to, an uncaught exception in the test process. So it waits for them (up to
 * 3 s) and forces only connections that are still there then (a spawned server killed with SIGKILL).
 */
async function dropDatabase(name: string): Promise<void> {
  const deadline = Date.now() + 3000;
  for (;;) {
    try {
      await adminQuery(`drop database if exists ${name}`);
      return;
    } catch (error) {
      // 55006: the database is being accessed by other users.
      if ((error as { code?: string }).code !== '55006') throw error;
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  await adminQuery(`drop database if exists ${name} with (force)`);
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export interface HttpResult<T = any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  status: number;
  headers: Headers;
  body: T;
}

/** POSTs JSON (or a raw string) and parses the JSON answer. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** Signs in and returns the session token. */
export async function login(baseUrl: string, email: string = OWNER.email, password: string = OWNER.password): Promise<string> {
  const result = await postJson(`${baseUrl}/api/auth/login`, { email, password });
  if (result.status !== 200) throw new Error(`login failed: ${result.status} ${JSON.stringify(result.body)}`);
  return result.body.token;
}

/** A GraphQL client bound to one bearer token. */
export function graphqlClient(baseUrl: string, token: string) {
  return async function gql(query: string, variables: Record<string, unknown> = {}): Promise<HttpResult> {
    return postJson(`${baseUrl}/graphql`, { query, variables }, { authorization: `Bearer ${token}`, accept: GRAPHQL_ACCEPT });
  };
}

/** What GraphQL clients such as Apollo Client 4 send: request errors then answer 400 (GraphQL over HTTP). */
export const GRAPHQL_ACCEPT = 'application/graphql-response+json, application/json;q=0.9';

/** Runs a GraphQL operation that must succeed and returns its data. */
export async function gqlData(gql: ReturnType<typeof graphqlClient>, query: string, variables: Record<string, unknown> = {}) {
  const result = await gql(query, variables);
  if (result.status !== 200 || result.body.errors) {
    throw new Error(`GraphQL failed: ${result.status} ${JSON.stringify(result.body)}`);
  }
  return result.body.data;
}
