import { sql } from 'kysely';
import type { Principal } from '../access/permissions.js';
import type { Db } from '../platform/db/index.js';
import type { Row } from '../platform/db/types.js';
import { badInput, conflict } from '../platform/errors.js';
import { assertDistinctName } from '../platform/names.js';
import {
  addColumnReference,
  changeColumnType,
  countDuplicatedValues,
  countMissingValues,
  countRecords,
  dropColumnReference,
  lockRecordTable,
  renameRecordColumn,
  setColumnRequired,
  setColumnUnique,
} from './ddl.js';
import { fieldConversion, unconvertibleValues } from './field-conversion.js';
import { REFERENCE_FIELD_TYPES, type FieldType } from './schema.js';
import { assertRulesFitChangedTable, renameFieldInRules } from './table-access.js';

/** A change of one field as `updateTableField` parsed it: what is given changes. */
export interface FieldChange {
  name?: string;
  label?: string;
  description?: string;
  type?: FieldType;
  /** The referenced table, resolved. */
  reference?: { id: string; name: string; sqlName: string };
  required?: boolean;
  unique?: boolean;
}

/** What a change did, for the audit trail: each changed property as { from, to }. */
export type FieldChanges = Record<string, { from: unknown; to: unknown }>;

/**
 * Applies `change` to `field` of `table`, in the caller's transaction: the column (renamed, its
 * values converted, NOT NULL and UNIQUE set or dropped), the field's metadata row and the roles'
 * rules that name it. A refusal throws, and the caller's transaction undoes what came before it.
 * `showValues` says whether messages may quote stored values (a caller bound by no data-access rule).
 *
 * @throws BAD_INPUT for values that do not convert, CONFLICT for a required field with empty
 * records, a unique one with repeated values, or rules that no longer fit.
 */
export async function applyFieldChange(
  trx: Db,
  principal: Principal,
  table: Row<'app_tables'>,
  fields: readonly Row<'app_fields'>[],
  field: Row<'app_fields'>,
  change: FieldChange,
  showValues: boolean,
): Promise<FieldChanges> {
  const changes = changedProperties(field, change);
  if (!Object.keys(changes).length) return changes;
  const structural = ['name', 'type', 'referenceTableId', 'required', 'unique'].some((key) => key in changes);
  if (!structural) {
    await updateFieldRow(trx, field.id, change);
    return changes;
  }
  await lockRecordTable(trx, table.sql_name);
  let column = field.name;
  if (change.name !== undefined && 'name' in changes) {
    const others = fields.filter((other) => other.id !== field.id).map((other) => other.name);
    assertDistinctName(change.name, others, { what: 'field', field: 'name' });
    await renameRecordColumn(trx, table.sql_name, field.name, change.name);
    await renameFieldInRules(trx, principal, { id: table.id, name: table.name }, field.name, change.name);
    column = change.name;
  }
  const type = change.type ?? (field.type as FieldType);
  if ('type' in changes || 'referenceTableId' in changes) await convertColumn(trx, table, field, column, type, change.reference, showValues);
  if ('required' in changes) await changeRequired(trx, table.sql_name, column, type, change.required!);
  if ('unique' in changes) await changeUnique(trx, table.sql_name, column, change.unique!);
  await updateFieldRow(trx, field.id, change);
  if ('type' in changes) await assertRulesFitChangedTable(trx, table.id);
  return changes;
}

function changedProperties(field: Row<'app_fields'>, change: FieldChange): FieldChanges {
  const changes: FieldChanges = {};
  const compare = (key: string, from: unknown, to: unknown) => {
    if (to !== undefined && to !== from) changes[key] = { from, to };
  };
  compare('name', field.name, change.name);
  compare('label', field.label, change.label);
  compare('description', field.description, change.description);
  compare('type', field.type, change.type);
  const type = change.type ?? field.type;
  const reference = REFERENCE_FIELD_TYPES.has(type as FieldType) ? (change.reference?.id ?? field.reference_table_id) : null;
  compare('referenceTableId', field.reference_table_id, reference ?? undefined);
  if (field.reference_table_id && !reference) changes.referenceTableId = { from: field.reference_table_id, to: null };
  compare('required', field.required, change.required);
  compare('unique', field.unique, change.unique);
  return changes;
}

async function updateFieldRow(trx: Db, fieldId: string, change: FieldChange): Promise<void> {
  const type = change.type;
  await trx
    .updateTable('app_fields')
    .set({
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.label !== undefined ? { label: change.label } : {}),
      ...(change.description !== undefined ? { description: change.description } : {}),
      ...(type !== undefined ? { type, ...(REFERENCE_FIELD_TYPES.has(type) ? {} : { reference_table_id: null }) } : {}),
      ...(change.reference ? { reference_table_id: change.reference.id } : {}),
      ...(change.required !== undefined ? { required: change.required } : {}),
      ...(change.unique !== undefined ? { unique: change.unique } : {}),
    })
    .where('id', '=', fieldId)
    .execute();
}

/** Converts the column's values to `type` (and its reference to `reference`), or refuses naming what does not convert. */
async function convertColumn(
  trx: Db,
  table: Row<'app_tables'>,
  field: Row<'app_fields'>,
  column: string,
  type: FieldType,
  reference: FieldChange['reference'],
  showValues: boolean,
): Promise<void> {
  const from = field.type as FieldType;
  const targetId = REFERENCE_FIELD_TYPES.has(type) ? (reference?.id ?? field.reference_table_id) : null;
  const conversion = fieldConversion(from, type, !REFERENCE_FIELD_TYPES.has(from) || targetId === field.reference_table_id);
  if (conversion.kind === 'emptyOnly') {
    const holding = await countRecords(trx, table.sql_name, column);
    if (holding > 0) {
      throw badInput(
        `type: field '${column}' holds a value in ${records(holding)}: a reference field changes to or from another type, or to another table, only while no record holds a value in it`,
        { field: 'type', records: holding },
      );
    }
  }
  if (conversion.kind === 'checked') {
    const refused = await unconvertibleValues(trx, table.sql_name, column, conversion);
    if (refused.count > 0) {
      const example = showValues && refused.first ? `, e.g. ${JSON.stringify(refused.first.value)} (record ${refused.first.recordId})` : '';
      throw badInput(`type: ${refused.count === 1 ? '1 value' : `${refused.count} values`} of field '${column}' cannot change from ${from} to ${type}${example}; change or clear ${refused.count === 1 ? 'it' : 'them'} first`, {
        field: 'type',
        values: refused.count,
      });
    }
  }
  if (field.type === 'reference') await dropColumnReference(trx, table.sql_name, column);
  const using = conversion.kind === 'emptyOnly' ? sql`null` : conversion.using(sql.ref(column));
  await withDataErrors(column, type, () => changeColumnType(trx, table.sql_name, column, type, using));
  if (type === 'reference' && targetId) {
    const target = reference ?? (await trx.selectFrom('app_tables').select(['id', 'name', 'sql_name as sqlName']).where('id', '=', targetId).executeTakeFirstOrThrow());
    await withDataErrors(column, type, () => addColumnReference(trx, table.sql_name, column, target.sqlName));
  }
}

/**
 * What PostgreSQL refuses in a conversion the checks let through (a multi-reference id whose record
 * is gone, an empty list in a required field): BAD_INPUT, without the value.
 */
async function withDataErrors(column: string, type: FieldType, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === '23503') throw badInput(`type: some values of field '${column}' name records that no longer exist, so it cannot become a reference; clear them first`, { field: 'type' });
    if (code === '23502') throw badInput(`type: some records would have no value in required field '${column}' as a ${type}; fill them or make the field optional first`, { field: 'type' });
    if (code === '23505') throw badInput(`type: field '${column}' is unique and some of its values would be equal as a ${type}; make them distinct or the field not unique first`, { field: 'type' });
    if (typeof code === 'string' && code.startsWith('22')) throw badInput(`type: some values of field '${column}' cannot change to ${type}; change or clear them first`, { field: 'type' });
    throw error;
  }
}

async function changeRequired(trx: Db, sqlName: string, column: string, type: FieldType, required: boolean): Promise<void> {
  if (required) {
    const missing = await countMissingValues(trx, sqlName, column, type);
    if (missing > 0) {
      throw conflict(`required: ${records(missing)} ${missing === 1 ? 'has' : 'have'} no value in '${column}'; fill ${missing === 1 ? 'it' : 'them'} first or keep the field optional`, {
        field: 'required',
        records: missing,
      });
    }
  }
  await setColumnRequired(trx, sqlName, column, required);
}

async function changeUnique(trx: Db, sqlName: string, column: string, unique: boolean): Promise<void> {
  if (unique) {
    const repeated = await countDuplicatedValues(trx, sqlName, column);
    if (repeated > 0) {
      throw conflict(`unique: ${repeated === 1 ? '1 value appears' : `${repeated} values appear`} in more than one record of '${column}'; make them distinct first`, {
        field: 'unique',
        values: repeated,
      });
    }
  }
  await setColumnUnique(trx, sqlName, column, unique);
}

function records(count: number): string {
  return count === 1 ? '1 record' : `${count} records`;
}
