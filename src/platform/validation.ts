import { z } from 'zod';
import { TrellisError, badInput } from './errors.js';

/** Parses `input` with `schema`; a failure becomes BAD_INPUT naming each offending field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    field: issue.path.map(String).join('.') || '(input)',
    message: issue.message,
  }));
  throw badInput(issues.map((i) => `${i.field}: ${i.message}`).join('; '), { issues });
}

/** A record id as accepted in every adapter. */
export const idSchema = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');

/** Identifier-like names (tables, fields): a letter, then letters, digits or `_`. */
export const identifierSchema = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_]{0,62}$/, 'must start with a letter and use only letters, digits and _ (at most 63)');

/**
 * Refuses a text longer than `limitBytes` of UTF-8 (spec section 8's code and value limits).
 *
 * @throws PAYLOAD_TOO_LARGE naming `field`, e.g. `content: must be at most 200 KB (204800 bytes of
 *   UTF-8); got 204801 bytes`, with details { field, limitBytes, bytes }.
 */
export function assertMaxBytes(field: string, text: string, limitBytes: number, limitLabel: string): void {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= limitBytes) return;
  throw new TrellisError(
    'PAYLOAD_TOO_LARGE',
    `${field}: must be at most ${limitLabel} (${limitBytes} bytes of UTF-8); got ${bytes} bytes`,
    { field, limitBytes, bytes },
  );
}
