// Whether the server answers. A request that cannot reach it (the server restarting, the network
// gone) marks it unreachable; from then on the page asks GET /healthz, sooner when the browser says
// it is back online, and tells its listeners the moment the server answers again, so that what
// failed loads again by itself. One state for the whole page: every failed load waits on the same probe.

/** The message a page shows for a request that did not reach the server. */
export const UNREACHABLE_MESSAGE = 'The server cannot be reached. This page tries again by itself as soon as it answers.';

/**
 * What a part of the designer that failed to load says while the server is away: the banner above
 * the page already says UNREACHABLE_MESSAGE, so the part says only what happens to it.
 */
export const LOADS_WHEN_BACK = 'It loads by itself as soon as the server answers.';

/** Thrown for a request that got no answer from the server (or a gateway's answer that it is down). */
export class ServerUnreachableError extends Error {
  constructor() {
    super(UNREACHABLE_MESSAGE);
    this.name = 'ServerUnreachableError';
  }
}

/** Whether an error says the server was not reached: ours, fetch's TypeError, or a failed dynamic import. */
export function isUnreachable(error: unknown): boolean {
  if (error instanceof ServerUnreachableError) return true;
  if (!(error instanceof Error)) return false;
  return error.name === 'TypeError' && /fetch|network|import|load/i.test(error.message);
}

/** Gateway answers that mean the server behind is down or restarting. */
export const GATEWAY_DOWN = new Set([502, 503, 504]);

type Listener = (reachable: boolean) => void;

/** What the page's reachability is built on; a test gives its own fetch and shorter delays. */
export interface ConnectivityOptions {
  /** Sends a request of the page (relative addresses); default: the browser's fetch. */
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
  /** Probe delays: soon at first, doubling up to the maximum; default 1 s and 10 s. */
  firstDelayMs?: number;
  maxDelayMs?: number;
}

export type Connectivity = ReturnType<typeof createConnectivity>;

/** The reachability of the server as one page sees it (the page has one: the exports below). */
export function createConnectivity({ fetch: send = (input, init) => fetch(input, init), firstDelayMs = 1000, maxDelayMs = 10_000 }: ConnectivityOptions = {}) {
  const listeners = new Set<Listener>();
  let reachable = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let delay = 0;
  /**
   * Counts the reports of an unreachable server. An answer to a request sent before the last such
   * report is older news than it: it does not make the server reachable again. Otherwise a request
   * that answers just after another failed (the server reached for one path and not another) would
   * retry every failed load at once, and again each time it failed: a loop.
   */
  let failures = 0;

  const set = (next: boolean) => {
    if (reachable === next) return;
    reachable = next;
    for (const listener of [...listeners]) listener(next);
  };

  const schedule = (ms: number) => {
    delay = ms;
    // A hidden page does not ask: it asks again when it is shown (below).
    if (typeof document !== 'undefined' && document.hidden) return;
    timer = setTimeout(() => void probe(), ms);
  };

  /** Records that a request did not reach the server, and starts probing until it answers. */
  const reportUnreachable = (): void => {
    failures += 1;
    set(false);
    if (timer === undefined) schedule(firstDelayMs);
  };

  /**
   * Records an answer from the server (any HTTP status that is not a gateway's "down") to a request
   * sent when `sentAfter` failures had been reported; an answer to a request older than the last
   * failure changes nothing.
   */
  const reportReachable = (sentAfter = failures): void => {
    if (sentAfter !== failures) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    delay = 0;
    set(true);
  };

  /** Asks the server now (a Retry button, the browser coming back online); resolves with whether it answered. */
  const probe = async (): Promise<boolean> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const sentAfter = failures;
    try {
      const response = await send('/healthz', { cache: 'no-store' });
      if (!GATEWAY_DOWN.has(response.status)) {
        reportReachable(sentAfter);
        if (reachable) return true;
      }
    } catch {
      // Still unreachable: probe again later.
    }
    // (A failure reported while this probe was out has scheduled the next one already.)
    if (!reachable && timer === undefined) schedule(Math.min(maxDelayMs, Math.max(firstDelayMs, delay * 2)));
    return false;
  };

  return {
    serverReachable: (): boolean => reachable,
    /** Calls `listener` with each change of reachability; returns the unsubscribe. */
    onReachability(listener: Listener): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    reportUnreachable,
    reportReachable,
    probe,
    /** fetch() that reports whether the server was reached, and throws ServerUnreachableError when it was not. */
    async reachingFetch(input: string, init?: RequestInit): Promise<Response> {
      const sentAfter = failures;
      let response: Response;
      try {
        response = await send(input, init);
      } catch (error) {
        if (init?.signal?.aborted) throw error;
        reportUnreachable();
        throw new ServerUnreachableError();
      }
      if (GATEWAY_DOWN.has(response.status) && !(response.headers.get('content-type') ?? '').includes('json')) {
        reportUnreachable();
        throw new ServerUnreachableError();
      }
      reportReachable(sentAfter);
      return response;
    },
    /** Whether a probe is waiting to be sent (a hidden page shown again sends one). */
    probing: (): boolean => timer !== undefined,
  };
}

const page = createConnectivity();
export const { serverReachable, onReachability, reportUnreachable, reportReachable, probe, reachingFetch } = page;

if (typeof window !== 'undefined') {
  window.addEventListener('online', () => {
    if (!page.serverReachable()) void probe();
  });
  document.addEventListener('visibilitychange', () => {
    if (!page.serverReachable() && !document.hidden && !page.probing()) void probe();
  });
}
