import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, cpSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DISK_RESERVE_BYTES, freeBytesOf } from '../../src/platform/db/disk-reserve.js';
import { OWNER, TEST_ENV } from '../helpers/env.js';
import { verifyPGliteIntegrity } from '../helpers/integrity.js';
import { MCP_ACCEPT } from '../helpers/mcp.js';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.js';
import { spawnServer, type SpawnedServer } from '../helpers/process.js';
import { gqlData, graphqlClient, login, postJson, startTestServer, usingPostgres } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Faults of the database under a server that is writing: its PostgreSQL server restarted, or
 * stopped for two seconds, while several clients write through GraphQL and MCP; and the disk of
 * the embedded database's folder filling up.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const UNAVAILABLE_MESSAGE = 'The database is not available right now';
/** What must never reach a client: a stack frame, or a path of the machine. */
const LEAK = /\n\s+at |\bat [\w.<>]+ \(|(?:^|[\s"'(])\/(?:tmp|work|usr|var|root|home|proc)\/|node_modules|\.ts:\d/;
const FEATURE_CODE = (id: string) => `export default function P() { return null; }\n// ${id}\n`;

type Outcome = 'ok' | 'unavailable';

/** One answer of the server, classified: a success or a clean refusal, and the form it took. Anything else throws with what came back. */
interface Answer {
  outcome: Outcome;
  form: 'success' | 'REST error 503' | 'GraphQL errors 503' | 'JSON-RPC error 503' | 'MCP tool error';
}

function assertClean(text: string, what: string): void {
  if (LEAK.test(text)) throw new Error(`${what} leaks a stack or a path: ${text.slice(0, 500)}`);
}

/**
 * A GraphQL answer: 200 without errors, or a 503 with the message: a REST error when the request
 * failed before the operation ran (authentication), GraphQL errors when a resolver lost the database.
 */
function classifyGraphql(status: number, text: string): Answer {
  assertClean(text, 'a GraphQL answer');
  const body = JSON.parse(text) as { errors?: { message: string; extensions?: { code?: string } }[]; error?: { code: string; message: string } };
  if (status === 200 && !body.errors) return { outcome: 'ok', form: 'success' };
  const errors = body.error ? [body.error] : (body.errors ?? []).map((error) => ({ code: error.extensions?.code, message: error.message }));
  if (status === 503 && errors.length > 0 && errors.every((error) => error.code === 'UNAVAILABLE' && error.message.startsWith(UNAVAILABLE_MESSAGE))) {
    return { outcome: 'unavailable', form: body.error ? 'REST error 503' : 'GraphQL errors 503' };
  }
  throw new Error(`GraphQL answered ${status}: ${text.slice(0, 500)}`);
}

/**
 * An MCP tools/call answer: a result, a JSON-RPC error with 503, or an isError result naming
 * UNAVAILABLE (the tool lost the database, and its error's audit entry could be written).
 */
function classifyMcp(status: number, text: string, retryAfter: string | null): Answer {
  assertClean(text, 'an MCP answer');
  const body = JSON.parse(text) as { result?: { isError?: boolean; content: { text: string }[] }; error?: { code: number; message: string } };
  if (status === 200 && body.result && !body.result.isError) return { outcome: 'ok', form: 'success' };
  if (status === 503 && body.error?.code === -32000 && body.error.message.startsWith(UNAVAILABLE_MESSAGE)) {
    if (retryAfter !== '1') throw new Error(`MCP answered 503 with Retry-After ${retryAfter}`);
    return { outcome: 'unavailable', form: 'JSON-RPC error 503' };
  }
  if (status === 200 && body.result?.isError && body.result.content[0]!.text.includes(`UNAVAILABLE: ${UNAVAILABLE_MESSAGE}`)) return { outcome: 'unavailable', form: 'MCP tool error' };
  throw new Error(`MCP answered ${status}: ${text.slice(0, 500)}`);
}

function mcpCall(url: string, apiKey: string, id: number, name: string, args: Record<string, unknown>) {
  return fetch(`${url}/api/mcp`, {
    method: 'POST',
    headers: { ...MCP_ACCEPT, 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  });
}

async function sql<T = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Five clients writing in a loop until stopped: two create records through GraphQL, one creates
 * features through GraphQL and two through MCP. Each remembers what the server acknowledged and
 * every answer; a client told to come back later waits 20 ms.
 */
class WriteLoad {
  readonly acknowledged = { events: new Set<number>(), graphqlFeatures: new Set<string>(), mcpFeatures: new Set<string>() };
  /** Every answer, with when its request was sent and when it was answered (performance.now()). */
  readonly answers: (Answer & { writer: string; sentAt: number; answeredAt: number })[] = [];
  private stopping = false;
  private readonly running: Promise<void>[] = [];
  failure: Error | undefined;

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly apiKey: string,
  ) {}

  start(): void {
    this.running.push(
      this.loop('events-1', (i) => this.createEvent(1, i)),
      this.loop('events-2', (i) => this.createEvent(2, i)),
      this.loop('graphql-features', (i) => this.createGraphqlFeature(i)),
      this.loop('mcp-features-1', (i) => this.createMcpFeature(1, i)),
      this.loop('mcp-features-2', (i) => this.createMcpFeature(2, i)),
    );
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
    if (this.failure) throw this.failure;
  }

  /** Whether every writer had `count` writes acknowledged that it sent after `time`. */
  allSucceededSince(time: number, count = 1): boolean {
    const acknowledged = new Map<string, number>();
    for (const answer of this.answers) {
      if (answer.outcome === 'ok' && answer.sentAt >= time) acknowledged.set(answer.writer, (acknowledged.get(answer.writer) ?? 0) + 1);
    }
    return acknowledged.size === this.running.length && [...acknowledged.values()].every((n) => n >= count);
  }

  /** The answers to requests sent at or after `from` and answered by `to`. */
  answersBetween(from: number, to: number) {
    return this.answers.filter((answer) => answer.sentAt >= from && answer.answeredAt <= to);
  }

  /** How many answers took each form. */
  forms(): Record<string, number> {
    const forms: Record<string, number> = {};
    for (const answer of this.answers) forms[answer.form] = (forms[answer.form] ?? 0) + 1;
    return forms;
  }

  private async loop(name: string, write: (i: number) => Promise<Answer>): Promise<void> {
    for (let i = 1; !this.stopping && !this.failure; i++) {
      const sentAt = performance.now();
      try {
        const answer = await write(i);
        this.answers.push({ ...answer, writer: name, sentAt, answeredAt: performance.now() });
        if (answer.outcome === 'unavailable') await sleep(20);
      } catch (error) {
        this.failure ??= new Error(`${name}: ${(error as Error).message}`, { cause: error });
      }
    }
  }

  private async createEvent(worker: number, i: number): Promise<Answer> {
    const seq = worker * 1_000_000 + i;
    const response = await fetch(`${this.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
      body: JSON.stringify({ query: 'mutation($seq: Float!) { createEvents(data: { seq: $seq, label: "event" }) { _id } }', variables: { seq } }),
    });
    const answer = classifyGraphql(response.status, await response.text());
    if (answer.outcome === 'ok') this.acknowledged.events.add(seq);
    return answer;
  }

  private async createGraphqlFeature(i: number): Promise<Answer> {
    const id = `g-f${i}`;
    const response = await fetch(`${this.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
      body: JSON.stringify({ query: 'mutation($id: ID!, $name: String!, $code: String!) { createFeature(_id: $id, name: $name, customCode: $code) { _id } }', variables: { id, name: id, code: FEATURE_CODE(id) } }),
    });
    const answer = classifyGraphql(response.status, await response.text());
    if (answer.outcome === 'ok') this.acknowledged.graphqlFeatures.add(id);
    return answer;
  }

  private async createMcpFeature(worker: number, i: number): Promise<Answer> {
    const id = `m${worker}-f${i}`;
    const response = await mcpCall(this.url, this.apiKey, i, 'create_feature', { _id: id, name: id, customCode: FEATURE_CODE(id) });
    const answer = classifyMcp(response.status, await response.text(), response.headers.get('retry-after'));
    if (answer.outcome === 'ok') this.acknowledged.mcpFeatures.add(id);
    return answer;
  }
}

/** Every record of Events, read page by page through GraphQL. */
async function storedEventSeqs(gql: ReturnType<typeof graphqlClient>): Promise<Set<number>> {
  const seqs = new Set<number>();
  for (let offset = 0; ; offset += 500) {
    const page: { items: { seq: number }[]; total: number } = (await gqlData(gql, 'query($o: Int) { listEvents(filter: { label: { eq: "event" } }, limit: 500, offset: $o) { items { seq } total } }', { o: offset })).listEvents;
    for (const event of page.items) seqs.add(event.seq);
    if (offset + 500 >= page.total) return seqs;
  }
}

describe.runIf(usingPostgres)('PostgreSQL restarted and stopped under a write load', () => {
  let postgres: PrivatePostgres;
  let server: SpawnedServer;

  it('answers a clean 503 or succeeds, recovers without a restart, and keeps every acknowledged write whole', async () => {
    postgres = await startPrivatePostgres();
    cleanups.push(() => postgres.destroy());
    server = await spawnServer({ ...TEST_ENV, TRELLIS_DATABASE_URL: postgres.url, TRELLIS_LOG_LEVEL: 'error', TRELLIS_MCP_RATE_LIMIT: '1000000' }, 60_000);
    cleanups.push(() => void server.child.kill('SIGKILL'));
    const token = await login(server.url);
    const owner = graphqlClient(server.url, token);
    await gqlData(owner, 'mutation { createTable(name: "Events", fields: [{ name: "seq", type: "number", required: true }, { name: "label", type: "text" }]) { _id } }');
    const apiKey = (await gqlData(owner, 'mutation { createMcpApiKey(name: "faults", scopes: ["config:read", "features:write"], expiresInDays: 1) { apiKey } }')).createMcpApiKey.apiKey as string;

    const load = new WriteLoad(server.url, token, apiKey);
    cleanups.push(() => {
      if (load.failure) console.log(`the server's last output:\n${server.output().slice(-4000)}`);
    });
    load.start();
    const recoveries: Record<string, number> = {};
    const succeeding = (what: string, since: number, count = 1) =>
      waitFor(what, () => {
        if (load.failure) throw load.failure;
        return load.allSucceededSince(since, count);
      }, 30_000);
    const recovered = async (fault: string, backAt: number) => {
      await succeeding(`every writer succeeding after the ${fault}`, backAt);
      recoveries[fault] = Math.round(performance.now() - backAt);
    };

    await succeeding('a steady load', performance.now(), 10);
    await postgres.restart();
    await recovered('restart', performance.now());
    await succeeding('a steady load again', performance.now(), 5);
    await postgres.stop();
    const stoppedAt = performance.now();
    await sleep(2_000);
    const whileDown = load.answersBetween(stoppedAt, performance.now());
    await postgres.start();
    await recovered('stop of 2 s', performance.now());
    await succeeding('a steady load at the end', performance.now(), 5);
    await load.stop();

    console.log(
      `PostgreSQL faults under load: ${load.answers.length} writes answered ${JSON.stringify(load.forms())}; ` +
        `${whileDown.length} sent and answered while stopped; every writer succeeding again ${JSON.stringify(recoveries)} ms after the database was back`,
    );
    expect(whileDown.length).toBeGreaterThan(0);
    expect(whileDown.filter((answer) => answer.outcome !== 'unavailable')).toEqual([]);
    expect(server.child.exitCode).toBeNull();
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    // Every acknowledged write is there.
    const stored = await storedEventSeqs(owner);
    for (const seq of load.acknowledged.events) expect(stored.has(seq), `acknowledged record ${seq}`).toBe(true);
    const features = new Map((await sql<{ id: string; custom_code: string }>(postgres.url, 'select id, custom_code from features')).map((row) => [row.id, row.custom_code]));
    for (const id of [...load.acknowledged.graphqlFeatures, ...load.acknowledged.mcpFeatures]) expect(features.has(id), `acknowledged feature ${id}`).toBe(true);

    // Nothing half-written: each feature has its code, one version and one audit event, and each
    // feature created through MCP one successful audit entry; no entry claims a feature that is not there.
    const versions = await sql<{ feature_id: string; n: number }>(postgres.url, 'select feature_id, count(*)::int as n from feature_versions group by feature_id');
    const events = await sql<{ resource_id: string; n: number }>(postgres.url, "select resource_id, count(*)::int as n from audit_events where action = 'feature.create' group by resource_id");
    const mcpEntries = await sql<{ id: string; n: number }>(postgres.url, "select arguments->>'_id' as id, count(*)::int as n from mcp_audit_logs where tool = 'create_feature' and outcome = 'ok' group by 1");
    for (const [id, code] of features) expect(code).toBe(FEATURE_CODE(id));
    expect(Object.fromEntries(versions.map((row) => [row.feature_id, row.n]))).toEqual(Object.fromEntries([...features.keys()].map((id) => [id, 1])));
    expect(Object.fromEntries(events.map((row) => [row.resource_id, row.n]))).toEqual(Object.fromEntries([...features.keys()].map((id) => [id, 1])));
    const mcpFeatures = [...features.keys()].filter((id) => id.startsWith('m'));
    expect(Object.fromEntries(mcpEntries.map((row) => [row.id, row.n]))).toEqual(Object.fromEntries(mcpFeatures.map((id) => [id, 1])));
    console.log(
      `stored afterwards: ${stored.size} records (${load.acknowledged.events.size} acknowledged), ${features.size} features ` +
        `(${load.acknowledged.graphqlFeatures.size + load.acknowledged.mcpFeatures.size} acknowledged), ${mcpEntries.length} MCP audit entries`,
    );
    expect(await server.stop()).toBe(0);
  });
});

/** A tmpfs of `size` mounted on a new folder (root only), or why there is none. */
function mountTmpfs(size: string): { dir: string } | { reason: string } {
  if (process.getuid?.() !== 0) return { reason: 'mounting a tmpfs needs root' };
  const dir = mkdtempSync(join(tmpdir(), 'trellis-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: `cannot mount a tmpfs here: ${String((error as { stderr?: unknown }).stderr ?? error).trim()}` };
  }
}

function unmount(dir: string): void {
  execFileSync('umount', ['-l', dir]);
  rmSync(dir, { recursive: true, force: true });
}

/** Writes `path` until the disk is full, or until only `leaveBytes` are free. */
function fill(path: string, leaveBytes = 0): void {
  const chunk = Buffer.alloc(1024 * 1024, 1);
  const fd = openSync(path, 'a');
  try {
    for (;;) {
      const { bavail, bsize } = statfsSync(path);
      const room = bavail * bsize - leaveBytes;
      if (room <= 0) return;
      writeSync(fd, chunk, 0, Math.min(chunk.length, room));
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

const DISK_FULL_MESSAGE = "The database's disk is full";

/** A clean refusal of a full disk: 507 and the message, in the endpoint's error shape. */
function expectDiskFull(status: number, text: string): void {
  assertClean(text, 'a disk-full answer');
  expect(status, text).toBe(507);
  const body = JSON.parse(text) as { error?: { code: unknown; message: string }; errors?: { message: string; extensions?: { code?: string } }[] };
  const messages = body.error ? [body.error.message] : (body.errors ?? []).map((error) => error.message);
  expect(messages.length, text).toBeGreaterThan(0);
  for (const message of messages) expect(message).toContain(DISK_FULL_MESSAGE);
}

describe.runIf(!usingPostgres)('the disk of the embedded data folder full', () => {
  it('refuses writes with a clear 507, goes on reading, writes again once space is freed, and loses nothing', async ({ skip }) => {
    const mounted = mountTmpfs('128m');
    if ('reason' in mounted) return skip(mounted.reason);
    const { dir } = mounted;
    cleanups.push(() => unmount(dir));
    const dataDir = join(dir, 'data');
    const filler = join(dir, 'filler');
    cpSync(inject('pgliteTemplate'), dataDir, { recursive: true });
    const env = { ...TEST_ENV, TRELLIS_DATA_DIR: dataDir, TRELLIS_LOG_LEVEL: 'error' };
    let server = await spawnServer(env, 60_000);
    cleanups.push(() => void server.child.kill('SIGKILL'));
    const token = await login(server.url);
    let gql = graphqlClient(server.url, token);
    await gqlData(gql, 'mutation { createTable(name: "Notes", fields: [{ name: "seq", type: "number", required: true }, { name: "body", type: "text" }]) { _id } }');
    const apiKey = (await gqlData(gql, 'mutation { createMcpApiKey(name: "disk", scopes: ["config:read", "features:write"], expiresInDays: 1) { apiKey } }')).createMcpApiKey.apiKey as string;
    const acknowledged = new Map<number, string>();
    let seq = 0;
    const createNote = async (body: string) => {
      const n = ++seq;
      const result = await gql('mutation($seq: Float!, $body: String) { createNotes(data: { seq: $seq, body: $body }) { _id } }', { seq: n, body });
      if (result.status === 200 && !result.body.errors) acknowledged.set(n, body);
      return { status: result.status, text: JSON.stringify(result.body) };
    };
    for (let i = 0; i < 40; i++) await createNote(`note ${i} ${'x'.repeat(i * 25)}`);
    expect(acknowledged.size).toBe(40);

    // Writes go on until the disk keeps only its reserve free, then are refused.
    const largeNote = () => createNote(randomBytes(600_000).toString('base64'));
    fill(filler, DISK_RESERVE_BYTES + 8 * 1024 * 1024);
    const untilReserve: number[] = [];
    while (!untilReserve.includes(507) && untilReserve.length < 40) {
      const answer = await largeNote();
      if (answer.status !== 200) expectDiskFull(answer.status, answer.text);
      untilReserve.push(answer.status);
    }
    expect(untilReserve.filter((status) => status === 200).length).toBeGreaterThan(0);
    expect(untilReserve.at(-1)).toBe(507);

    // Less room than a new 16 MB segment of the write-ahead log: large writes would reach the end of
    // the current segment, and PGlite would hang there (see DISK_RESERVE_BYTES). They are refused,
    // and the process goes on answering.
    fill(filler, 18 * 1024 * 1024);
    for (let i = 0; i < 20; i++) {
      const answer = await largeNote();
      expectDiskFull(answer.status, answer.text);
      expect((await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) })).status).toBe(200);
    }

    // Full.
    fill(filler);
    const refused = await Promise.all(Array.from({ length: 10 }, (_, i) => createNote(`refused ${i}`)));
    for (const answer of refused) expectDiskFull(answer.status, answer.text);
    const first = [...acknowledged.keys()][0]!;
    const update = await gql('mutation($id: ID!) { updateNotes(Id: $id, data: { body: "changed" }) { _id } }', { id: await noteId(gql, first) });
    expectDiskFull(update.status, JSON.stringify(update.body));
    const signIn = await postJson(`${server.url}/api/auth/login`, OWNER);
    expectDiskFull(signIn.status, JSON.stringify(signIn.body));
    const mcpWrite = await mcpCall(server.url, apiKey, 1, 'create_feature', { name: 'Full', customCode: FEATURE_CODE('full') });
    const mcpText = await mcpWrite.text();
    assertClean(mcpText, 'an MCP answer');
    expect(mcpWrite.status, mcpText).toBe(507);
    expect(JSON.parse(mcpText).error.message).toContain(DISK_FULL_MESSAGE);

    // Reads go on, also after a restart on the full disk.
    expect(await storedNotes(gql)).toEqual(acknowledged);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
    expect(await server.stop()).toBe(0);
    server = await spawnServer(env, 60_000);
    gql = graphqlClient(server.url, token);
    expect(await storedNotes(gql)).toEqual(acknowledged);
    const refusedAfterRestart = await createNote('refused after the restart');
    expectDiskFull(refusedAfterRestart.status, refusedAfterRestart.text);

    // Space again: writes succeed without a restart.
    rmSync(filler);
    const freedAt = performance.now();
    await waitFor('a write to succeed again', async () => (await createNote('after')).status === 200, 20_000);
    const recoveredMs = Math.round(performance.now() - freedAt);
    const mcpAgain = await mcpCall(server.url, apiKey, 2, 'create_feature', { name: 'Again', customCode: FEATURE_CODE('again') });
    expect(JSON.parse(await mcpAgain.text()).result.isError).toBeUndefined();

    // Nothing lost or corrupted: the folder reopens and holds exactly what was acknowledged, and
    // PostgreSQL's amcheck finds every index and table sound.
    expect(await server.stop()).toBe(0);
    server = await spawnServer(env, 60_000);
    const reopened = graphqlClient(server.url, await login(server.url));
    expect(await storedNotes(reopened)).toEqual(acknowledged);
    const features = (await gqlData(reopened, '{ features { name } }')).features.map((feature: { name: string }) => feature.name);
    expect(features).toContain('Again');
    expect(features).not.toContain('Full');
    expect(await server.stop()).toBe(0);
    const integrity = await verifyPGliteIntegrity(dataDir);
    expect(integrity.problems).toEqual([]);
    expect(integrity.tables.filter((table) => table.startsWith('public.data_notes_'))).toHaveLength(1);
    console.log(
      `disk full: ${untilReserve.length - 1} writes of 800 kB accepted from ${DISK_RESERVE_BYTES / 2 ** 20 + 8} MB free down to the reserve, then 507; ` +
        `${refused.length} concurrent writes, an update, a sign-in and an MCP write refused with 507 once full; reads answered, also after a restart on the full disk; ` +
        `writes succeeding again ${recoveredMs} ms after the filler was removed; ${acknowledged.size} records intact after a restart; ` +
        `amcheck: ${integrity.indexes.length} btree indexes and ${integrity.tables.length} tables sound`,
    );
  });

  it('refuses writes while less than TRELLIS_DISK_RESERVE_MB is free, and still starts and reads', async ({ skip }) => {
    const reserveMb = Math.ceil(freeBytesOf(tmpdir())() / 2 ** 20) + 1024;
    if (reserveMb > 1024 * 1024) return skip('the disk of the temporary folder has more than the largest reserve free');
    const server = await startTestServer({ TRELLIS_DISK_RESERVE_MB: String(reserveMb) });
    cleanups.push(() => server.close());
    const signIn = await postJson(`${server.url}/api/auth/login`, OWNER);
    expectDiskFull(signIn.status, JSON.stringify(signIn.body));
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});

async function noteId(gql: ReturnType<typeof graphqlClient>, seq: number): Promise<string> {
  return (await gqlData(gql, 'query($seq: Float) { listNotes(filter: { seq: { eq: $seq } }) { items { _id } } }', { seq })).listNotes.items[0]._id;
}

/** Every note's seq and body, read through GraphQL. */
async function storedNotes(gql: ReturnType<typeof graphqlClient>): Promise<Map<number, string>> {
  const notes = new Map<number, string>();
  for (let offset = 0; ; offset += 20) {
    const page: { items: { seq: number; body: string }[]; total: number } = (await gqlData(gql, 'query($o: Int) { listNotes(limit: 20, offset: $o, sort: [{ field: seq }]) { items { seq body } total } }', { o: offset })).listNotes;
    for (const note of page.items) notes.set(note.seq, note.body);
    if (offset + 20 >= page.total) return notes;
  }
}
