import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../platform/db/index.js';
import { conflict, forbidden } from '../platform/errors.js';
import { storedRules, type RecordScope } from './access-rules.js';
import type { AccessAction, TableAccessRules } from './access-schema.js';
import type { RecordVersion } from './record-versions.js';
import { selectList, sqlValue, toRecordOutput } from './record-query.js';
import { recordInputError, type RecordField, type RecordIssue, type RecordOutput, type RecordTable, type RecordValues } from './record-schema.js';
import type { FieldType } from './schema.js';

/**
 * The record layer's statements: the tables and access rules it reads, and the rows of the
 * application's tables it selects, inserts and updates within a caller's scope (D32). No
 * permission check here: RecordService checks before it calls these.
 */

/** Every application table with its fields, oldest first. Internal: no permission check. */
export async function loadRecordTables(db: Db): Promise<RecordTable[]> {
  const [tables, fields] = await Promise.all([
    db.selectFrom('app_tables').select(['id', 'name', 'sql_name']).orderBy('created_at').orderBy('id').execute(),
    db
      .selectFrom('app_fields')
      .select(['table_id', 'name', 'type', 'required', 'unique', 'reference_table_id'])
      .orderBy('table_id')
      .orderBy('position')
      .execute(),
  ]);
  const targets = new Map(tables.map((t) => [t.id, { id: t.id, name: t.name, sqlName: t.sql_name }]));
  return tables.map((table) => {
    const tableFields: RecordField[] = fields
      .filter((field) => field.table_id === table.id)
      .map((field) => ({
        name: field.name,
        type: field.type as FieldType,
        required: field.required,
        unique: field.unique,
        reference: field.reference_table_id ? (targets.get(field.reference_table_id) ?? null) : null,
      }));
    return {
      id: table.id,
      name: table.name,
      sqlName: table.sql_name,
      fields: tableFields,
      fieldsByName: new Map(tableFields.map((field) => [field.name, field])),
    };
  });
}

export async function loadTableIndex(db: Db): Promise<Map<string, RecordTable>> {
  const index = new Map<string, RecordTable>();
  for (const table of await loadRecordTables(db)) {
    index.set(table.id, table);
    index.set(table.name.toLowerCase(), table);
  }
  return index;
}

/** Every role's rules on every table, by `tableId:roleId`. */
export async function loadAccessRules(db: Db): Promise<Map<string, TableAccessRules>> {
  const rows = await db.selectFrom('table_access').select(['table_id', 'role_id', 'rules']).execute();
  return new Map(rows.map((row) => [`${row.table_id}:${row.role_id}`, storedRules(row.rules)]));
}

/** A condition within a scope's `where`. */
export function within(condition: RawBuilder<unknown>, scope: RecordScope): RawBuilder<unknown> {
  return scope.where ? sql`${condition} and ${scope.where}` : condition;
}

/** The RETURNING item that aborts the statement when the written row is outside the scope's check (WITH CHECK). */
function checkReturned(scope: RecordScope, action: AccessAction): RawBuilder<unknown> {
  return scope.check ? sql`, trellis_access_check(${scope.check}, ${action}) as _checked` : sql``;
}

/** The record and its row version (`xmin`, changed by every write of the row). */
export async function selectRecordVersion(db: Db, table: RecordTable, id: string, scope: RecordScope): Promise<RecordVersion | undefined> {
  const result = await sql<Record<string, unknown>>`select ${selectList(table)}, xmin::text as _version from ${sql.table(table.sqlName)} where ${within(sql`_id = ${id}`, scope)}`.execute(db);
  return versioned(table, result.rows[0]);
}

function versioned(table: RecordTable, row: Record<string, unknown> | undefined): RecordVersion | undefined {
  return row ? { record: toRecordOutput(table, row), version: String(row._version) } : undefined;
}

export async function selectRecord(db: Db, table: RecordTable, id: string, lock: boolean, scope: RecordScope): Promise<RecordOutput | undefined> {
  const forUpdate = lock ? sql` for update` : sql``;
  const result = await sql<Record<string, unknown>>`select ${selectList(table)} from ${sql.table(table.sqlName)} where ${within(sql`_id = ${id}`, scope)}${forUpdate}`.execute(db);
  const row = result.rows[0];
  return row ? toRecordOutput(table, row) : undefined;
}

export async function insertRecord(trx: Db, table: RecordTable, id: string, values: RecordValues, author: string | null, scope: RecordScope): Promise<RecordVersion> {
  const fields = table.fields.filter((field) => field.name in values);
  const columns = sql.join([sql.ref('_id'), sql.ref('_created_by'), sql.ref('_updated_by'), ...fields.map((f) => sql.ref(f.name))]);
  const params = sql.join([sql`${id}`, sql`${author}`, sql`${author}`, ...fields.map((f) => sqlValue(f.type, values[f.name]))]);
  const result = await writeRow(table, () =>
    sql<Record<string, unknown>>`insert into ${sql.table(table.sqlName)} (${columns}) values (${params}) returning ${selectList(table)}, xmin::text as _version${checkReturned(scope, 'create')}`.execute(trx),
  );
  return versioned(table, result.rows[0])!;
}

export async function updateRecordRow(
  trx: Db,
  table: RecordTable,
  id: string,
  values: RecordValues,
  author: string | null,
  scope: RecordScope,
  version?: string,
): Promise<RecordVersion | undefined> {
  const assignments = table.fields
    .filter((field) => field.name in values)
    .map((field) => sql`${sql.ref(field.name)} = ${sqlValue(field.type, values[field.name])}`);
  const set = sql.join([...assignments, sql`_updated_at = now()`, sql`_updated_by = ${author}`]);
  const result = await writeRow(table, () =>
    sql<Record<string, unknown>>`update ${sql.table(table.sqlName)} set ${set} where ${within(sql`_id = ${id}`, scope)}${version === undefined ? sql`` : sql` and xmin = ${version}::xid`} returning ${selectList(table)}, xmin::text as _version${checkReturned(scope, 'update')}`.execute(trx),
  );
  return versioned(table, result.rows[0]);
}

/** Runs an INSERT or UPDATE, turning a unique violation into CONFLICT naming the field. */
async function writeRow<T>(table: RecordTable, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isAccessCheckFailure(error)) {
      throw forbidden(`The ${table.name} record as written would be outside what your role may ${accessCheckAction(error)}`, { table: table.name });
    }
    const field = uniqueViolationField(table, error);
    if (!field) throw error;
    throw conflict(`data.${field.name}: another ${table.name} record already has this ${field.name}`, { field: `data.${field.name}` });
  }
}

const ACCESS_CHECK_FAILURE = /^trellis access check: (create|update) outside the rule/;

function isAccessCheckFailure(error: unknown): boolean {
  const pg = error as { code?: unknown; message?: unknown };
  return pg?.code === '42501' && typeof pg.message === 'string' && ACCESS_CHECK_FAILURE.test(pg.message);
}

function accessCheckAction(error: unknown): string {
  return ACCESS_CHECK_FAILURE.exec((error as { message: string }).message)?.[1] ?? 'write';
}

function uniqueViolationField(table: RecordTable, error: unknown): RecordField | undefined {
  const pg = error as { code?: unknown; detail?: unknown; constraint?: unknown };
  if (pg?.code !== '23505') return undefined;
  const column = typeof pg.detail === 'string' ? /^Key \("?(.+?)"?\)=/.exec(pg.detail)?.[1] : undefined;
  const constraint = typeof pg.constraint === 'string' ? pg.constraint : '';
  return table.fields.find((field) => field.unique && (field.name === column || constraint.endsWith(`_${field.name}_key`)));
}

/** Thrown inside a scratch write's transaction to roll it back once its result is known. */
const SCRATCH_ROLLBACK = Symbol('scratch rollback');

/** Runs `work` in a transaction of its own and rolls it back: its result, nothing stored. */
export async function rolledBack<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  let result: { value: T } | undefined;
  try {
    await db.transaction().execute(async (trx) => {
      result = { value: await work(trx) };
      throw SCRATCH_ROLLBACK;
    });
  } catch (error) {
    if (error !== SCRATCH_ROLLBACK || !result) throw error;
  }
  return result!.value;
}

/** Checks, inside the write's transaction, that every referenced `_id` exists (and keeps it until commit). */
export async function assertReferencesExist(trx: Db, table: RecordTable, values: RecordValues): Promise<void> {
  const issues: RecordIssue[] = [];
  for (const field of table.fields) {
    const value = values[field.name];
    if (!field.reference || value === null || value === undefined) continue;
    const ids = [...new Set(field.type === 'multi-reference' ? (value as string[]) : [value as string])];
    if (!ids.length) continue;
    const found = await sql<{ _id: string }>`select _id from ${sql.table(field.reference.sqlName)} where _id = any(cast(${ids} as text[])) for key share`.execute(trx);
    const existing = new Set(found.rows.map((row) => row._id));
    const missing = ids.filter((id) => !existing.has(id));
    if (missing.length) {
      const list = missing.map((id) => `'${id}'`).join(', ');
      issues.push({ field: `data.${field.name}`, message: `no ${field.reference.name} record has _id ${list}` });
    }
  }
  if (issues.length) throw recordInputError(issues);
}
