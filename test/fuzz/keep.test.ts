import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { checkKeeping, readKept } from './keep.js';

const dir = mkdtempSync(join(tmpdir(), 'trellis-keep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('keeping failing fuzz cases', () => {
  it('keeps the shrunk counterexample of a failure, then replays it first on every run until it is fixed', async () => {
    const file = join(dir, 'kept.json');
    const settings = { numRuns: 200, seed: 42 };
    // A "bug": strings holding a NUL are mishandled.
    let fixed = false;
    const property = () => fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 10 }), fc.integer(), async (text: string, _n: number) => {
      if (!fixed && text.includes('\u0000')) throw new Error('NUL reached the database');
    });

    await expect(checkKeeping(file, 'strings', property(), settings)).rejects.toThrow(/FUZZ_SEED=42\), kept in .*kept\.json: NUL reached the database/);
    const kept = readKept(file).strings!;
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ seed: 42, error: 'NUL reached the database', counterexample: ['\u0000', 0] });

    // A run whose generated cases would all pass still fails on the kept case.
    const replayed: unknown[] = [];
    const clean = fc.asyncProperty(fc.constant('clean'), fc.integer(), async (text, n) => {
      replayed.push([text, n]);
      if (!fixed && text.includes('\u0000')) throw new Error('NUL reached the database');
    });
    await expect(checkKeeping(file, 'strings', clean, { numRuns: 5, seed: 1 })).rejects.toThrow(/a kept case of 'strings' fails again/);
    expect(replayed).toEqual([['\u0000', 0]]);

    // Fixed: the kept case passes, then the generated ones run; the file keeps the case.
    fixed = true;
    replayed.length = 0;
    await checkKeeping(file, 'strings', clean, { numRuns: 5, seed: 1 });
    expect(replayed[0]).toEqual(['\u0000', 0]);
    expect(replayed).toHaveLength(6);
    expect(readKept(file).strings).toHaveLength(1);
  });
});
