import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ChangeBus } from './change-bus.js';
import type { DatabaseHandle } from './db/index.js';
import { ReadCache } from './read-cache.js';

const offline = { notify: async () => {}, listen: async () => {} } as unknown as DatabaseHandle;

function setup(ttlMs = 1000) {
  const changes = new ChangeBus(offline, pino({ level: 'silent' }));
  return { changes, cache: new ReadCache<string>(changes, ttlMs, 2) };
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
});
