import { sql, type RawBuilder } from 'kysely';
import {
  FIELD_VALUE_CHECKS,
  SYSTEM_FIELDS,
  isPlainObject,
  isSystemField,
  recordInputError,
  type RecordIssue,
  type RecordOutput,
  type RecordSort,
  type RecordTable,
  type RecordValues,
} from './record-schema.js';
import type { FieldType } from './schema.js';
import { forbidden } from '../platform/errors.js';
import { unstorableText } from '../platform/validation.js';

/** The operators a filter accepts on a field of each type. */
export const FILTER_OPERATORS: Record<FieldType, readonly FilterOperator[]> = {
  text: ['eq', 'ne', 'in', 'contains', 'isNull'],
  number: ['eq', 'ne', 'in', 'lt', 'lte', 'gt', 'gte', 'isNull'],
  boolean: ['eq', 'ne', 'isNull'],
  date: ['eq', 'ne', 'in', 'lt', 'lte', 'gt', 'gte', 'isNull'],
  datetime: ['eq', 'ne', 'in', 'lt', 'lte', 'gt', 'gte', 'isNull'],
  json: ['isNull'],
  reference: ['eq', 'ne', 'in', 'isNull'],
  'multi-reference': ['contains', 'isNull'],
};

export type FilterOperator = 'eq' | 'ne' | 'in' | 'lt' | 'lte' | 'gt' | 'gte' | 'contains' | 'isNull';

const COMPARISONS: Partial<Record<FilterOperator, string>> = { lt: '<', lte: '<=', gt: '>', gte: '>=' };

/** The SQL type of each field type's column. */
export const SQL_TYPES: Record<FieldType, string> = {
  text: 'text',
  number: 'double precision',
  boolean: 'boolean',
  date: 'date',
  datetime: 'timestamptz',
  json: 'jsonb',
  reference: 'text',
  'multi-reference': 'text[]',
};

/** Types that may be sorted on: everything but JSON and id arrays. */
export const SORTABLE_TYPES: ReadonlySet<FieldType> = new Set(['text', 'number', 'boolean', 'date', 'datetime', 'reference']);

const MAX_FILTER_DEPTH = 8;
const MAX_FILTER_CONDITIONS = 200;

/** A value as an SQL parameter of the field's column type. */
export function sqlValue(type: FieldType, value: unknown): RawBuilder<unknown> {
  if (value === null) return sql`null`;
  const param = type === 'json' ? JSON.stringify(value) : value;
  return sql`cast(${param} as ${sql.raw(SQL_TYPES[type])})`;
}

/** The select list of a record: dates read back as `YYYY-MM-DD` text. */
export function selectList(table: RecordTable): RawBuilder<unknown> {
  const fields = table.fields.map((field) =>
    field.type === 'date' ? sql`${sql.ref(field.name)}::text as ${sql.ref(field.name)}` : sql.ref(field.name),
  );
  return sql.join([...Object.values(SYSTEM_FIELDS).map((system) => sql.ref(system.column)), ...fields]);
}

/** A row as read with `selectList`, shaped as `{ _id, ...fields, _createdAt, ... }`. */
export function toRecordOutput(table: RecordTable, row: Record<string, unknown>): RecordOutput {
  const record: Record<string, unknown> = { _id: row._id };
  for (const field of table.fields) {
    const value = row[field.name] ?? null;
    record[field.name] = field.type === 'datetime' && value !== null ? isoString(value) : value;
  }
  record._createdAt = isoString(row._created_at);
  record._updatedAt = isoString(row._updated_at);
  record._createdBy = row._created_by ?? null;
  record._updatedBy = row._updated_by ?? null;
  return record as RecordOutput;
}

/** The field values of a record, without system fields. */
export function fieldValues(table: RecordTable, record: RecordOutput): RecordValues {
  return Object.fromEntries(table.fields.map((field) => [field.name, record[field.name] ?? null]));
}

function isoString(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

/**
 * Turns a filter into an SQL condition. A filter maps field names (system fields included) to
 * operators, e.g. `{ amount: { gte: 10 }, _or: [{ status: { eq: "open" } }, { status: { isNull: true } }] }`.
 * Conditions of one object are combined with AND; an operator given `null` is ignored. `_and`
 * and `_or` start with `_`, which no field name does.
 *
 * @throws BAD_INPUT naming the offending part, e.g. `filter.amount.lt: must be a number`.
 */
export function filterCondition(table: RecordTable, filter: unknown, options: FilterOptions = {}): RawBuilder<unknown> {
  const path = options.path ?? 'filter';
  const unstorable = unstorableText(filter, path);
  if (unstorable) throw recordInputError([unstorable]);
  const state: FilterState = { issues: [], hiddenIssues: [], conditions: 0, hidden: options.hidden };
  const condition = objectCondition(table, filter, path, 0, state);
  if (state.hiddenIssues.length) throw hiddenFieldError(state.hiddenIssues);
  if (state.issues.length) throw recordInputError(state.issues);
  return condition;
}

export interface FilterOptions {
  /** Where the filter sits in the input, for messages; `filter` by default. */
  path?: string;
  /** Fields hidden from the caller (D32): a filter naming one is FORBIDDEN. */
  hidden?: ReadonlySet<string>;
}

interface FilterState {
  issues: RecordIssue[];
  /** Fields hidden from the caller: FORBIDDEN rather than BAD_INPUT, as a rule refuses. */
  hiddenIssues: RecordIssue[];
  conditions: number;
  hidden: ReadonlySet<string> | undefined;
}

/** The message for a field hidden from the caller, in filters and sorts. */
export const HIDDEN_FIELD_MESSAGE = 'is hidden from your role: it cannot be filtered or sorted on';

/** FORBIDDEN naming each hidden field a filter or sort used; it says nothing of the values. */
function hiddenFieldError(issues: readonly RecordIssue[]) {
  return forbidden(issues.map((i) => `${i.field}: ${i.message}`).join('; '), { field: issues[0]!.field });
}

function objectCondition(table: RecordTable, filter: unknown, path: string, depth: number, state: FilterState): RawBuilder<unknown> {
  if (filter === null || filter === undefined) return sql`true`;
  if (!isPlainObject(filter)) return issue(state, path, 'must be an object');
  if (depth > MAX_FILTER_DEPTH) return issue(state, path, `must not nest _and/_or deeper than ${MAX_FILTER_DEPTH} levels`);
  const parts: RawBuilder<unknown>[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (value === null || value === undefined) continue;
    if (key === '_and' || key === '_or') {
      parts.push(groupCondition(table, key, value, `${path}.${key}`, depth, state));
      continue;
    }
    const target = filterTarget(table, key);
    if (!target) {
      issue(state, `${path}.${key}`, `is not a field of table '${table.name}'`);
      continue;
    }
    if (state.hidden?.has(key)) {
      state.hiddenIssues.push({ field: `${path}.${key}`, message: HIDDEN_FIELD_MESSAGE });
      continue;
    }
    parts.push(fieldCondition(target, value, `${path}.${key}`, state));
  }
  return parts.length ? sql`(${sql.join(parts, sql` and `)})` : sql`true`;
}

function groupCondition(
  table: RecordTable,
  kind: '_and' | '_or',
  value: unknown,
  path: string,
  depth: number,
  state: FilterState,
): RawBuilder<unknown> {
  if (!Array.isArray(value)) return issue(state, path, 'must be an array of filters');
  const parts = value.map((item, index) => objectCondition(table, item, `${path}.${index}`, depth + 1, state));
  if (!parts.length) return sql`true`;
  return sql`(${sql.join(parts, kind === '_and' ? sql` and ` : sql` or `)})`;
}

interface FilterTarget {
  column: string;
  type: FieldType;
}

function filterTarget(table: RecordTable, key: string): FilterTarget | undefined {
  if (isSystemField(key)) return SYSTEM_FIELDS[key];
  const field = table.fieldsByName.get(key);
  return field ? { column: field.name, type: field.type } : undefined;
}

function fieldCondition(target: FilterTarget, operators: unknown, path: string, state: FilterState): RawBuilder<unknown> {
  if (!isPlainObject(operators)) return issue(state, path, 'must be an object of operators');
  const allowed = FILTER_OPERATORS[target.type];
  const parts: RawBuilder<unknown>[] = [];
  for (const [operator, value] of Object.entries(operators)) {
    if (value === null || value === undefined) continue;
    if (!(allowed as readonly string[]).includes(operator)) {
      issue(state, `${path}.${operator}`, `is not an operator for ${target.type} fields (use ${allowed.join(', ')})`);
      continue;
    }
    state.conditions += 1;
    if (state.conditions > MAX_FILTER_CONDITIONS) return issue(state, path, `filter has more than ${MAX_FILTER_CONDITIONS} conditions`);
    const condition = operatorCondition(target, operator as FilterOperator, value, `${path}.${operator}`, state);
    if (condition) parts.push(condition);
  }
  return parts.length ? sql`(${sql.join(parts, sql` and `)})` : sql`true`;
}

function operatorCondition(
  target: FilterTarget,
  operator: FilterOperator,
  value: unknown,
  path: string,
  state: FilterState,
): RawBuilder<unknown> | undefined {
  const column = sql.ref(target.column);
  if (operator === 'isNull') {
    if (typeof value !== 'boolean') return issue(state, path, 'must be true or false');
    return value ? sql`${column} is null` : sql`${column} is not null`;
  }
  if (operator === 'in') return inCondition(target, value, path, state);
  if (target.type === 'multi-reference') {
    const id = checked(state, path, 'reference', value);
    return id === undefined ? undefined : sql`${sqlValue('reference', id)} = any(${column})`;
  }
  const operand = checked(state, path, target.type, value);
  if (operand === undefined) return undefined;
  if (operator === 'contains') return sql`strpos(lower(${column}), lower(${sqlValue('text', operand)})) > 0`;
  if (operator === 'eq') return sql`${column} = ${sqlValue(target.type, operand)}`;
  if (operator === 'ne') return sql`${column} is distinct from ${sqlValue(target.type, operand)}`;
  return sql`${column} ${sql.raw(COMPARISONS[operator]!)} ${sqlValue(target.type, operand)}`;
}

function inCondition(target: FilterTarget, value: unknown, path: string, state: FilterState): RawBuilder<unknown> | undefined {
  if (!Array.isArray(value)) return issue(state, path, 'must be an array');
  if (value.length > 1000) return issue(state, path, 'must hold at most 1000 values');
  const values: unknown[] = [];
  for (const [index, item] of value.entries()) {
    const operand = checked(state, `${path}.${index}`, target.type, item);
    if (operand === undefined) return undefined;
    values.push(operand);
  }
  if (!values.length) return sql`false`;
  return sql`${sql.ref(target.column)} = any(cast(${values} as ${sql.raw(`${SQL_TYPES[target.type]}[]`)}))`;
}

function checked(state: FilterState, path: string, type: FieldType, value: unknown): unknown {
  const result = FIELD_VALUE_CHECKS[type](value);
  if ('problem' in result) {
    issue(state, path, result.problem);
    return undefined;
  }
  return result.value;
}

function issue(state: FilterState, field: string, message: string): RawBuilder<unknown> {
  state.issues.push({ field, message });
  return sql`false`;
}

/**
 * The ORDER BY list: the given fields (records without a value last in either direction), then
 * `_id` so pages are stable.
 *
 * @throws BAD_INPUT for an unknown or unsortable field, e.g. `sort.0.field: ...`.
 */
export function orderBy(table: RecordTable, sort: readonly RecordSort[] | null | undefined, hidden?: ReadonlySet<string>): RawBuilder<unknown> {
  const issues: RecordIssue[] = [];
  const hiddenIssues: RecordIssue[] = [];
  const parts: RawBuilder<unknown>[] = [];
  for (const [index, entry] of (sort ?? []).entries()) {
    if (hidden?.has(entry.field)) {
      hiddenIssues.push({ field: `sort.${index}.field`, message: `'${entry.field}' ${HIDDEN_FIELD_MESSAGE}` });
      continue;
    }
    const target = filterTarget(table, entry.field);
    if (!target || !SORTABLE_TYPES.has(target.type)) {
      const reason = target ? `${target.type} fields cannot be sorted on` : `is not a field of table '${table.name}'`;
      issues.push({ field: `sort.${index}.field`, message: `'${entry.field}' ${reason}` });
      continue;
    }
    parts.push(sql`${sql.ref(target.column)} ${sql.raw(entry.direction)} nulls last`);
  }
  if (hiddenIssues.length) throw hiddenFieldError(hiddenIssues);
  if (issues.length) throw recordInputError(issues);
  parts.push(sql`${sql.ref('_id')} asc`);
  return sql.join(parts);
}
