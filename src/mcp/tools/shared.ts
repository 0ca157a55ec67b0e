import { z } from 'zod';

/** Serialises to plain JSON (dates become ISO strings), as structuredContent must be. */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export const recordId = (what: string) => z.string().min(1).max(100).describe(`The ${what}'s _id`);

export const confirmFlag = z.literal(true).describe('Must be true: the deletion cannot be undone');

export const patchList = z
  .array(
    z.object({
      old_str: z.string().min(1).describe('Exact text in the current code; must occur exactly once'),
      new_str: z.string().describe('Replacement text'),
    }),
  )
  .min(1)
  .max(50)
  .describe('Patches applied in order to the current code; if any does not match exactly once, nothing is written');

/** The answer of validate_feature_code and validate_hook_code. */
export const codeValidationOutput = z.object({
  valid: z.boolean(),
  errors: z.array(z.record(z.string(), z.unknown())),
  warnings: z.array(z.record(z.string(), z.unknown())),
});
