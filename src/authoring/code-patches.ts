import { FILE_HEADERS_ONLY, formatPatch, structuredPatch, type StructuredPatch } from 'diff';
import { badInput } from '../platform/errors.js';

/** One edit: replace the only occurrence of `old_str` with `new_str`. */
export interface CodePatch {
  old_str: string;
  new_str: string;
}

/**
 * Applies `patches` in order, each to the code as the previous ones left it. Every `old_str` must
 * be non-empty and occur exactly once (overlapping occurrences count); `new_str` is inserted
 * literally (`$&` and friends have no special meaning). Pure: either all patches apply and the
 * new code is returned, or nothing is.
 *
 * @throws BAD_INPUT naming the patch, e.g. `patches.1.old_str: not found in the current code`,
 *   with details { field, patchIndex, matches } (matches counted up to 100).
 * @example applyPatches('a = 1', [{ old_str: '1', new_str: '2' }]) // 'a = 2'
 */
export function applyPatches(code: string, patches: readonly CodePatch[]): string {
  return patches.reduce(applyPatch, code);
}

function applyPatch(code: string, patch: CodePatch, patchIndex: number): string {
  const field = `patches.${patchIndex}.old_str`;
  if (patch.old_str === '') throw badInput(`${field}: must not be empty`, { field, patchIndex, matches: 0 });
  const at = code.indexOf(patch.old_str);
  if (at === -1) throw badInput(`${field}: not found in the current code`, { field, patchIndex, matches: 0 });
  const matches = countOccurrences(code, patch.old_str, at);
  if (matches > 1) {
    const places = matches < MAX_COUNTED_MATCHES ? `${matches} places` : `${MAX_COUNTED_MATCHES} or more places`;
    throw badInput(`${field}: matches ${places}; include more surrounding lines to make it unique`, { field, patchIndex, matches });
  }
  return code.slice(0, at) + patch.new_str + code.slice(at + patch.old_str.length);
}

/** Counting stops here: `old_str` can be long, and one more match already makes it ambiguous. */
const MAX_COUNTED_MATCHES = 100;

function countOccurrences(code: string, text: string, first: number): number {
  let count = 0;
  for (let at = first; at !== -1 && count < MAX_COUNTED_MATCHES; at = code.indexOf(text, at + 1)) count += 1;
  return count;
}

/** Beyond this many changed lines the diff stops searching and shows the whole file replaced (bounded time). */
const MAX_EDIT_LINES = 2000;

/**
 * A unified diff (3 lines of context) from `before` to `after`, with `a/<path>` and `b/<path>`
 * headers; '' when they are equal. When more than 2000 lines changed, the diff is one hunk that
 * replaces the whole file, so large rewrites cannot make it slow.
 *
 * @example unifiedDiff('feature/x.jsx', 'a\n', 'b\n') // '--- a/feature/x.jsx\n+++ b/feature/x.jsx\n@@ -1,1 +1,1 @@\n-a\n+b\n'
 */
export function unifiedDiff(path: string, before: string, after: string): string {
  if (before === after) return '';
  const [oldFileName, newFileName] = [`a/${path}`, `b/${path}`];
  const patch =
    structuredPatch(oldFileName, newFileName, before, after, undefined, undefined, { context: 3, maxEditLength: MAX_EDIT_LINES }) ??
    wholeFileReplacement(oldFileName, newFileName, before, after);
  return formatPatch(patch, FILE_HEADERS_ONLY);
}

function wholeFileReplacement(oldFileName: string, newFileName: string, before: string, after: string): StructuredPatch {
  const removed = prefixedLines(before, '-');
  const added = prefixedLines(after, '+');
  const hunk = {
    oldStart: removed.count === 0 ? 0 : 1,
    oldLines: removed.count,
    newStart: added.count === 0 ? 0 : 1,
    newLines: added.count,
    lines: [...removed.lines, ...added.lines],
  };
  return { oldFileName, newFileName, oldHeader: undefined, newHeader: undefined, hunks: [hunk] };
}

function prefixedLines(text: string, prefix: string): { count: number; lines: string[] } {
  if (text === '') return { count: 0, lines: [] };
  const lines = text.split('\n');
  const endsWithNewline = lines.at(-1) === '';
  if (endsWithNewline) lines.pop();
  const prefixed = lines.map((line) => prefix + line);
  return { count: lines.length, lines: endsWithNewline ? prefixed : [...prefixed, '\\ No newline at end of file'] };
}
