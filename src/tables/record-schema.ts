import { z } from 'zod';
import { badInput } from '../platform/errors.js';
import { idSchema, unstorableText } from '../platform/validation.js';
import type { FieldType } from './schema.js';

/** The table a reference or multi-reference field points at. */
export interface ReferenceTarget {
  id: string;
  name: string;
  sqlName: string;
}

/** A field as the record layer sees it: its column is named like the field. */
export interface RecordField {
  name: string;
  type: FieldType;
  required: boolean;
  unique: boolean;
  reference: ReferenceTarget | null;
}

/** An application table with what reads and writes of its records need. */
export interface RecordTable {
  id: string;
  name: string;
  sqlName: string;
  /** In position order. */
  fields: RecordField[];
  fieldsByName: ReadonlyMap<string, RecordField>;
}

/** Field values by field name, normalised: dates `YYYY-MM-DD`, date-times ISO 8601 in UTC. */
export type RecordValues = Record<string, unknown>;

/** A record as every reader receives it. */
export type RecordOutput = { _id: string } & RecordValues & {
  _createdAt: string;
  _updatedAt: string;
  _createdBy: string | null;
  _updatedBy: string | null;
};

/** One page of records and how many match the filter in all. */
export interface RecordPage {
  items: RecordOutput[];
  total: number;
}

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 500;
export const MAX_TEXT_LENGTH = 1_000_000;
export const MAX_MULTI_REFERENCE_IDS = 1000;

/** The system columns of every record, by their output names. */
export const SYSTEM_FIELDS = {
  _id: { column: '_id', type: 'reference' },
  _createdAt: { column: '_created_at', type: 'datetime' },
  _updatedAt: { column: '_updated_at', type: 'datetime' },
  _createdBy: { column: '_created_by', type: 'reference' },
  _updatedBy: { column: '_updated_by', type: 'reference' },
} as const satisfies Record<string, { column: string; type: FieldType }>;

export type SystemFieldName = keyof typeof SYSTEM_FIELDS;

export function isSystemField(name: string): name is SystemFieldName {
  return Object.hasOwn(SYSTEM_FIELDS, name);
}

/** One problem with one input value, named by its path (`data.amount`). */
export interface RecordIssue {
  field: string;
  message: string;
}

/** BAD_INPUT listing every issue; `details.field` names the first offending field. */
export function recordInputError(issues: readonly RecordIssue[]) {
  return badInput(issues.map((i) => `${i.field}: ${i.message}`).join('; '), { field: issues[0]!.field, issues });
}

type ValueCheck = { value: unknown } | { problem: string };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function checkDate(value: unknown): ValueCheck {
  const problem = { problem: 'must be a date like 2024-05-31' };
  if (typeof value !== 'string') return problem;
  const match = DATE.exec(value);
  if (!match) return problem;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  const valid = year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return valid ? { value } : problem;
}

function checkDateTime(value: unknown): ValueCheck {
  const problem = { problem: 'must be an ISO 8601 date-time with a time zone, like 2024-05-31T12:00:00Z' };
  if (typeof value !== 'string' || !DATETIME.test(value)) return problem;
  const time = Date.parse(value);
  return Number.isNaN(time) ? problem : { value: new Date(time).toISOString() };
}

function checkJson(value: unknown): ValueCheck {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? { problem: 'must be a JSON value' } : { value: JSON.parse(text) };
  } catch {
    return { problem: 'must be a JSON value' };
  }
}

function checkId(value: unknown): ValueCheck {
  const parsed = idSchema.safeParse(value);
  return parsed.success ? { value: parsed.data } : { problem: 'must be a record _id (a non-empty string)' };
}

function checkIds(value: unknown): ValueCheck {
  if (!Array.isArray(value)) return { problem: 'must be an array of record _ids' };
  if (value.length > MAX_MULTI_REFERENCE_IDS) return { problem: `must hold at most ${MAX_MULTI_REFERENCE_IDS} _ids` };
  const ids: string[] = [];
  for (const item of value) {
    const checked = checkId(item);
    if ('problem' in checked) return { problem: 'must be an array of record _ids (non-empty strings)' };
    ids.push(checked.value as string);
  }
  return { value: ids };
}

/** Checks and normalises one non-null value of a field type. */
export const FIELD_VALUE_CHECKS: Record<FieldType, (value: unknown) => ValueCheck> = {
  text: (value) => {
    if (typeof value !== 'string') return { problem: 'must be a string' };
    return value.length > MAX_TEXT_LENGTH ? { problem: `must be at most ${MAX_TEXT_LENGTH} characters` } : { value };
  },
  number: (value) => (typeof value === 'number' && Number.isFinite(value) ? { value } : { problem: 'must be a number' }),
  boolean: (value) => (typeof value === 'boolean' ? { value } : { problem: 'must be true or false' }),
  date: checkDate,
  datetime: checkDateTime,
  json: checkJson,
  reference: checkId,
  'multi-reference': checkIds,
};

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a record's field values against its table. `create` also needs every required field;
 * `update` takes any subset (a partial update). `null` clears an optional field; a required one
 * takes neither `null` nor text that is empty or only spaces. Unknown fields
 * (system fields included) are refused. Existence of referenced records is checked by the
 * caller inside its transaction.
 *
 * @throws BAD_INPUT naming each offending field, e.g. `data.amount: must be a number`.
 */
export function validateRecordData(table: RecordTable, data: unknown, mode: 'create' | 'update', path = 'data'): RecordValues {
  if (!isPlainObject(data)) throw recordInputError([{ field: path, message: 'must be an object of field values' }]);
  const unstorable = unstorableText(data, path);
  if (unstorable) throw recordInputError([unstorable]);
  const issues: RecordIssue[] = [];
  const values: RecordValues = {};
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined) continue;
    const field = table.fieldsByName.get(key);
    if (!field) {
      issues.push({ field: `${path}.${key}`, message: `is not a field of table '${table.name}'` });
      continue;
    }
    if (value === null) {
      if (field.required) issues.push({ field: `${path}.${key}`, message: 'is required' });
      else values[key] = null;
      continue;
    }
    const checked = FIELD_VALUE_CHECKS[field.type](value);
    if ('problem' in checked) issues.push({ field: `${path}.${key}`, message: checked.problem });
    else if (field.required && typeof checked.value === 'string' && checked.value.trim() === '') issues.push({ field: `${path}.${key}`, message: 'is required: must not be empty or only spaces' });
    else values[key] = checked.value;
  }
  if (mode === 'create') {
    for (const field of table.fields) {
      if (field.required && !(field.name in values) && !issues.some((i) => i.field === `${path}.${field.name}`)) {
        issues.push({ field: `${path}.${field.name}`, message: 'is required' });
      }
    }
  }
  if (issues.length) throw recordInputError(issues);
  return values;
}

const sortInput = z.object({
  field: z.string().min(1, 'must not be empty').max(100),
  direction: z
    .string()
    .regex(/^(asc|desc)$/i, 'must be ASC or DESC')
    .nullish()
    .transform((d) => (d?.toLowerCase() === 'desc' ? 'desc' : 'asc')),
});

/** Options of a record list. `filter` is checked against the table by the query builder. */
export const recordQueryInput = z.object({
  filter: z.record(z.string(), z.unknown()).nullish(),
  sort: z.array(sortInput).max(10, 'must have at most 10 entries').nullish(),
  limit: z
    .number()
    .int('must be an integer')
    .min(0, 'must not be negative')
    .max(MAX_LIST_LIMIT, `must be at most ${MAX_LIST_LIMIT}`)
    .nullish()
    .transform((limit) => limit ?? DEFAULT_LIST_LIMIT),
  offset: z
    .number()
    .int('must be an integer')
    .min(0, 'must not be negative')
    .max(10_000_000, 'must be at most 10000000')
    .nullish()
    .transform((offset) => offset ?? 0),
});

export type RecordQueryInput = z.input<typeof recordQueryInput>;
export type RecordQuery = z.infer<typeof recordQueryInput>;
export type RecordSort = NonNullable<RecordQuery['sort']>[number];
