import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ChangeBus } from './change-bus.js';
import type { DatabaseHandle } from './db/index.js';
import { ReadCache, ReadValue } from './read-cache.js';

const offline = { notify: async () => {}, listen: async () => {} } as unknown as DatabaseHandle;

function setup(ttlMs = 1000) {
  const changes = new ChangeBus(offline, pino({ level: 'silent' }));
  return { changes, cache: new ReadCache<string>(changes, { ttlMs, maxEntries: 2 }) };
}

describe('ReadCache', () => {
  it('serves a stored answer until a configuration change on this replica', async () => {
    const { changes, cache } = setup();
    cache.set('a', 'one', cache.generation());
    expect(cache.get('a')).toBe('one');
    await changes.publish('config');
    expect(cache.get('a')).toBeUndefined();
  });

  it('does not store an answer whose read overlapped a change', async () => {
    const { changes, cache } = setup();
    const generation = cache.generation();
    await changes.publish('auth');
    cache.set('a', 'stale', generation);
    expect(cache.get('a')).toBeUndefined();
  });

  it('forgets an answer older than its time to live', () => {
    const { cache } = setup(1000);
    cache.set('a', 'one', cache.generation(), 0);
    expect(cache.get('a', 1000)).toBe('one');
    expect(cache.get('a', 1001)).toBeUndefined();
  });

  it('keeps at most maxEntries answers, dropping the oldest', () => {
    const { cache } = setup();
    for (const key of ['a', 'b', 'c']) cache.set(key, key, cache.generation());
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, 'b', 'c']);
  });

  it('counts an entry written again as the newest when it must drop one', () => {
    const { cache } = setup();
    cache.set('a', 'a', cache.generation());
    cache.set('b', 'b', cache.generation());
    cache.set('a', 'a2', cache.generation());
    cache.set('c', 'c', cache.generation());
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual(['a2', undefined, 'c']);
  });

  it('forgets a deleted entry, and keeps the others', () => {
    const { cache } = setup();
    cache.set('a', 'a', cache.generation());
    cache.set('b', 'b', cache.generation());
    cache.delete('a');
    expect([cache.get('a'), cache.get('b')]).toEqual([undefined, 'b']);
  });

  it('keeps entries for good with an infinite time to live, until a change', async () => {
    const changes = new ChangeBus(offline, pino({ level: 'silent' }));
    const cache = new ReadCache<string>(changes, { ttlMs: Number.POSITIVE_INFINITY });
    cache.set('a', 'one', cache.generation(), 0);
    expect(cache.get('a', Number.MAX_SAFE_INTEGER)).toBe('one');
    await changes.publish('config');
    expect(cache.get('a')).toBeUndefined();
  });

  describe('load', () => {
    const deferred = () => {
      let resolve!: (value: string) => void;
      let reject!: (error: Error) => void;
      const promise = new Promise<string>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    };

    it('shares one read between concurrent callers and keeps its value', async () => {
      const { cache } = setup();
      const read = deferred();
      let reads = 0;
      const loader = () => {
        reads += 1;
        return read.promise;
      };
      const first = cache.load('a', loader);
      const second = cache.load('a', loader);
      read.resolve('one');
      expect([await first, await second]).toEqual(['one', 'one']);
      expect(await cache.load('a', loader)).toBe('one');
      expect(reads).toBe(1);
    });

    it('does not keep a read that overlapped a change, and reads anew after it', async () => {
      const { changes, cache } = setup();
      const read = deferred();
      const stale = cache.load('a', () => read.promise);
      await changes.publish('config');
      read.resolve('stale');
      expect(await stale).toBe('stale');
      expect(await cache.load('a', async () => 'fresh')).toBe('fresh');
    });

    it('does not keep a failed read', async () => {
      const { cache } = setup();
      await expect(cache.load('a', async () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
      expect(await cache.load('a', async () => 'back')).toBe('back');
    });

    it('reads anew once the value is older than the time to live', async () => {
      const { cache } = setup(1000);
      await cache.load('a', async () => 'old', 0);
      expect(await cache.load('a', async () => 'new', 1000)).toBe('old');
      expect(await cache.load('a', async () => 'new', 1001)).toBe('new');
    });

    it('drops its entries only for the topics it was given', async () => {
      const changes = new ChangeBus(offline, pino({ level: 'silent' }));
      const cache = new ReadCache<string>(changes, { topics: ['auth'] });
      await cache.load('a', async () => 'kept');
      await changes.publish('config');
      expect(cache.get('a')).toBe('kept');
      await changes.publish('auth');
      expect(cache.get('a')).toBeUndefined();
    });
  });
});

describe('ReadValue', () => {
  it('holds one value until a change of its topics, sharing one read between concurrent callers', async () => {
    const changes = new ChangeBus(offline, pino({ level: 'silent' }));
    const value = new ReadValue<string>(changes, { topics: ['config'] });
    let reads = 0;
    const read = async () => `read ${++reads}`;
    expect(value.get()).toBeUndefined();
    expect(await Promise.all([value.load(read), value.load(read)])).toEqual(['read 1', 'read 1']);
    expect(await value.load(read)).toBe('read 1');
    expect(value.get()).toBe('read 1');
    await changes.publish('auth');
    expect(value.get()).toBe('read 1');
    await changes.publish('config');
    expect(value.get()).toBeUndefined();
    expect(await value.load(read)).toBe('read 2');
  });
});
