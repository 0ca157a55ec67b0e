import { z } from 'zod';
import { TrellisError, badInput } from './errors.js';

/**
 * Parses `input` with `schema`; a failure becomes BAD_INPUT naming each offending field. Text that
 * PostgreSQL cannot store (see `unstorableText`) is refused first, wherever it is in the input,
 * unless `storableText` is false: an envelope (a GraphQL request, a CLI command) leaves that to the
 * operation it carries, which names the field.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, options: { storableText?: boolean } = {}): z.infer<S> {
  if (options.storableText !== false) assertStorableText(input, '');
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    field: issue.path.map(String).join('.') || '(input)',
    message: issue.message,
  }));
  throw badInput(issues.map((i) => `${i.field}: ${i.message}`).join('; '), { issues });
}

/** A surrogate that is not half of a pair: with the `u` flag, a pair is one code point and never matches. */
const LONE_SURROGATE = /\p{Cs}/u;

/** How deep `unstorableText` looks into an input; deeper parts are refused by the JSON depth limit first. */
const TEXT_CHECK_DEPTH = 200;

/**
 * The first text in `value` (strings and object keys, at any depth) that PostgreSQL refuses: a NUL
 * character (U+0000), which text and JSON cannot hold, or a lone UTF-16 surrogate, which is not
 * Unicode. `path` names where it is, e.g. `data.notes` or `fields.0.name`.
 *
 * @example unstorableText({ a: ['x\u0000'] }, 'data') // { field: 'data.a.0', message: 'must not contain the NUL character (U+0000)' }
 */
export function unstorableText(value: unknown, path: string, depth = 0): { field: string; message: string } | undefined {
  if (typeof value === 'string') return textProblem(value, path);
  if (typeof value !== 'object' || value === null || depth > TEXT_CHECK_DEPTH) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const field = path ? `${path}.${key}` : key;
    const problem = textProblem(key, field) ?? unstorableText(item, field, depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

/** Throws BAD_INPUT naming the field when `value` holds text PostgreSQL cannot store. */
export function assertStorableText(value: unknown, path: string): void {
  const problem = unstorableText(value, path);
  if (problem) throw badInput(`${problem.field || '(input)'}: ${problem.message}`, { field: problem.field || '(input)', issues: [problem] });
}

function textProblem(text: string, field: string): { field: string; message: string } | undefined {
  if (text.includes('\0')) return { field, message: 'must not contain the NUL character (U+0000)' };
  if (LONE_SURROGATE.test(text)) return { field, message: 'must not contain an unpaired UTF-16 surrogate (it is not valid Unicode)' };
  return undefined;
}

/**
 * The schemas of ids: a record's `_id` or reference (D15), a page's cursor. An adapter that tells
 * ids apart from other text (GraphQL's ID) reads it; a schema made from one (`.describe()`) is found
 * through it, a wrapper (`.optional()`) is looked through by the reader.
 */
export const idValues = z.registry<{ kind: 'id' }>();

/** A record id as accepted in every adapter. */
export const idSchema = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
idValues.add(idSchema, { kind: 'id' });

/** An argument naming a record of `what` (D15): its `_id` or its unique name; the description tools/list shows. */
export const recordRef = (what: string) => idSchema.describe(`The ${what}'s _id, or its name (any letter case)`);

/**
 * The `before` argument of a paged listing: the `nextCursor` of the previous page, a positive whole
 * number of at most 16 digits (a row id), parsed into a number so the caller reads rows with a
 * smaller id. Anything else fails with `must be the nextCursor of a previous page`.
 *
 * @example z.object({ before: cursorSchema.optional() }).parse({ before: '42' }) // { before: 42 }
 */
export const cursorSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,15}$/, 'must be the nextCursor of a previous page')
  .transform(Number);
idValues.add(cursorSchema, { kind: 'id' });

/**
 * The page size of a paged listing: a whole number from 1 to `max`, `defaultSize` when omitted;
 * anything else fails with `must be a whole number from 1 to <max>` (`must be at most <max>` above it).
 *
 * @example z.object({ limit: pageSizeSchema(500, 50) }).parse({}) // { limit: 50 }
 */
export function pageSizeSchema(max: number, defaultSize: number) {
  const message = `must be a whole number from 1 to ${max}`;
  return z.number({ error: message }).int(message).min(1, message).max(max, `must be at most ${max}`).default(defaultSize);
}

/** The flag every deletion needs. */
export const confirmTrue = z.literal(true, { message: 'must be true to delete' }).describe('Must be true: the deletion cannot be undone');

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

// The values of answers: what MCP's outputSchema shows and the builder's GraphQL types are written
// from (src/graphql/builder/output-types.ts), one definition per record (src/<domain>/schema.ts).

/** A record's `_id` or a reference to one in an answer: GraphQL's ID. */
export const idOutput = z.string();
idValues.add(idOutput, { kind: 'id' });

/** A time in an answer: an ISO 8601 string in MCP's JSON, GraphQL's DateTime. */
export const isoTime = z.string().describe('ISO 8601 time');

/** Who created or last changed a record. */
export const userRef = idOutput.nullable().describe("A user's _id; null for the system or an integration");
