import { z } from 'zod';
import { readableName, readsLike } from '../platform/names.js';
import { idOutput, idSchema, isoTime } from '../platform/validation.js';

/** Menu entries point at features: `/feature/<feature _id>`. */
export const MENU_PATH_PATTERN = /^\/feature\/[^/]+$/;
export const MENU_PATH_PREFIX = '/feature/';
export const MAX_MENU_ENTRIES = 100;

const menuEntry = z.object({
  label: readableName(100),
  path: z.string().max(200, 'must be at most 200 characters').regex(MENU_PATH_PATTERN, 'must have the form /feature/<feature_id>').describe('/feature/<feature_id> of an existing feature'),
});

/** Two entries of one menu may not read the same (D33): a reader could not tell which is which. */
function refuseLookalikeLabels(entries: readonly { label: string }[], ctx: z.RefinementCtx): void {
  entries.forEach((entry, index) => {
    const first = entries.findIndex((earlier, at) => at < index && readsLike(earlier.label, entry.label));
    if (first < 0) return;
    ctx.addIssue({ code: 'custom', path: [index, 'label'], message: `looks the same as the label '${entries[first]!.label}' of entry ${first}` });
  });
}

export const upsertMenuInput = z.object({
  name: readableName(100).describe('The menu to create, or to replace the entries of'),
  entries: z.array(menuEntry).max(MAX_MENU_ENTRIES, `must have at most ${MAX_MENU_ENTRIES} entries`).superRefine(refuseLookalikeLabels),
  /** Sort order among menus; an existing menu keeps its position when omitted. */
  position: z.number().int('must be an integer').min(0, 'must be at least 0').max(1_000_000, 'must be at most 1000000').optional().describe('Sort order among menus'),
});

export const deleteMenuInput = z.object({
  _id: idSchema,
  confirm: z.literal(true, { message: 'must be true to delete' }),
});

/** An entry of a menu in an answer. */
export const menuEntryOutput = z.object({ label: z.string(), path: z.string().describe('A feature path: /feature/<feature_id>.') });

/** A menu in an answer. */
export const menuOutput = z.object({
  _id: idOutput,
  name: z.string(),
  entries: z.array(menuEntryOutput),
  position: z.number().int(),
  createdAt: isoTime,
  updatedAt: isoTime,
});

export type UpsertMenuInput = z.input<typeof upsertMenuInput>;
export type DeleteMenuInput = z.input<typeof deleteMenuInput>;
