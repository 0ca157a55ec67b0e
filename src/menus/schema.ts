import { z } from 'zod';
import { idSchema } from '../platform/validation.js';

/** Menu entries point at features: `/feature/<feature _id>`. */
export const MENU_PATH_PATTERN = /^\/feature\/[^/]+$/;
export const MENU_PATH_PREFIX = '/feature/';
export const MAX_MENU_ENTRIES = 100;

const menuEntry = z.object({
  label: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  path: z.string().max(200, 'must be at most 200 characters').regex(MENU_PATH_PATTERN, 'must have the form /feature/<feature_id>').describe('/feature/<feature_id> of an existing feature'),
});

export const upsertMenuInput = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters').describe('The menu to create, or to replace the entries of'),
  entries: z.array(menuEntry).max(MAX_MENU_ENTRIES, `must have at most ${MAX_MENU_ENTRIES} entries`),
  /** Sort order among menus; an existing menu keeps its position when omitted. */
  position: z.number().int('must be an integer').min(0, 'must be at least 0').max(1_000_000, 'must be at most 1000000').optional().describe('Sort order among menus'),
});

export const deleteMenuInput = z.object({
  _id: idSchema,
  confirm: z.literal(true, { message: 'must be true to delete' }),
});

export type UpsertMenuInput = z.input<typeof upsertMenuInput>;
export type DeleteMenuInput = z.input<typeof deleteMenuInput>;
