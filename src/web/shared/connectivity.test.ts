import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

type Connectivity = typeof import('./connectivity.js');

/** A fetch whose answers the test gives, one request at a time, in any order. */
function controlledFetch() {
  const requests: { url: string; answer(status: number): void; fail(): void }[] = [];
  const fetch = (url: string) =>
    new Promise<Response>((resolve, reject) => {
      requests.push({ url, answer: (status) => resolve(new Response('{}', { status })), fail: () => reject(new TypeError('Failed to fetch')) });
    });
  return { fetch, requests };
}

describe('connectivity: whether the server answers', () => {
  let connectivity: Connectivity;
  let requests: ReturnType<typeof controlledFetch>['requests'];
  let changes: boolean[];

  beforeEach(async () => {
    vi.useFakeTimers();
    const controlled = controlledFetch();
    requests = controlled.requests;
    vi.stubGlobal('fetch', controlled.fetch);
    // The module keeps one state per page: a fresh copy for each test.
    vi.resetModules();
    connectivity = await import('./connectivity.js');
    changes = [];
    connectivity.onReachability((reachable) => changes.push(reachable));
  });

  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  /** Lets the answered fetches' continuations run. */
  const settle = () => vi.advanceTimersByTimeAsync(0);

  it('is unreachable after a request that got no answer, and reachable again after an answer to a later one', async () => {
    const failed = connectivity.reachingFetch('/graphql');
    requests[0]!.fail();
    await expect(failed).rejects.toBeInstanceOf(connectivity.ServerUnreachableError);
    expect(connectivity.serverReachable()).toBe(false);

    const later = connectivity.reachingFetch('/graphql');
    requests[1]!.answer(200);
    await later;
    expect(connectivity.serverReachable()).toBe(true);
    expect(changes).toEqual([false, true]);
  });

  it('does not count an answer to a request sent before the failure: what failed is not retried at once, in a loop', async () => {
    // Sent together: the data answers, the frame's document (a path the server does not serve now) does not.
    const data = connectivity.reachingFetch('/graphql');
    const frame = connectivity.reachingFetch('/app/frame');
    requests[1]!.fail();
    await expect(frame).rejects.toBeInstanceOf(connectivity.ServerUnreachableError);
    requests[0]!.answer(200);
    await data;
    expect(connectivity.serverReachable()).toBe(false);
    expect(changes).toEqual([false]);

    // The server is asked again by itself a second later (GET /healthz), and its answer counts.
    await vi.advanceTimersByTimeAsync(1000);
    expect(requests[2]!.url).toBe('/healthz');
    requests[2]!.answer(200);
    await settle();
    expect(connectivity.serverReachable()).toBe(true);
    expect(changes).toEqual([false, true]);
  });

  it('keeps asking when a failure was reported while its question was out, and backs off while nothing answers', async () => {
    const failed = connectivity.reachingFetch('/graphql');
    requests[0]!.fail();
    await failed.catch(() => {});
    await vi.advanceTimersByTimeAsync(1000);
    expect(requests.map((request) => request.url)).toEqual(['/graphql', '/healthz']);

    // While the probe is out, another request fails: the probe's answer is older news.
    const another = connectivity.reachingFetch('/graphql');
    requests[2]!.fail();
    await another.catch(() => {});
    requests[1]!.answer(200);
    await settle();
    expect(connectivity.serverReachable()).toBe(false);

    // The next probe comes and is refused; the one after waits twice as long.
    await vi.advanceTimersByTimeAsync(1000);
    expect(requests).toHaveLength(4);
    requests[3]!.fail();
    await settle();
    await vi.advanceTimersByTimeAsync(1999);
    expect(requests).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(1);
    expect(requests).toHaveLength(5);
    requests[4]!.answer(200);
    await settle();
    expect(connectivity.serverReachable()).toBe(true);
    expect(changes).toEqual([false, true]);
  });

  it('takes a gateway that says the server is down as no answer, and any answer of the server itself as one', async () => {
    const down = connectivity.reachingFetch('/graphql');
    requests[0]!.answer(502);
    await expect(down).rejects.toBeInstanceOf(connectivity.ServerUnreachableError);
    expect(connectivity.serverReachable()).toBe(false);
    const refused = connectivity.reachingFetch('/graphql');
    requests[1]!.answer(403);
    expect((await refused).status).toBe(403);
    expect(connectivity.serverReachable()).toBe(true);
  });
});
