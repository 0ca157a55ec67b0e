import { writeTransaction } from '../platform/db/write.js';
import { resolveNamedRecord } from '../platform/references.js';
import { requireAdmin, requirePermission, rolePermissions, type Principal } from '../access/permissions.js';
import { storedRules } from './access-rules.js';
import { FULL_ACCESS, NO_ACCESS, type AccessLevel, type TableAccessRules } from './access-schema.js';
import { recordAudit } from '../audit/writer.js';
import type { PlatformContext } from '../platform/context.js';
import { newId } from '../platform/crypto.js';
import type { Db } from '../platform/db/index.js';
import type { Row } from '../platform/db/types.js';
import { TrellisError, badInput, conflict, notFound } from '../platform/errors.js';
import { idSchema, parseInput } from '../platform/validation.js';
import { assertDistinctName } from '../platform/names.js';
import { loadTableAccess, removeFieldFromRules, writeCreatorAccess, writeTableAccess, type TableAccess } from './table-access.js';
import {
  addRecordColumn,
  countRecords,
  createRecordTable,
  dropRecordColumn,
  dropRecordTable,
  generateSqlName,
  lockRecordTable,
  recordTableHasRows,
  type ColumnSpec,
} from './ddl.js';
import type { FeatureSchema } from '../features/graphql-documents.js';
import { applyFieldChange, type FieldChange } from './field-changes.js';
import { findTableUses, type FieldUse } from './field-usage.js';
import {
  MAX_TABLE_FIELDS,
  REFERENCE_FIELD_TYPES,
  addTableFieldInput,
  createTableInput,
  deleteTableFieldInput,
  deleteTableInput,
  fieldUsageInput,
  setTableAccessInput,
  updateTableFieldInput,
  updateTableInput,
  type AddTableFieldInput,
  type CreateTableInput,
  type DeleteTableFieldInput,
  type DeleteTableInput,
  type FieldType,
  type FieldUsageInput,
  type SetTableAccessInput,
  type ParsedField,
  type UpdateTableFieldInput,
  type UpdateTableInput,
} from './schema.js';

export interface Field {
  _id: string;
  name: string;
  type: FieldType;
  required: boolean;
  unique: boolean;
  referenceTableId: string | null;
  /** What people read for the field; empty: its name. */
  label: string;
  description: string;
}

export interface Table {
  _id: string;
  name: string;
  description: string;
  fields: Field[];
  /** Every non-admin role's data-access rules (D32): in the answer of getTable and of every write of a table (TableWithAccess); not in listTables (GraphQL's `access` reads them where asked). */
  access?: TableAccess[];
  createdAt: Date;
  updatedAt: Date;
}

/** A table as getTable and every write of a table answer it: with its roles' rules. */
export type TableWithAccess = Table & { access: TableAccess[] };

/** A user's levels on one table's records, as `me` answers them for the application page. */
export interface EffectiveTableAccess {
  tableId: string;
  table: string;
  read: AccessLevel;
  create: AccessLevel;
  update: AccessLevel;
  delete: AccessLevel;
  hiddenFields: string[];
  readOnlyFields: string[];
}

/** A table's metadata row and its fields in position order. */
export interface TableSchema {
  table: Row<'app_tables'>;
  fields: Row<'app_fields'>[];
}

/** A field ready to be stored: its reference resolved to the target table. */
interface ResolvedField {
  spec: ParsedField;
  referenceTableId: string | null;
  column: ColumnSpec;
}

/** The table a new table's self-reference resolves to, before its row exists. */
interface PendingTable {
  id: string;
  name: string;
  sqlName: string;
}

export type { FieldUse } from './field-usage.js';

export class TableService {
  /** `featureSchema`: what features' GraphQL documents are read against when looking for uses of a field. */
  constructor(
    private readonly ctx: PlatformContext,
    private readonly featureSchema: () => Promise<FeatureSchema>,
  ) {}

  async listTables(principal: Principal): Promise<Table[]> {
    requirePermission(principal, 'config:read');
    const tables = await this.ctx.db.selectFrom('app_tables').selectAll().orderBy('name').execute();
    const fields = await this.ctx.db.selectFrom('app_fields').selectAll().orderBy('table_id').orderBy('position').execute();
    return tables.map((table) => toTable({ table, fields: fields.filter((f) => f.table_id === table.id) }));
  }

  async getTable(principal: Principal, tableId: string): Promise<TableWithAccess> {
    requirePermission(principal, 'config:read');
    const id = await resolveNamedRecord(this.ctx.db, 'app_tables', parseInput(idSchema, tableId));
    const schema = await loadTableSchema(this.ctx.db, id, 'id');
    if (!schema) throw notFound('Table', id);
    return { ...toTable(schema), access: (await loadTableAccess(this.ctx.db, [id])).get(id)! };
  }

  /** Every non-admin role's data-access rules on a table (NONE where none are written). */
  async tableAccess(principal: Principal, tableId: string): Promise<TableAccess[]> {
    requirePermission(principal, 'config:read');
    return (await loadTableAccess(this.ctx.db, [tableId])).get(tableId) ?? [];
  }

  /**
   * What a user may do with each table's records (D32): their role's levels, ALL everywhere for an
   * admin. Anyone for themselves; an admin for anyone.
   */
  async effectiveAccess(principal: Principal, userId: string): Promise<EffectiveTableAccess[]> {
    if (principal.userId !== userId) requireAdmin(principal);
    const user = await this.ctx.db
      .selectFrom('users as u')
      .innerJoin('roles as r', 'r.id', 'u.role_id')
      .select(['r.id', 'r.permissions'])
      .where('u.id', '=', userId)
      .executeTakeFirst();
    if (!user) throw notFound('User', userId);
    const tables = await this.ctx.db.selectFrom('app_tables').select(['id', 'name']).orderBy('name').execute();
    const isAdmin = rolePermissions(user.permissions).has('admin');
    const rules = isAdmin ? new Map<string, TableAccessRules>() : await roleRules(this.ctx.db, user.id);
    return tables.map((table) => effective(table, isAdmin ? FULL_ACCESS : (rules.get(table.id) ?? NO_ACCESS)));
  }

  /** Sets one non-admin role's rules on a table (roles:write; admins only). */
  async setTableAccess(principal: Principal, input: SetTableAccessInput): Promise<TableAccess> {
    const data = parseInput(setTableAccessInput, input);
    requirePermission(principal, 'roles:write');
    return writeTransaction(this.ctx, async (trx) => {
      const table = await lockTable(trx, data.tableId);
      const [written] = await writeTableAccess(trx, principal, table.id, [{ roleId: data.roleId, ...data.access }], () => 'access');
      return written!;
    });
  }

  /** Creates the table's metadata and its real SQL table in one transaction. */
  async createTable(principal: Principal, input: CreateTableInput): Promise<TableWithAccess> {
    const data = parseInput(createTableInput, input);
    requirePermission(principal, 'tables:write');
    if (data.access) requirePermission(principal, 'roles:write');
    return writeTransaction(this.ctx, async (trx) => {
      await assertTableNameFree(trx, data.name);
      const pending: PendingTable = { id: newId(), name: data.name, sqlName: generateSqlName(data.name) };
      const fields: ResolvedField[] = [];
      for (const [index, field] of data.fields.entries()) {
        fields.push(await resolveField(trx, field, `fields.${index}.referenceTableId`, pending));
      }
      await trx
        .insertInto('app_tables')
        .values({
          id: pending.id,
          name: data.name,
          sql_name: pending.sqlName,
          description: data.description,
          created_by: principal.userId,
          updated_at: new Date(),
        })
        .execute();
      if (fields.length) {
        await trx
          .insertInto('app_fields')
          .values(fields.map((field, position) => fieldRow(pending.id, field, position)))
          .execute();
      }
      await createRecordTable(trx, pending.sqlName, fields.map((f) => f.column));
      await recordAudit(trx, principal, {
        action: 'table.create',
        resourceType: 'table',
        resourceId: pending.id,
        details: { name: data.name, sqlName: pending.sqlName, fields: fields.map(auditField) },
      });
      await writeCreatorAccess(trx, principal, pending.id);
      if (data.access) await writeTableAccess(trx, principal, pending.id, data.access);
      return this.tableWithAccess(trx, pending.id);
    });
  }

  /** Changes the name or description; the SQL table keeps its name, so records stay. */
  async updateTable(principal: Principal, input: UpdateTableInput): Promise<TableWithAccess> {
    const data = parseInput(updateTableInput, input);
    requirePermission(principal, 'tables:write');
    if (data.access) requirePermission(principal, 'roles:write');
    return writeTransaction(this.ctx, async (trx) => {
      const table = await lockTable(trx, data._id);
      if (data.name !== undefined && data.name !== table.name) await assertTableNameFree(trx, data.name, table.id);
      await trx
        .updateTable('app_tables')
        .set({
          ...(data.name !== undefined ? { name: data.name } : {}),
          ...(data.description !== undefined ? { description: data.description } : {}),
          updated_at: new Date(),
        })
        .where('id', '=', table.id)
        .execute();
      await recordAudit(trx, principal, {
        action: 'table.update',
        resourceType: 'table',
        resourceId: table.id,
        details: {
          name: data.name ?? table.name,
          ...(data.name !== undefined && data.name !== table.name ? { previousName: table.name } : {}),
          ...(data.description !== undefined ? { descriptionChanged: true } : {}),
        },
      });
      if (data.access) await writeTableAccess(trx, principal, table.id, data.access);
      return this.tableWithAccess(trx, table.id);
    });
  }

  /** Adds one field and its column. A required field needs an empty table (no default to fill rows). */
  async addTableField(principal: Principal, input: AddTableFieldInput): Promise<TableWithAccess> {
    const data = parseInput(addTableFieldInput, input);
    requirePermission(principal, 'tables:write');
    return writeTransaction(this.ctx, async (trx) => {
      const table = await lockTable(trx, data.tableId);
      const existing = await trx.selectFrom('app_fields').select(['name', 'position']).where('table_id', '=', table.id).execute();
      assertDistinctName(data.field.name, existing.map((f) => f.name), { what: 'field', field: 'field.name' });
      if (existing.length >= MAX_TABLE_FIELDS) {
        throw conflict(`Table '${table.name}' already has ${MAX_TABLE_FIELDS} fields, the most a table may have`);
      }
      if (data.field.required) await assertNoRecords(trx, table.sql_name, data.field.name);
      const field = await resolveField(trx, data.field, 'field.referenceTableId');
      const position = existing.reduce((max, f) => Math.max(max, f.position + 1), 0);
      await trx.insertInto('app_fields').values(fieldRow(table.id, field, position)).execute();
      await addRecordColumn(trx, table.sql_name, field.column);
      await trx.updateTable('app_tables').set({ updated_at: new Date() }).where('id', '=', table.id).execute();
      await recordAudit(trx, principal, {
        action: 'table.field.add',
        resourceType: 'table',
        resourceId: table.id,
        details: { name: table.name, field: auditField(field) },
      });
      return this.tableWithAccess(trx, table.id);
    });
  }

  /**
   * Changes a field, named by `_id` or name: what is given changes, the rest stays. A rename keeps
   * the values and follows in the roles' rules; a new type converts every stored value or changes
   * nothing (see `fieldConversion`); required and unique are checked against the records. The
   * column, the metadata, the rules and the audit entry change in one transaction.
   *
   * @throws BAD_INPUT for a name taken or values that do not convert, CONFLICT for a required field
   * with empty records, a unique one with repeated values, or a rule's filter that no longer fits.
   */
  async updateTableField(principal: Principal, input: UpdateTableFieldInput): Promise<TableWithAccess> {
    const data = parseInput(updateTableFieldInput, input);
    requirePermission(principal, 'tables:write');
    return writeTransaction(this.ctx, async (trx) => {
      const table = await lockTable(trx, data.tableId);
      const fields = await trx.selectFrom('app_fields').selectAll().where('table_id', '=', table.id).orderBy('position').execute();
      const field = findField(table, fields, data.field);
      const type = data.type ?? (field.type as FieldType);
      if (!REFERENCE_FIELD_TYPES.has(type) && data.referenceTableId) {
        throw badInput('referenceTableId: is only allowed on reference and multi-reference fields', { field: 'referenceTableId' });
      }
      const referenceRef = REFERENCE_FIELD_TYPES.has(type) ? (data.referenceTableId ?? field.reference_table_id) : undefined;
      if (REFERENCE_FIELD_TYPES.has(type) && !referenceRef) throw badInput(`referenceTableId: is required for ${type} fields`, { field: 'referenceTableId' });
      const reference = referenceRef ? await resolveReference(trx, referenceRef, 'referenceTableId') : undefined;
      const change: FieldChange = {
        name: data.name,
        label: data.label,
        description: data.description,
        type: data.type,
        reference,
        required: data.required,
        unique: data.unique,
      };
      const changes = await applyFieldChange(trx, principal, table, fields, field, change, !principal.dataRoles?.length);
      if (!Object.keys(changes).length) return this.tableWithAccess(trx, table.id);
      await trx.updateTable('app_tables').set({ updated_at: new Date() }).where('id', '=', table.id).execute();
      await recordAudit(trx, principal, {
        action: 'table.field.update',
        resourceType: 'table',
        resourceId: table.id,
        details: { name: table.name, field: data.name ?? field.name, fieldId: field.id, changes: auditedChanges(changes) },
      });
      return this.tableWithAccess(trx, table.id);
    });
  }

  /**
   * Deletes a field: its column and its value in every record (config:delete, confirm: true). The
   * roles' hidden and read-only lists drop it; a rule whose filter names it refuses the deletion.
   */
  async deleteTableField(principal: Principal, input: DeleteTableFieldInput): Promise<TableWithAccess> {
    const data = parseInput(deleteTableFieldInput, input);
    requirePermission(principal, 'config:delete');
    return writeTransaction(this.ctx, async (trx) => {
      const table = await lockTable(trx, data.tableId);
      const fields = await trx.selectFrom('app_fields').selectAll().where('table_id', '=', table.id).execute();
      const field = findField(table, fields, data.field);
      await removeFieldFromRules(trx, principal, { id: table.id, name: table.name }, field.name);
      await lockRecordTable(trx, table.sql_name);
      const values = await countRecords(trx, table.sql_name, field.name);
      await dropRecordColumn(trx, table.sql_name, field.name);
      await trx.deleteFrom('app_fields').where('id', '=', field.id).execute();
      await trx.updateTable('app_tables').set({ updated_at: new Date() }).where('id', '=', table.id).execute();
      await recordAudit(trx, principal, {
        action: 'table.field.delete',
        resourceType: 'table',
        resourceId: table.id,
        details: { name: table.name, field: { name: field.name, type: field.type, required: field.required, unique: field.unique }, valuesDeleted: values },
      });
      return this.tableWithAccess(trx, table.id);
    });
  }

  /**
   * How many records the table has or, with `field`, how many hold a value in it: what a deletion
   * loses. Null for a caller whose role's rules bound the records it reaches (D32): the count would
   * tell of records it may not read.
   */
  async recordCount(principal: Principal, tableId: string, field?: string): Promise<number | null> {
    requirePermission(principal, 'config:read');
    if (principal.dataRoles?.length) return null;
    const table = await findTable(this.ctx.db, tableId);
    const column = field === undefined ? undefined : (await loadField(this.ctx.db, table, field)).name;
    return countRecords(this.ctx.db, table.sql_name, column);
  }

  /**
   * Features, hooks and roles' rules that use a field (or, without `field`, the table), read from
   * their code and rules: what a change or a deletion may break. A best-effort static reading.
   */
  async fieldUsage(principal: Principal, input: FieldUsageInput): Promise<FieldUse[]> {
    const data = parseInput(fieldUsageInput, input);
    requirePermission(principal, 'config:read');
    const table = await findTable(this.ctx.db, data.tableId);
    const field = data.field === undefined ? undefined : (await loadField(this.ctx.db, table, data.field)).name;
    return findTableUses(this.ctx.db, await this.featureSchema(), { tableId: table.id, tableName: table.name, field });
  }

  private async tableWithAccess(db: Db, tableId: string): Promise<TableWithAccess> {
    return { ...toTable((await loadTableSchema(db, tableId, 'id'))!), access: (await loadTableAccess(db, [tableId])).get(tableId)! };
  }

  /** Drops the table and its records; refused while other tables reference it or hooks use it. */
  async deleteTable(principal: Principal, input: DeleteTableInput): Promise<boolean> {
    const data = parseInput(deleteTableInput, input);
    requirePermission(principal, 'config:delete');
    return writeTransaction(this.ctx, async (trx) => {
      const table = await lockTable(trx, data._id);
      const referrer = await trx
        .selectFrom('app_fields as f')
        .innerJoin('app_tables as t', 't.id', 'f.table_id')
        .select(['t.name as tableName', 'f.name as fieldName'])
        .where('f.reference_table_id', '=', table.id)
        .where('f.table_id', '!=', table.id)
        .orderBy('t.name')
        .executeTakeFirst();
      if (referrer) {
        throw conflict(`Table '${table.name}' is referenced by field '${referrer.fieldName}' of table '${referrer.tableName}'`);
      }
      const hook = await trx.selectFrom('hooks').select('name').where('table_id', '=', table.id).orderBy('name').executeTakeFirst();
      if (hook) throw conflict(`Table '${table.name}' has hooks attached (for example '${hook.name}'); delete them first`);
      await dropRecordTable(trx, table.sql_name);
      await trx.deleteFrom('app_tables').where('id', '=', table.id).execute();
      await recordAudit(trx, principal, {
        action: 'table.delete',
        resourceType: 'table',
        resourceId: table.id,
        details: { name: table.name, sqlName: table.sql_name },
      });
      return true;
    });
  }
}

/**
 * Reads a table's metadata and fields by `_id` or by name (case-insensitive). Internal: no
 * permission check; the record layer uses it to find a table's SQL name and columns.
 */
export async function loadTableSchema(db: Db, nameOrId: string, by: 'id' | 'idOrName' = 'idOrName'): Promise<TableSchema | undefined> {
  let table = await db.selectFrom('app_tables').selectAll().where('id', '=', nameOrId).executeTakeFirst();
  if (!table && by === 'idOrName') {
    table = await db
      .selectFrom('app_tables')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', ['name']), '=', nameOrId.toLowerCase()))
      .executeTakeFirst();
  }
  if (!table) return undefined;
  const fields = await db.selectFrom('app_fields').selectAll().where('table_id', '=', table.id).orderBy('position').execute();
  return { table, fields };
}

/** Refuses a name another table has, in any letter case, or that looks like one (D33); `exceptId` is the table being renamed. */
async function assertTableNameFree(trx: Db, name: string, exceptId?: string): Promise<void> {
  let others = trx.selectFrom('app_tables').select('name');
  if (exceptId) others = others.where('id', '!=', exceptId);
  assertDistinctName(name, (await others.execute()).map((table) => table.name), { what: 'table', field: 'name' });
}

/** A required column has no value for existing records, so it may only join an empty table. */
async function assertNoRecords(trx: Db, sqlName: string, fieldName: string): Promise<void> {
  await lockRecordTable(trx, sqlName);
  if (await recordTableHasRows(trx, sqlName)) {
    throw conflict(`field.required: cannot add required field '${fieldName}' because the table has rows; add it as optional`, {
      field: 'field.required',
    });
  }
}

/** The table `tableRef` names (its `_id` or name), read without a lock. */
async function findTable(db: Db, tableRef: string): Promise<Row<'app_tables'>> {
  const tableId = await resolveNamedRecord(db, 'app_tables', parseInput(idSchema, tableRef));
  const table = await db.selectFrom('app_tables').selectAll().where('id', '=', tableId).executeTakeFirst();
  if (!table) throw notFound('Table', tableId);
  return table;
}

/** The field `ref` names: its `_id`, or its name in any letter case. */
function findField(table: Row<'app_tables'>, fields: readonly Row<'app_fields'>[], ref: string): Row<'app_fields'> {
  const field = fields.find((f) => f.id === ref) ?? fields.find((f) => f.name.toLowerCase() === ref.toLowerCase());
  if (field) return field;
  throw new TrellisError('NOT_FOUND', `Table '${table.name}' has no field '${ref}'`, { resource: 'Field', _id: ref, fields: fields.map((f) => f.name) });
}

async function loadField(db: Db, table: Row<'app_tables'>, ref: string): Promise<Row<'app_fields'>> {
  return findField(table, await db.selectFrom('app_fields').selectAll().where('table_id', '=', table.id).execute(), ref);
}

/** Changed properties for the audit trail; texts people write (label, description) only as changed. */
function auditedChanges(changes: Record<string, { from: unknown; to: unknown }>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(changes).map(([key, change]) => [key, key === 'label' || key === 'description' ? { changed: true } : change]));
}

/** The table `tableRef` names (its `_id` or name), locked for this transaction. */
async function lockTable(trx: Db, tableRef: string): Promise<Row<'app_tables'>> {
  const tableId = await resolveNamedRecord(trx, 'app_tables', tableRef);
  const table = await trx.selectFrom('app_tables').selectAll().where('id', '=', tableId).forUpdate().executeTakeFirst();
  if (!table) throw notFound('Table', tableId);
  return table;
}

async function resolveField(trx: Db, field: ParsedField, path: string, pending?: PendingTable): Promise<ResolvedField> {
  const target = REFERENCE_FIELD_TYPES.has(field.type) ? await resolveReference(trx, field.referenceTableId!, path, pending) : null;
  return {
    spec: field,
    referenceTableId: target?.id ?? null,
    column: {
      name: field.name,
      type: field.type,
      required: field.required,
      unique: field.unique,
      referenceSqlName: target?.sqlName ?? null,
    },
  };
}

async function resolveReference(trx: Db, reference: string, path: string, pending?: PendingTable): Promise<PendingTable> {
  if (pending && (reference === pending.id || reference.toLowerCase() === pending.name.toLowerCase())) return pending;
  const found = await loadTableSchema(trx, reference);
  const target = found
    ? await trx.selectFrom('app_tables').select(['id', 'name', 'sql_name']).where('id', '=', found.table.id).forShare().executeTakeFirst()
    : undefined;
  if (!target) throw badInput(`${path}: no table with _id or name '${reference}'`, { field: path });
  return { id: target.id, name: target.name, sqlName: target.sql_name };
}

function fieldRow(tableId: string, field: ResolvedField, position: number) {
  return {
    id: newId(),
    table_id: tableId,
    name: field.spec.name,
    type: field.spec.type,
    required: field.spec.required,
    unique: field.spec.unique,
    reference_table_id: field.referenceTableId,
    label: field.spec.label,
    description: field.spec.description,
    position,
  };
}

function auditField(field: ResolvedField) {
  return {
    name: field.spec.name,
    type: field.spec.type,
    required: field.spec.required,
    unique: field.spec.unique,
    ...(field.spec.label ? { label: field.spec.label } : {}),
    ...(field.referenceTableId ? { referenceTableId: field.referenceTableId } : {}),
  };
}

function toField(row: Row<'app_fields'>): Field {
  return {
    _id: row.id,
    name: row.name,
    type: row.type as FieldType,
    required: row.required,
    unique: row.unique,
    referenceTableId: row.reference_table_id,
    label: row.label,
    description: row.description,
  };
}

function toTable({ table, fields }: TableSchema): Table {
  return {
    _id: table.id,
    name: table.name,
    description: table.description,
    fields: fields.map(toField),
    createdAt: table.created_at,
    updatedAt: table.updated_at,
  };
}

async function roleRules(db: Db, roleId: string): Promise<Map<string, TableAccessRules>> {
  const rows = await db.selectFrom('table_access').select(['table_id', 'rules']).where('role_id', '=', roleId).execute();
  return new Map(rows.map((row) => [row.table_id, storedRules(row.rules)]));
}

function effective(table: { id: string; name: string }, rules: TableAccessRules): EffectiveTableAccess {
  return {
    tableId: table.id,
    table: table.name,
    read: rules.read.level,
    create: rules.create.level,
    update: rules.update.level,
    delete: rules.delete.level,
    hiddenFields: rules.hiddenFields,
    readOnlyFields: rules.readOnlyFields,
  };
}
