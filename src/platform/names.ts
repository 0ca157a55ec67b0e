import unhomoglyph from 'unhomoglyph';
import { z } from 'zod';
import { badInput, conflict } from './errors.js';
import { unstorableText } from './validation.js';

/**
 * The one rule for names people read (features, menus and their entries, roles, users' display
 * names, tables, fields, hooks): no character a reader cannot see or that reorders what they see,
 * and no name that looks like the name of another record of the same kind (D33).
 */

/** Bidirectional controls (U+061C, U+200E-200F, U+202A-202E, U+2066-2069): they reorder what is shown. */
const BIDI_CONTROL = /\p{Bidi_Control}/u;
/**
 * Characters that show as nothing: controls, format characters (zero-width spaces and joiners),
 * default-ignorable code points (fillers, variation selectors, tags), line and paragraph
 * separators, and the blank Braille pattern, which fonts draw as empty.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/u;
/** Spaces other than U+0020 look like it (or like nothing) and so make a second name look like the first. */
const OTHER_SPACE = /(?! )\p{Zs}/u;
const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
const SPACE_RUN = /\s+/gu;

/**
 * Why `name` may not name something people read, or undefined when it may.
 *
 * @example readableNameProblem('Pay\u200Broll') // 'must not contain U+200B (an invisible character)'
 */
export function readableNameProblem(name: string): string | undefined {
  for (const [pattern, kind] of [
    [BIDI_CONTROL, 'a bidirectional control'],
    [INVISIBLE, 'an invisible character'],
    [OTHER_SPACE, 'a space other than the ordinary one'],
  ] as const) {
    const found = pattern.exec(name)?.[0];
    if (found !== undefined) return `must not contain ${codePoint(found)} (${kind})`;
  }
  return undefined;
}

/**
 * A zod schema for a name people read: trimmed, at most `max` characters, refused (with
 * `readableNameProblem`'s message) when it holds an invisible or bidirectional character, or
 * with `unstorableText`'s when PostgreSQL could not store it. `min` is 1 unless the name may be empty.
 */
export function readableName(max: number, { min = 1 } = {}) {
  const trimmed = z.string().trim();
  const text = (min > 0 ? trimmed.min(min, 'must not be empty') : trimmed).max(max, `must be at most ${max} characters`);
  return text.superRefine((name, ctx) => {
    const problem = unstorableText(name, '')?.message ?? readableNameProblem(name);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/**
 * The keys under which names look the same: the confusable skeleton of Unicode TR39 (NFD,
 * default-ignorables removed, each character replaced by its prototype from confusables.txt, NFD
 * again) of the name after NFKC, and of that name folded to one letter case. Names are unique in
 * any letter case, so both count: `PayroII` reads as `Payroll` (capital I as l) and `PAYRO11` as
 * `payroll`; folding alone would part `I` from `l`, which look alike only as a capital.
 *
 * @example readsLike('P\u0430yroll', 'Payroll') // true
 */
export function nameSkeletons(name: string): readonly [string, string] {
  const shown = name.normalize('NFKC').replace(SPACE_RUN, ' ').trim();
  // Upper then lower case comes close to Unicode case folding: ß and SS, ς and Σ meet.
  return [skeleton(shown), skeleton(shown.toUpperCase().toLowerCase())];
}

/** Whether two names read the same: equal in any letter case, or confusable (see `nameSkeletons`). */
export function readsLike(a: string, b: string): boolean {
  const keys = new Set(nameSkeletons(a));
  return nameSkeletons(b).some((key) => keys.has(key));
}

function skeleton(text: string): string {
  return unhomoglyph(text.normalize('NFD').replace(DEFAULT_IGNORABLE, '')).normalize('NFD');
}

/** What a clash names: the kind of record (`feature`, `user`) and the input field. */
export interface NameKind {
  what: string;
  field: string;
}

/**
 * Refuses `name` when one of `others` (the names of the other records of the same kind, the
 * record being renamed left out) reads the same.
 *
 * @throws CONFLICT `<field>: a <what> named '<other>' already exists` when the names are equal in
 *   any letter case; BAD_INPUT `<field>: looks the same as the existing <what> '<other>'` when only
 *   their confusable skeletons are; both with details { field, clashesWith: other }.
 */
export function assertDistinctName(name: string, others: readonly string[], kind: NameKind): void {
  const taken = others.find((other) => other.toLowerCase() === name.toLowerCase());
  if (taken !== undefined) throw conflict(`${kind.field}: a ${kind.what} named '${taken}' already exists`, { field: kind.field, clashesWith: taken });
  const lookalike = others.find((other) => readsLike(name, other));
  if (lookalike === undefined) return;
  throw badInput(`${kind.field}: looks the same as the existing ${kind.what} '${lookalike}'; choose a name that reads differently`, {
    field: kind.field,
    clashesWith: lookalike,
  });
}

function codePoint(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}
