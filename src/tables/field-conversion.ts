import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../platform/db/index.js';
import { FIELD_VALUE_CHECKS } from './record-schema.js';
import { REFERENCE_FIELD_TYPES, type FieldType } from './schema.js';

/**
 * How a field's stored values become values of another type when its type changes (issue 20).
 * A value converts when its text, as readers see it (numbers as written, dates `YYYY-MM-DD`,
 * date-times ISO 8601 in UTC, JSON strings unquoted), is a value the new type takes:
 *
 * | from \ to   | text   | number | boolean | date | datetime | json |
 * |-------------|--------|--------|---------|------|----------|------|
 * | text        |        | text   | text    | text | text     | text |
 * | number      | always |        | never   | never| never    | always |
 * | boolean     | always | never  |         | never| never    | always |
 * | date        | always | never  | never   |      | always   | always |
 * | datetime    | always | never  | never   | midnight |      | always |
 * | json        | always | text   | text    | text | text     |      |
 *
 * "text": when the text parses as the new type (number `12.5`, `-3`, `1e3`; boolean `true` or
 * `false` in any case; date `2024-05-31`; datetime with a time zone; JSON for text -> json),
 * leading and trailing spaces ignored; blank text becomes no value (null). "midnight": a date-time at 00:00 UTC becomes its date.
 * "never": the text of such a value never parses (a number is not a date), so only a field without
 * values converts. `reference` and `multi-reference` convert into each other (one id becomes a list
 * of one; a list of at most one id becomes that id) and, like a change of the referenced table, to
 * or from any other type only while no record holds a value.
 */
export type FieldConversion =
  | { kind: 'always'; using: (column: RawBuilder<unknown>) => RawBuilder<unknown> }
  | {
      kind: 'checked';
      /** The text of a stored value that `accepts` judges. */
      probe: (column: RawBuilder<unknown>) => RawBuilder<unknown>;
      accepts: (text: string) => boolean;
      using: (column: RawBuilder<unknown>) => RawBuilder<unknown>;
    }
  | { kind: 'emptyOnly' };

/** The conversion of `from` values into `to` values; `sameTarget` is false when a reference changes its table. */
export function fieldConversion(from: FieldType, to: FieldType, sameTarget = true): FieldConversion {
  if (REFERENCE_FIELD_TYPES.has(from) || REFERENCE_FIELD_TYPES.has(to)) return referenceConversion(from, to, sameTarget);
  if (to === 'text') return { kind: 'always', using: (column) => textOf(from, column) };
  if (to === 'json' && from !== 'text') {
    return { kind: 'always', using: (column) => (from === 'number' || from === 'boolean' ? sql`to_jsonb(${column})` : sql`to_jsonb(${textOf(from, column)})`) };
  }
  if (from === 'date' && to === 'datetime') return { kind: 'always', using: (column) => sql`(${column}::timestamp at time zone 'UTC')` };
  const probe = from === 'datetime' && to === 'date' ? midnightDate : (column: RawBuilder<unknown>) => textOf(from, column);
  const accepted = TEXT_ACCEPTED[to as Exclude<FieldType, 'text' | 'reference' | 'multi-reference'>];
  // Blank text (and a JSON null or "") is no value: it becomes null, as an empty cell would.
  return {
    kind: 'checked',
    probe,
    accepts: (text) => unspaced(text) === '' || accepted(text),
    using: (column) => sql`case when btrim(${probe(column)}) = '' then null else ${castText(to, probe(column))} end`,
  };
}

function referenceConversion(from: FieldType, to: FieldType, sameTarget: boolean): FieldConversion {
  if (!sameTarget || !REFERENCE_FIELD_TYPES.has(from) || !REFERENCE_FIELD_TYPES.has(to)) return { kind: 'emptyOnly' };
  if (from === to) return { kind: 'always', using: (column) => column };
  if (to === 'multi-reference') return { kind: 'always', using: (column) => sql`case when ${column} is null then null else array[${column}] end` };
  return {
    kind: 'checked',
    probe: (column) => sql`array_to_string(${column}, ', ')`,
    accepts: (text) => !text.includes(','),
    using: (column) => sql`${column}[1]`,
  };
}

/** Spaces around a value are ignored, as PostgreSQL's btrim() drops them; other white space is not. */
const unspaced = (text: string) => text.replace(/^ +| +$/g, '');
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

const TEXT_ACCEPTED: Record<'number' | 'boolean' | 'date' | 'datetime' | 'json', (text: string) => boolean> = {
  number: (text) => NUMBER.test(unspaced(text)) && Number.isFinite(Number(unspaced(text))),
  boolean: (text) => /^(true|false)$/i.test(unspaced(text)),
  date: (text) => !('problem' in FIELD_VALUE_CHECKS.date(unspaced(text))),
  datetime: (text) => !('problem' in FIELD_VALUE_CHECKS.datetime(unspaced(text))),
  // PostgreSQL's jsonb refuses \u0000, which JSON.parse takes.
  json: (text) => !/\\u0000/.test(text) && parsesAsJson(text),
};

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The text readers see of a stored value of `type`. */
function textOf(type: FieldType, column: RawBuilder<unknown>): RawBuilder<unknown> {
  switch (type) {
    case 'date':
      return sql`to_char(${column}, 'YYYY-MM-DD')`;
    case 'datetime':
      return sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    case 'json':
      return sql`(${column} #>> '{}')`;
    case 'multi-reference':
      return sql`array_to_string(${column}, ', ')`;
    default:
      return sql`${column}::text`;
  }
}

/** A date-time's date when it is at midnight UTC, else its full text (which no date check accepts). */
function midnightDate(column: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`case when (${column} at time zone 'UTC')::time = '00:00' then to_char(${column} at time zone 'UTC', 'YYYY-MM-DD') else ${textOf('datetime', column)} end`;
}

function castText(to: FieldType, text: RawBuilder<unknown>): RawBuilder<unknown> {
  switch (to) {
    case 'boolean':
      return sql`cast(lower(btrim(${text})) as boolean)`;
    case 'json':
      return sql`cast(${text} as jsonb)`;
    case 'number':
      return sql`cast(btrim(${text}) as double precision)`;
    default:
      return sql`cast(btrim(${text}) as ${sql.raw(to === 'date' ? 'date' : 'timestamptz')})`;
  }
}

/** Stored values a checked conversion refuses: how many, and the first by record `_id`. */
export interface UnconvertibleValues {
  count: number;
  first: { recordId: string; value: string } | undefined;
}

const SCAN_BATCH = 2000;

/**
 * Reads every stored value of `column` (in batches, by `_id`) and judges its text with the
 * conversion's `accepts`. Only `checked` conversions need it.
 */
export async function unconvertibleValues(db: Db, sqlName: string, column: string, conversion: Extract<FieldConversion, { kind: 'checked' }>): Promise<UnconvertibleValues> {
  const found: UnconvertibleValues = { count: 0, first: undefined };
  for (let after = ''; ; ) {
    const { rows } = await sql<{ _id: string; value: string | null }>`
      select _id, ${conversion.probe(sql.ref(column))} as value from ${sql.table(sqlName)}
      where ${sql.ref(column)} is not null and _id > ${after} order by _id limit ${SCAN_BATCH}`.execute(db);
    for (const row of rows) {
      // A JSON null has no text: it becomes no value.
      if (row.value === null || conversion.accepts(row.value)) continue;
      found.count += 1;
      found.first ??= { recordId: row._id, value: row.value };
    }
    if (rows.length < SCAN_BATCH) return found;
    after = rows.at(-1)!._id;
  }
}
