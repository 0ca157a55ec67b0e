import type { ChangeBus, ChangeTopic } from './change-bus.js';

export interface ReadCacheOptions {
  /** How long an entry is trusted should a change notification be lost. */
  ttlMs?: number;
  maxEntries?: number;
  /** The changes that make entries stale. */
  topics?: readonly ChangeTopic[];
}

/** Should a change notification be lost, no cached read is older than this. */
export const DEFAULT_CACHE_TTL_MS = 30_000;

/**
 * Values read from the database, valid until the next change of their topics on any replica (the
 * ChangeBus hears other replicas through PostgreSQL NOTIFY, and treats a lost listening connection
 * as a change of everything) or for `ttlMs` at most. The one cache of the service: every cache of
 * configuration, keys or tokens is one of these. A read that overlapped a change is never stored:
 * each read is tagged with the generation it started in.
 */
export class ReadCache<T> {
  private readonly entries = new Map<string, { value: T; storedAt: number }>();
  private readonly loading = new Map<string, { generation: number; value: Promise<T> }>();
  private generationCounter = 0;
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(changes: ChangeBus, options: ReadCacheOptions = {}) {
    this.ttlMs = options.ttlMs ?? DEFAULT_CACHE_TTL_MS;
    this.maxEntries = options.maxEntries ?? 1000;
    const clear = () => {
      this.generationCounter += 1;
      this.entries.clear();
      this.loading.clear();
    };
    for (const topic of options.topics ?? ['config', 'auth']) changes.on(topic, clear);
  }

  /** The current generation; pass it back to `set` for a read that started now. */
  generation(): number {
    return this.generationCounter;
  }

  get(key: string, now = Date.now()): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now - entry.storedAt <= this.ttlMs) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Stores `value` read in `generation` (see `generation()`); when full, the entry written longest ago goes. */
  set(key: string, value: T, generation: number, now = Date.now()): void {
    if (generation !== this.generationCounter) return;
    // Written again, an entry becomes the newest.
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, storedAt: now });
  }

  /** Forgets `key`: what was stored no longer holds, and the next read goes to the database. */
  delete(key: string): void {
    this.entries.delete(key);
  }

  /**
   * The cached value of `key`, or what `read()` gives: concurrent callers share one read, and its
   * value is kept only if no change came while it ran. A failed read is not kept.
   *
   * @example const tables = await cache.load('tables', () => loadTables(db));
   */
  load(key: string, read: () => Promise<T>, now = Date.now()): Promise<T> {
    const cached = this.get(key, now);
    if (cached !== undefined) return Promise.resolve(cached);
    const generation = this.generationCounter;
    const pending = this.loading.get(key);
    if (pending?.generation === generation) return pending.value;
    const value = read();
    const entry = { generation, value };
    this.loading.set(key, entry);
    const settle = () => {
      if (this.loading.get(key) === entry) this.loading.delete(key);
    };
    value.then((result) => {
      settle();
      this.set(key, result, generation, now);
    }, settle);
    return value;
  }
}

/**
 * One value read from the database, valid until the next change of its topics (see ReadCache):
 * the single-value form, for what a service holds once (its tables, its hooks, its rules).
 *
 * @example const hooks = await this.hooks.load(() => loadHooks(db));
 */
export class ReadValue<T> {
  private readonly cache: ReadCache<T>;

  constructor(changes: ChangeBus, options: Omit<ReadCacheOptions, 'maxEntries'> = {}) {
    this.cache = new ReadCache(changes, { ...options, maxEntries: 1 });
  }

  /** The stored value, or what `read()` gives (concurrent callers share it; kept only if no change came while it ran). */
  load(read: () => Promise<T>, now = Date.now()): Promise<T> {
    return this.cache.load(VALUE, read, now);
  }

  /** The stored value; undefined when none is, or it is older than the time to live. */
  get(now = Date.now()): T | undefined {
    return this.cache.get(VALUE, now);
  }
}

const VALUE = 'value';
