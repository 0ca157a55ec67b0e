import { describe, expect, it } from 'vitest';
import { MAX_IN_FLIGHT } from './sandbox-scheduling.js';
import { CodeCache, RUN_SLOTS } from './sandbox-wire.js';

describe('run states', () => {
  it('has a slot for each run a worker may hold, so that no two of its runs share one', () => {
    expect(MAX_IN_FLIGHT).toBeLessThan(RUN_SLOTS);
  });
});

describe('CodeCache', () => {
  it('drops the least recently used code past its limit, and code larger than the limit at once', () => {
    const cache = new CodeCache<string>(10, (code) => code.length);
    cache.put('a', 'aaaa');
    cache.put('b', 'bbbb');
    expect(cache.use('a')).toBe('aaaa'); // a is now the most recently used
    cache.put('c', 'cccc'); // 12 characters: b goes
    expect([cache.has('a'), cache.has('b'), cache.has('c')]).toEqual([true, false, true]);
    cache.put('a', 'aaaaaaa'); // replaced, 11 characters with c: c goes
    expect([cache.has('a'), cache.has('c')]).toEqual([true, false]);
    cache.put('d', 'd'.repeat(11)); // alone past the limit: everything goes, itself too
    expect([cache.has('a'), cache.has('d')]).toEqual([false, false]);
    expect(cache.use('d')).toBeUndefined();
  });

  it('keeps what a plain least-recently-used list keeps, a run of the same hook in a row included', () => {
    const cache = new CodeCache<string>(40, (code) => code.length);
    // The reference: keys oldest first.
    let order: string[] = [];
    const sizes = new Map<string, number>();
    let seed = 11;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648);
    for (let step = 0; step < 5000; step++) {
      // Often the same hook again, as under a flood of one webhook.
      const key = next() % 3 === 0 ? (order.at(-1) ?? 'hook-0') : `hook-${next() % 7}`;
      const code = key.repeat(1 + (next() % 3));
      if (next() % 2 === 0 && cache.has(key)) {
        expect(cache.use(key)).toBeDefined();
        order = [...order.filter((held) => held !== key), key];
      } else {
        cache.put(key, code);
        sizes.set(key, code.length);
        order = [...order.filter((held) => held !== key), key];
        let chars = order.reduce((sum, held) => sum + sizes.get(held)!, 0);
        while (chars > 40) chars -= sizes.get(order.shift()!)!;
      }
      for (let k = 0; k < 7; k++) expect(cache.has(`hook-${k}`), `step ${step}`).toBe(order.includes(`hook-${k}`));
    }
  });

  it('stays the same as a copy that records only sizes, for any sequence of the same steps', () => {
    const codes = new CodeCache<string>(50, (code) => code.length);
    const sizes = new CodeCache<number>(50, (size) => size);
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648);
    for (let step = 0; step < 2000; step++) {
      const key = `hook-${next() % 9}`;
      const code = key.repeat(1 + (Number(key.slice(5)) % 4));
      // As the pool and the worker do: send the code when the copy does not hold it.
      if (sizes.has(key)) {
        sizes.use(key);
        expect(codes.use(key)).toBe(code);
      } else {
        sizes.put(key, code.length);
        codes.put(key, code);
      }
      for (let k = 0; k < 9; k++) expect(codes.has(`hook-${k}`)).toBe(sizes.has(`hook-${k}`));
    }
  });
});
