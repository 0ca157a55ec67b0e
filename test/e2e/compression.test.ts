import { readdirSync, readFileSync, statSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { extname, join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * What a client receives by its Accept-Encoding: the pages and their files as the build
 * compressed them, large API answers compressed per request, each with `Vary: Accept-Encoding`,
 * the same bytes once decoded, and the caching of each kind of file as before.
 */

const WEB = join(process.cwd(), 'dist', 'web');
const IMMUTABLE = 'public, max-age=31536000, immutable';
const RECORDS = 200;

let server: TestServer;
let token: string;

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The bytes as they came over the wire, still encoded. */
  body: Buffer;
}

/** A request whose answer is read as sent (fetch would decode it), with no Accept-Encoding unless given. */
function send(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(`${server.url}${path}`, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function decoded(response: RawResponse): Buffer {
  switch (response.headers['content-encoding']) {
    case 'br':
      return brotliDecompressSync(response.body);
    case 'gzip':
      return gunzipSync(response.body);
    default:
      return response.body;
  }
}

const ENCODINGS = [
  ['br', 'br'],
  ['gzip', 'gzip'],
  // What browsers send: brotli is chosen.
  ['gzip, deflate, br', 'br'],
] as const;

function graphqlPost(query: string, acceptEncoding?: string): Promise<RawResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  if (acceptEncoding) headers['accept-encoding'] = acceptEncoding;
  return send('POST', '/graphql', headers, JSON.stringify({ query }));
}

const LIST_ITEMS = `{ listItems(sort: [{ field: position }], limit: ${RECORDS}) { total items { _id position title note } } }`;

beforeAll(async () => {
  server = await startTestServer();
  token = await login(server.url);
  const gql = graphqlClient(server.url, token);
  await gqlData(gql, 'mutation { createTable(name: "Items", fields: [{ name: "position", type: "number" }, { name: "title", type: "text" }, { name: "note", type: "text" }]) { _id } }');
  for (let position = 1; position <= RECORDS; position++) {
    await gqlData(gql, 'mutation($d: ItemsInput!) { createItems(data: $d) { _id } }', { d: { position, title: `Item ${position}`, note: `Delivered to shelf ${position % 12}` } });
  }
  await gqlData(gql, 'mutation($c: String!) { createHook(name: "echo", type: "webHook", content: $c) { _id } }', { c: 'async function echo(instance) { return instance; }' });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('the build', () => {
  it('writes a .br and a .gz beside every text file of at least 1 KB and every page document, each decoding to the file', () => {
    const files = (folder: string): string[] => readdirSync(folder, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(join(folder, entry.name)) : [join(folder, entry.name)]));
    const due = files(WEB).filter((file) => ['.js', '.css', '.html', '.json', '.svg'].includes(extname(file)) && (statSync(file).size >= 1024 || file.endsWith('index.html')));
    expect(due.length).toBeGreaterThan(10);
    for (const file of due) {
      const original = readFileSync(file);
      expect(brotliDecompressSync(readFileSync(`${file}.br`)).equals(original), `${file}.br`).toBe(true);
      expect(gunzipSync(readFileSync(`${file}.gz`)).equals(original), `${file}.gz`).toBe(true);
    }
  });
});

describe('the pages and their files', () => {
  const frameVersion = () => (JSON.parse(readFileSync(join(WEB, 'frame', 'frame.json'), 'utf8')) as { version: string }).version;
  const largestChunk = () => {
    const folder = join(WEB, 'designer', 'chunks');
    const [name] = readdirSync(folder)
      .filter((file) => file.endsWith('.js'))
      .sort((a, b) => statSync(join(folder, b)).size - statSync(join(folder, a)).size);
    return `/web/designer/chunks/${name}`;
  };
  // The documents of / and /app are a few hundred bytes: compressed, but by less.
  const kinds: [string, () => string, string, number][] = [
    ['the designer page', () => '/', 'no-cache', 0.8],
    ['the designer script', () => '/web/designer/main.js', 'no-cache', 0.4],
    ['the designer stylesheet', () => '/web/designer/main.css', 'no-cache', 0.4],
    ['a designer chunk', largestChunk, IMMUTABLE, 0.4],
    ['the application page', () => '/app', 'no-cache', 0.8],
    ['a feature page of the application', () => '/app/feature/orders', 'no-cache', 0.8],
    ['the feature frame of this build', () => `/app/frame?v=${frameVersion()}`, IMMUTABLE, 0.4],
    ['the feature frame without a version', () => '/app/frame', 'no-cache', 0.4],
  ];

  describe.each(kinds)('%s', (_kind, path, cacheControl, ratio) => {
    it('is sent as is to a client that accepts no encoding, with its cache policy and Vary', async () => {
      const plain = await send('GET', path());
      expect(plain.status).toBe(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toMatch(/accept-encoding/i);
      expect(plain.headers['cache-control']).toBe(cacheControl);
      expect(plain.headers['x-content-type-options']).toBe('nosniff');
    });

    it.each(ENCODINGS)('is sent compressed to a client that accepts %s, decoding to the same bytes', async (acceptEncoding, expected) => {
      const plain = await send('GET', path());
      const compressed = await send('GET', path(), { 'accept-encoding': acceptEncoding });
      expect(compressed.status).toBe(200);
      expect(compressed.headers['content-encoding']).toBe(expected);
      expect(compressed.headers.vary).toMatch(/accept-encoding/i);
      expect(compressed.headers['cache-control']).toBe(cacheControl);
      expect(compressed.headers['content-type']).toBe(plain.headers['content-type']);
      expect(Number(compressed.headers['content-length'])).toBe(compressed.body.length);
      expect(decoded(compressed).equals(plain.body)).toBe(true);
      expect(compressed.body.length).toBeLessThan(plain.body.length * ratio);
    });
  });

  it('keeps the frame policy of the frame document whatever the encoding', async () => {
    const plain = await send('GET', `/app/frame?v=${frameVersion()}`);
    const compressed = await send('GET', `/app/frame?v=${frameVersion()}`, { 'accept-encoding': 'br' });
    expect(plain.headers['content-security-policy']).toContain("connect-src 'none'");
    expect(compressed.headers['content-security-policy']).toBe(plain.headers['content-security-policy']);
  });

  it.each([
    ['the designer page', '/'],
    ['the designer script', '/web/designer/main.js'],
  ])('answers 304 to a client that revalidates %s it holds compressed, and 200 to one that holds the other encoding', async (_kind, path) => {
    const first = await send('GET', path, { 'accept-encoding': 'br' });
    const etag = first.headers.etag!;
    expect(etag).toBeTruthy();
    const revalidated = await send('GET', path, { 'accept-encoding': 'br', 'if-none-match': etag });
    expect(revalidated.status).toBe(304);
    expect(revalidated.body.length).toBe(0);
    const otherEncoding = await send('GET', path, { 'accept-encoding': 'gzip', 'if-none-match': etag });
    expect(otherEncoding.status).toBe(200);
    expect(otherEncoding.headers['content-encoding']).toBe('gzip');
  });

  it('sends a file under 1 KB as is, with Vary', async () => {
    const folder = join(WEB, 'designer', 'chunks');
    const small = readdirSync(folder).find((file) => file.endsWith('.js') && statSync(join(folder, file)).size < 1024);
    expect(small).toBeDefined();
    const answer = await send('GET', `/web/designer/chunks/${small}`, { 'accept-encoding': 'gzip, deflate, br' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.headers.vary).toMatch(/accept-encoding/i);
    expect(answer.body.equals(readFileSync(join(folder, small!)))).toBe(true);
  });
});

describe('API answers', () => {
  it.each(ENCODINGS)('compresses a large GraphQL answer for a client that accepts %s, decoding to the same JSON', async (acceptEncoding, expected) => {
    const plain = await graphqlPost(LIST_ITEMS);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect((JSON.parse(plain.body.toString('utf8')) as { data: { listItems: { total: number } } }).data.listItems.total).toBe(RECORDS);
    const compressed = await graphqlPost(LIST_ITEMS, acceptEncoding);
    expect(compressed.status).toBe(200);
    expect(compressed.headers['content-encoding']).toBe(expected);
    expect(compressed.headers.vary).toMatch(/accept-encoding/i);
    expect(compressed.headers['content-type']).toBe(plain.headers['content-type']);
    expect(decoded(compressed).equals(plain.body)).toBe(true);
    // Record ids are random and compress poorly: a third still.
    expect(compressed.body.length).toBeLessThan(plain.body.length * 0.35);
  });

  it('compresses a query over GET as over POST', async () => {
    const answer = await send('GET', `/graphql?query=${encodeURIComponent(LIST_ITEMS)}`, { authorization: `Bearer ${token}`, 'accept-encoding': 'br' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBe('br');
    expect((JSON.parse(decoded(answer).toString('utf8')) as { data: { listItems: { items: unknown[] } } }).data.listItems.items).toHaveLength(RECORDS);
  });

  it('sends an answer under 1 KB as is', async () => {
    const answer = await graphqlPost('{ me { email } }', 'br');
    expect(answer.status).toBe(200);
    expect(answer.body.length).toBeLessThan(1024);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(answer.body.toString('utf8'))).toEqual({ data: { me: { email: 'owner@example.com' } } });
  });

  it("leaves a webhook's answer as its code wrote it, however large", async () => {
    const instance = { lines: Array.from({ length: 100 }, (_, n) => `line ${n} of a large answer`) };
    const answer = await send('POST', '/api/webhook/echo', { 'content-type': 'application/json', 'accept-encoding': 'gzip, deflate, br' }, JSON.stringify(instance));
    expect(answer.status).toBe(200);
    expect(answer.body.length).toBeGreaterThan(1024);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(answer.body.toString('utf8'))).toEqual(instance);
  });
});
