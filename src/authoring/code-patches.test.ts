import { applyPatch as applyUnifiedDiff } from 'diff';
import { describe, expect, it } from 'vitest';
import { applyPatches, unifiedDiff } from './code-patches.js';
import { TrellisError } from '../platform/errors.js';

const CODE = 'const a = 1;\nconst b = 2;\nexport default () => a + b;\n';

function thrown(run: () => unknown): TrellisError {
  try {
    run();
  } catch (error) {
    if (error instanceof TrellisError) return error;
    throw error;
  }
  throw new Error('expected a TrellisError');
}

describe('applyPatches', () => {
  it('replaces the only occurrence of old_str', () => {
    expect(applyPatches(CODE, [{ old_str: 'const b = 2;', new_str: 'const b = 3;' }])).toBe(CODE.replace('2', '3'));
  });

  it('returns the code unchanged for no patches', () => {
    expect(applyPatches(CODE, [])).toBe(CODE);
  });

  it('deletes old_str when new_str is empty', () => {
    expect(applyPatches(CODE, [{ old_str: 'const b = 2;\n', new_str: '' }])).toBe('const a = 1;\nexport default () => a + b;\n');
  });

  it('applies patches in order, each to the code the previous one left', () => {
    const result = applyPatches(CODE, [
      { old_str: 'const b = 2;', new_str: 'const b = 2;\nconst c = 3;' },
      { old_str: 'const c = 3;', new_str: 'const c = 4;' },
      { old_str: 'a + b', new_str: 'a + b + c' },
    ]);
    expect(result).toBe('const a = 1;\nconst b = 2;\nconst c = 4;\nexport default () => a + b + c;\n');
  });

  it.each([
    ['$&', 'x = "$&"'],
    ['$1', 'x = "$1"'],
    ['$$', 'x = "$$"'],
    ["$'", "x = \"$'\""],
    ['$`', 'x = "$`"'],
  ])('inserts new_str literally, without treating %s as a replacement pattern', (_what, newStr) => {
    expect(applyPatches('let y;\n', [{ old_str: 'y', new_str: newStr }])).toBe(`let ${newStr};\n`);
  });

  it.each([
    ['the first patch is empty', [{ old_str: '', new_str: 'x' }], 0, 'patches.0.old_str: must not be empty', 0],
    ['old_str is missing', [{ old_str: 'const z', new_str: 'x' }], 0, 'patches.0.old_str: not found in the current code', 0],
    [
      'old_str matches 3 places',
      [{ old_str: ';', new_str: '' }],
      0,
      'patches.0.old_str: matches 3 places; include more surrounding lines to make it unique',
      3,
    ],
    [
      'old_str matches overlapping places',
      [{ old_str: 'aa', new_str: 'b' }],
      0,
      'patches.0.old_str: matches 2 places; include more surrounding lines to make it unique',
      2,
      'xaaay',
    ],
    [
      'a later patch targets text an earlier patch removed',
      [
        { old_str: 'const b = 2;', new_str: 'const b = 3;' },
        { old_str: 'const b = 2;', new_str: 'const b = 4;' },
      ],
      1,
      'patches.1.old_str: not found in the current code',
      0,
    ],
    [
      'a later patch becomes ambiguous after an earlier one',
      [
        { old_str: 'const a = 1;', new_str: 'const a = 1; // a + b' },
        { old_str: 'a + b', new_str: 'b + a' },
      ],
      1,
      'patches.1.old_str: matches 2 places; include more surrounding lines to make it unique',
      2,
    ],
  ])('rejects the whole edit when %s', (_what, patches, patchIndex, message, matches, code = CODE) => {
    const error = thrown(() => applyPatches(code, patches));
    expect({ code: error.code, status: error.status, message: error.message, details: error.details }).toEqual({
      code: 'BAD_INPUT',
      status: 400,
      message,
      details: { field: `patches.${patchIndex}.old_str`, patchIndex, matches },
    });
  });

  it('stops counting matches at 100 so a long old_str stays fast', () => {
    const code = 'a'.repeat(1_000_000);
    const started = performance.now();
    const error = thrown(() => applyPatches(code, [{ old_str: 'a'.repeat(500_000), new_str: '' }]));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(error.message).toBe('patches.0.old_str: matches 100 or more places; include more surrounding lines to make it unique');
    expect(error.details).toEqual({ field: 'patches.0.old_str', patchIndex: 0, matches: 100 });
  });
});

describe('unifiedDiff', () => {
  const lines = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

  it('is empty when nothing changed', () => {
    expect(unifiedDiff('feature/x.jsx', CODE, CODE)).toBe('');
  });

  it('has a/ and b/ headers and a hunk with 3 lines of context', () => {
    const before = lines(10);
    const after = before.replace('line 5\n', 'line five\n');
    expect(unifiedDiff('feature/orders.jsx', before, after)).toBe(
      [
        '--- a/feature/orders.jsx',
        '+++ b/feature/orders.jsx',
        '@@ -2,7 +2,7 @@',
        ' line 2',
        ' line 3',
        ' line 4',
        '-line 5',
        '+line five',
        ' line 6',
        ' line 7',
        ' line 8',
        '',
      ].join('\n'),
    );
  });

  it('makes separate hunks for changes far apart', () => {
    const before = lines(30);
    const after = before.replace('line 3\n', 'line three\n').replace('line 27\n', 'line twenty-seven\n');
    expect(unifiedDiff('f.js', before, after).match(/^@@ .* @@$/gm)).toEqual(['@@ -1,6 +1,6 @@', '@@ -24,7 +24,7 @@']);
  });

  it('marks a missing newline at the end of the file', () => {
    expect(unifiedDiff('hook/h.js', 'a', 'b')).toBe('--- a/hook/h.js\n+++ b/hook/h.js\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n');
  });

  it.each([
    ['a one-line change', lines(50), lines(50).replace('line 20\n', 'changed\n')],
    ['a new file', '', 'a\nb\n'],
    ['an emptied file', 'a\nb', ''],
    ['a rewrite of more than 2000 lines', lines(3000), lines(3000).replaceAll('line', 'row')],
    ['a rewrite without final newlines', lines(3000).trimEnd(), lines(2500).replaceAll('line', 'row').trimEnd()],
  ])('produces a diff that turns before into after (%s)', (_what, before, after) => {
    expect(applyUnifiedDiff(before, unifiedDiff('f.jsx', before, after))).toBe(after);
  });

  it('shows a rewrite of more than 2000 lines as one hunk replacing the whole file, quickly', () => {
    const before = lines(25_000);
    const after = before.replaceAll('line', 'row');
    const started = performance.now();
    const diff = unifiedDiff('f.jsx', before, after);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(diff.match(/^@@ .* @@$/gm)).toEqual(['@@ -1,25000 +1,25000 @@']);
  });
});
