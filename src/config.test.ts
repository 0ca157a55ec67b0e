import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

describe('TRELLIS_HOOK_WORKERS', () => {
  it('defaults to 8 and takes a whole number from 1 to 256', () => {
    expect(loadConfig({}).hookWorkers).toBe(8);
    expect(loadConfig({ TRELLIS_HOOK_WORKERS: '2' }).hookWorkers).toBe(2);
  });

  it.each([['0'], ['257'], ['1.5'], ['many']])('refuses %s with a message naming the variable', (value) => {
    expect(() => loadConfig({ TRELLIS_HOOK_WORKERS: value })).toThrow(/Invalid environment:\n {2}TRELLIS_HOOK_WORKERS: /);
  });
});
