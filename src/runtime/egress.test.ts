import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EGRESS_LIMITS, EgressError, EgressPolicy, guardedFetch } from './egress.js';

interface LoopbackServer {
  port: number;
  url: string;
  hits: string[];
  close(): Promise<void>;
}

async function loopbackServer(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<LoopbackServer> {
  const hits: string[] = [];
  const server: Server = createServer((request, response) => {
    hits.push(`${request.method} ${request.url}`);
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('EgressPolicy', () => {
  const policy = new EgressPolicy([], () => []);

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'link-local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.1.2.3', 'private'],
    ['64:ff9b::a00:1', 'private'],
    // IPv4 carried inside IPv6, in every notation.
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:FF9B:0:0:0:0:7F00:0001', 'loopback'],
    ['0064:ff9b:0000:0000:0000:0000:a9fe:a9fe', 'link-local'],
    ['64:ff9b::169.254.169.254', 'link-local'],
    ['64:ff9b:1::8.8.8.8', 'local-use NAT64'],
    ['64:ff9b:1:abcd::1', 'local-use NAT64'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2002:c0a8:101:0:0:0:0:1', 'private'],
    ['2001:0:808:808::80ff:fefe', 'loopback'],
    ['2001:0:0808:0808::f5ff:fffe', 'private'],
    ['2001:0:7f00:1::f7f7:f7f7', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['0:0:0:0:0:0:127.0.0.1', 'loopback'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::ffff:0:a00:1', 'private'],
    ['::FFFF:7F00:0001', 'loopback'],
    ['0000:0000:0000:0000:0000:ffff:7f00:0001', 'loopback'],
    ['::ffff:10.0.0.1%eth0', 'private'],
    ['fe80::1%lo', 'link-local'],
    ['2001:db8::1', 'documentation'],
    ['3fff:0:1::1', 'documentation'],
    ['192.0.2.200', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['::ffff:203.0.113.9', 'documentation'],
    ['192.88.99.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['100::1', 'discard-only'],
    ['fec0::1', 'site-local'],
  ])('refuses %s as %s', (address, label) => {
    expect(policy.refusal(address, 'example.test', 80)).toBe(label);
  });

  it.each(['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1', '2001:0:808:808::f7f7:f7f7'])('allows the public address %s', (address) => {
    expect(policy.refusal(address, 'example.test', 443)).toBeUndefined();
  });

  it('lifts a refusal for an allow-listed CIDR range, address or host:port only', () => {
    const allowing = new EgressPolicy(['127.0.0.0/8', '10.0.0.7', 'hooks.internal:8080']);
    expect(allowing.refusal('127.0.0.1', 'localhost', 1234)).toBeUndefined();
    expect(allowing.refusal('::ffff:127.0.0.1', 'localhost', 1234)).toBeUndefined();
    expect(allowing.refusal('10.0.0.7', 'x.test', 80)).toBeUndefined();
    expect(allowing.refusal('10.0.0.8', 'x.test', 80)).toBe('private');
    expect(allowing.refusal('192.168.0.3', 'hooks.internal', 8080)).toBeUndefined();
    expect(allowing.refusal('192.168.0.3', 'hooks.internal', 8081)).toBe('private');
  });

  it('refuses the addresses of this machine’s own interfaces, in any spelling, unless allow-listed', () => {
    const own = new EgressPolicy([], () => ['93.184.216.34', '2606:4700:4700::1111', 'fe80::1%eth0']);
    expect(own.refusal('93.184.216.34', 'self.example', 80)).toBe('own');
    expect(own.refusal('::ffff:93.184.216.34', 'self.example', 80)).toBe('own');
    expect(own.refusal('2606:4700:4700:0:0:0:0:1111', 'self.example', 80)).toBe('own');
    expect(own.refusal('2606:4700:4700::1112', 'self.example', 80)).toBeUndefined();
    expect(own.refusal('93.184.216.35', 'self.example', 80)).toBeUndefined();
    expect(new EgressPolicy(['93.184.216.34'], () => ['93.184.216.34']).refusal('93.184.216.34', 'self.example', 80)).toBeUndefined();
  });

  it.each(['10.0.0.0/33', 'not a host', 'http://x.test', '::1/129'])('rejects the allow-list entry %s', (entry) => {
    expect(() => new EgressPolicy([entry])).toThrow(/TRELLIS_HOOK_EGRESS_ALLOW/);
  });
});

describe('guardedFetch', () => {
  let target: LoopbackServer;
  let redirector: LoopbackServer;
  let big: LoopbackServer;
  let silent: LoopbackServer;

  beforeAll(async () => {
    target = await loopbackServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ method: request.method, path: request.url, body, token: request.headers['x-token'] ?? null }));
      });
    });
    redirector = await loopbackServer((request, response) => {
      const to = new URL(request.url ?? '/', 'http://x').searchParams.get('to') ?? '/';
      const hops = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('hops') ?? 0);
      const location = hops > 0 ? `/?hops=${hops - 1}&to=${encodeURIComponent(to)}` : to;
      response.writeHead(302, { location }).end();
    });
    big = await loopbackServer((_request, response) => response.end('x'.repeat(2 * 1024 * 1024)));
    silent = await loopbackServer(() => {});
  });

  afterAll(async () => {
    await Promise.all([target.close(), redirector.close(), big.close(), silent.close()]);
  });

  it.each([
    ['a loopback address', () => `${target.url}/`],
    ['a private address', () => 'http://10.0.0.1/'],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a DNS name resolving to loopback', () => `http://localhost:${target.port}/`],
    ['an IPv4-mapped IPv6 loopback address', () => `http://[::ffff:127.0.0.1]:${target.port}/`],
    ['IPv6 loopback', () => `http://[::1]:${target.port}/`],
    ['a NAT64 loopback address', () => `http://[64:ff9b::127.0.0.1]:${target.port}/`],
    ['a 6to4 loopback address', () => `http://[2002:7f00:1::1]:${target.port}/`],
    ['an IPv4-compatible loopback address', () => `http://[::7f00:1]:${target.port}/`],
  ])('refuses %s by default without connecting', async (_label, url) => {
    const before = target.hits.length;
    await expect(guardedFetch({ url: url() }, new EgressPolicy())).rejects.toThrow(/^fetch refused: .* address; hooks may not reach it/);
    expect(target.hits.length).toBe(before);
  });

  // A service of this machine listening on every interface, reached through the machine's own address.
  const external = Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .find(({ family, internal }) => family === 'IPv4' && !internal)?.address;
  it.runIf(external)('refuses the address of this machine’s network interface without connecting', async () => {
    const hits: string[] = [];
    const server = createServer((request, response) => {
      hits.push(String(request.url));
      response.end('internal');
    });
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await expect(guardedFetch({ url: `http://${external}:${port}/own` }, new EgressPolicy())).rejects.toThrow(
        `fetch refused: ${external} is an address of this server; hooks may not reach it unless TRELLIS_HOOK_EGRESS_ALLOW lists it`,
      );
      expect(hits).toEqual([]);
      const allowed = await guardedFetch({ url: `http://${external}:${port}/allowed` }, new EgressPolicy([`${external}:${port}`]));
      expect(allowed.body).toBe('internal');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reaches an allow-listed loopback server and returns status, headers and body', async () => {
    const response = await guardedFetch(
      { url: `${target.url}/items?x=1`, method: 'post', headers: { 'X-Token': 'abc', Host: 'evil.test' }, body: 'hello' },
      new EgressPolicy([`127.0.0.1:${target.port}`]),
    );
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(JSON.parse(response.body)).toEqual({ method: 'POST', path: '/items?x=1', body: 'hello', token: 'abc' });
  });

  it('reaches a DNS name resolving to loopback when the name is allow-listed', async () => {
    const response = await guardedFetch({ url: `http://localhost:${target.port}/by-name` }, new EgressPolicy([`localhost:${target.port}`]));
    expect(JSON.parse(response.body).path).toBe('/by-name');
  });

  it('checks every redirect target again and refuses one to a non-allowed address', async () => {
    const policy = new EgressPolicy([`127.0.0.1:${redirector.port}`]);
    const before = target.hits.length;
    await expect(guardedFetch({ url: `${redirector.url}/?to=${encodeURIComponent(`${target.url}/secret`)}` }, policy)).rejects.toThrow(
      /^fetch refused: 127\.0\.0\.1 is a loopback address/,
    );
    await expect(guardedFetch({ url: `${redirector.url}/?to=${encodeURIComponent('http://169.254.169.254/')}` }, policy)).rejects.toThrow(
      /link-local/,
    );
    expect(target.hits.length).toBe(before);
  });

  it('follows up to three allowed redirects, turning a POST into a GET on 302', async () => {
    const policy = new EgressPolicy(['127.0.0.1']);
    const response = await guardedFetch(
      { url: `${redirector.url}/?hops=2&to=${encodeURIComponent(`${target.url}/end`)}`, method: 'POST', body: 'data' },
      policy,
    );
    expect(JSON.parse(response.body)).toMatchObject({ method: 'GET', path: '/end', body: '' });
    expect(response.url).toBe(`${target.url}/end`);
  });

  it('gives up after three redirects', async () => {
    const policy = new EgressPolicy(['127.0.0.1']);
    await expect(guardedFetch({ url: `${redirector.url}/?hops=3&to=${encodeURIComponent(`${target.url}/end`)}` }, policy)).rejects.toThrow(
      'fetch failed: more than 3 redirects',
    );
  });

  it('fails a response larger than the cap', async () => {
    await expect(guardedFetch({ url: big.url }, new EgressPolicy(['127.0.0.1']))).rejects.toThrow('fetch failed: the response is larger than 1048576 bytes');
  });

  it('fails a request that gets no answer in time', async () => {
    const started = Date.now();
    await expect(guardedFetch({ url: silent.url }, new EgressPolicy(['127.0.0.1']), { ...DEFAULT_EGRESS_LIMITS, timeoutMs: 200 })).rejects.toThrow(
      'fetch failed: no complete answer within 200 ms',
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it.each(['file:///etc/passwd', 'ftp://example.test/', 'data:text/plain,hi'])('refuses the non-HTTP URL %s', async (url) => {
    await expect(guardedFetch({ url }, new EgressPolicy(['0.0.0.0/0']))).rejects.toThrow(/^fetch refused: only http and https/);
  });

  it('reports an unresolvable name without details', async () => {
    const error = await guardedFetch({ url: 'http://does-not-exist.invalid/' }, new EgressPolicy()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EgressError);
    expect((error as Error).message).toBe('fetch failed: cannot resolve does-not-exist.invalid');
  });
});
