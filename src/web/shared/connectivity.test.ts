/// <reference types="node" />
// A test of the page's code that runs in Node: a real server on loopback answers its requests.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServerUnreachableError, createConnectivity, type Connectivity } from './connectivity.js';

/** Probe delays short enough for a test: 50 ms, doubling up to 400 ms. */
const FIRST_DELAY_MS = 50;

/**
 * A real server on loopback whose answers the test gives, one request at a time, in any order:
 * `down()` is a gateway's 502 (the server behind it away), `answer()` the server's own 200.
 */
async function heldServer() {
  const requests: Held[] = [];
  const server = createServer((request, response: ServerResponse) => {
    requests.push({
      path: request.url!,
      at: performance.now(),
      answer: (status = 200) => void (response.headersSent || response.writeHead(status, { 'content-type': 'application/json' }).end('{}')),
      down: () => void (response.headersSent || response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>')),
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const taken = new Set<Held>();
  /** The next request for `path` not taken yet, once it has arrived. */
  const next = async (path: string): Promise<Held> => {
    const find = () => requests.find((request) => request.path === path && !taken.has(request));
    await expect.poll(find, { timeout: 5000, interval: 5 }).toBeDefined();
    const request = find()!;
    taken.add(request);
    return request;
  };
  return { requests, base, next, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

interface Held {
  path: string;
  at: number;
  answer(status?: number): void;
  down(): void;
}

describe('connectivity: whether the server answers', () => {
  let server: Awaited<ReturnType<typeof heldServer>>;
  let connectivity: Connectivity;
  let changes: boolean[];

  beforeEach(async () => {
    server = await heldServer();
    connectivity = createConnectivity({ fetch: (path, init) => fetch(`${server.base}${path}`, init), firstDelayMs: FIRST_DELAY_MS, maxDelayMs: 8 * FIRST_DELAY_MS });
    changes = [];
    connectivity.onReachability((reachable) => changes.push(reachable));
  });

  afterEach(async () => {
    // Nothing left waiting: a page that is reachable again stops probing.
    connectivity.reportReachable();
    for (const request of server.requests) request.answer();
    await server.close();
  });

  it('is unreachable after a request that got no connection, and reachable again after an answer to a later one', async () => {
    const closed = await heldServer();
    await closed.close();
    const nowhere = createConnectivity({ fetch: (path, init) => fetch(`${closed.base}${path}`, init), firstDelayMs: 60_000 });
    await expect(nowhere.reachingFetch('/graphql')).rejects.toBeInstanceOf(ServerUnreachableError);
    expect(nowhere.serverReachable()).toBe(false);
    nowhere.reportReachable();

    const failed = connectivity.reachingFetch('/graphql');
    (await server.next('/graphql')).down();
    await expect(failed).rejects.toBeInstanceOf(ServerUnreachableError);
    expect(connectivity.serverReachable()).toBe(false);
    const later = connectivity.reachingFetch('/graphql');
    (await server.next('/graphql')).answer();
    expect((await later).status).toBe(200);
    expect(connectivity.serverReachable()).toBe(true);
    expect(changes).toEqual([false, true]);
  });

  it('does not count an answer to a request sent before the failure: what failed is not retried at once, in a loop', async () => {
    // Sent together: the data answers, the frame's document does not.
    const data = connectivity.reachingFetch('/graphql');
    const frame = connectivity.reachingFetch('/app/frame');
    const dataRequest = await server.next('/graphql');
    (await server.next('/app/frame')).down();
    await expect(frame).rejects.toBeInstanceOf(ServerUnreachableError);
    dataRequest.answer();
    await data;
    expect(connectivity.serverReachable()).toBe(false);
    expect(changes).toEqual([false]);

    // The server is asked again by itself (GET /healthz), and that answer counts.
    (await server.next('/healthz')).answer();
    await expect.poll(() => connectivity.serverReachable()).toBe(true);
    expect(changes).toEqual([false, true]);
  });

  it('keeps asking when a failure was reported while its question was out, and waits longer while nothing answers', async () => {
    const failed = connectivity.reachingFetch('/graphql');
    (await server.next('/graphql')).down();
    await failed.catch(() => {});
    const firstProbe = await server.next('/healthz');

    // While the probe is out, another request fails: the probe's answer is older news.
    const another = connectivity.reachingFetch('/graphql');
    (await server.next('/graphql')).down();
    await another.catch(() => {});
    firstProbe.answer();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(connectivity.serverReachable()).toBe(false);

    // The next probe comes and the gateway says the server is down; the one after waits twice as long.
    (await server.next('/healthz')).down();
    const refusedAt = performance.now();
    const third = await server.next('/healthz');
    expect(third.at - refusedAt).toBeGreaterThanOrEqual(2 * FIRST_DELAY_MS - 5);
    third.answer();
    await expect.poll(() => connectivity.serverReachable()).toBe(true);
    expect(changes).toEqual([false, true]);
    expect(server.requests.map((request) => request.path)).toEqual(['/graphql', '/healthz', '/graphql', '/healthz', '/healthz']);
  });

  it("takes any answer of the server itself as an answer, a refusal too, and a gateway's 502 as none", async () => {
    const failed = connectivity.reachingFetch('/graphql');
    (await server.next('/graphql')).down();
    await expect(failed).rejects.toBeInstanceOf(ServerUnreachableError);
    const refused = connectivity.reachingFetch('/graphql');
    (await server.next('/graphql')).answer(403);
    expect((await refused).status).toBe(403);
    expect(connectivity.serverReachable()).toBe(true);
  });
});
