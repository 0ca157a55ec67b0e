import { randomInt } from 'node:crypto';
import { sql, type ColumnDefinitionBuilder, type RawBuilder } from 'kysely';
import type { Db } from '../platform/db/index.js';
import { SQL_TYPES } from './record-query.js';
import type { FieldType } from './schema.js';

/** A field as a column: `referenceSqlName` is the SQL table a reference field points at. */
export interface ColumnSpec {
  name: string;
  type: FieldType;
  required: boolean;
  unique: boolean;
  referenceSqlName: string | null;
}

const SQL_NAME_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A new SQL table name for the application table `name`: `data_<lower name>_<6 random>`. It is
 * chosen once and never changes, so a rename touches metadata only. The name part is cut so the
 * whole stays within PostgreSQL's 63-byte identifiers.
 */
export function generateSqlName(name: string): string {
  const suffix = Array.from({ length: 6 }, () => SQL_NAME_ALPHABET[randomInt(SQL_NAME_ALPHABET.length)]).join('');
  return `data_${name.toLowerCase().slice(0, 40)}_${suffix}`;
}

/** Creates the records table with the system columns and one column per field. */
export async function createRecordTable(db: Db, sqlName: string, columns: readonly ColumnSpec[]): Promise<void> {
  let builder = db.schema
    .createTable(sqlName)
    .addColumn('_id', 'text', (c) => c.primaryKey())
    .addColumn('_created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('_updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('_created_by', 'text')
    .addColumn('_updated_by', 'text');
  for (const column of columns) {
    builder = builder.addColumn(column.name, sqlType(column.type), (c) => withConstraints(c, column));
  }
  await builder.execute();
}

export async function addRecordColumn(db: Db, sqlName: string, column: ColumnSpec): Promise<void> {
  await db.schema
    .alterTable(sqlName)
    .addColumn(column.name, sqlType(column.type), (c) => withConstraints(c, column))
    .execute();
}

export async function dropRecordTable(db: Db, sqlName: string): Promise<void> {
  await db.schema.dropTable(sqlName).execute();
}

/** Blocks writes to the records table until the transaction ends, as the ALTER that follows would. */
export async function lockRecordTable(db: Db, sqlName: string): Promise<void> {
  await sql`lock table ${sql.table(sqlName)} in access exclusive mode`.execute(db);
}

/** Renames a field's column; its values, constraints and indexes follow it. */
export async function renameRecordColumn(db: Db, sqlName: string, from: string, to: string): Promise<void> {
  await db.schema.alterTable(sqlName).renameColumn(from, to).execute();
}

/** Drops a field's column with its values, constraints and indexes. */
export async function dropRecordColumn(db: Db, sqlName: string, name: string): Promise<void> {
  await db.schema.alterTable(sqlName).dropColumn(name).execute();
}

export async function setColumnRequired(db: Db, sqlName: string, name: string, required: boolean): Promise<void> {
  await db.schema
    .alterTable(sqlName)
    .alterColumn(name, (column) => (required ? column.setNotNull() : column.dropNotNull()))
    .execute();
}

/** Adds a UNIQUE constraint on the column (PostgreSQL names it), or drops every one it has. */
export async function setColumnUnique(db: Db, sqlName: string, name: string, unique: boolean): Promise<void> {
  if (unique) {
    await sql`alter table ${sql.table(sqlName)} add unique (${sql.ref(name)})`.execute(db);
    return;
  }
  for (const constraint of await columnConstraints(db, sqlName, name, 'u')) {
    await sql`alter table ${sql.table(sqlName)} drop constraint ${sql.id(constraint)}`.execute(db);
  }
}

/** Drops the column's foreign key (a reference field's), if it has one. */
export async function dropColumnReference(db: Db, sqlName: string, name: string): Promise<void> {
  for (const constraint of await columnConstraints(db, sqlName, name, 'f')) {
    await sql`alter table ${sql.table(sqlName)} drop constraint ${sql.id(constraint)}`.execute(db);
  }
}

/** Makes the column a reference to `targetSqlName`'s records, as `createRecordTable` does. */
export async function addColumnReference(db: Db, sqlName: string, name: string, targetSqlName: string): Promise<void> {
  await sql`alter table ${sql.table(sqlName)} add foreign key (${sql.ref(name)}) references ${sql.table(targetSqlName)} (_id) on delete restrict`.execute(db);
}

/** Changes the column's type, each value becoming `using` (an expression of the old column). */
export async function changeColumnType(db: Db, sqlName: string, name: string, type: FieldType, using: RawBuilder<unknown>): Promise<void> {
  await sql`alter table ${sql.table(sqlName)} alter column ${sql.ref(name)} type ${sqlType(type)} using ${using}`.execute(db);
}

/** The SQL type of a field type's column, as a fragment. */
export function sqlType(type: FieldType): RawBuilder<unknown> {
  return sql.raw(SQL_TYPES[type]);
}


/** The names of the column's own constraints of one kind ('u' unique, 'f' foreign key). */
async function columnConstraints(db: Db, sqlName: string, name: string, kind: 'u' | 'f'): Promise<string[]> {
  const result = await sql<{ conname: string }>`
    select c.conname from pg_constraint c
    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any (c.conkey)
    where c.conrelid = to_regclass(${quotedTable(sqlName)}) and c.contype = ${kind} and cardinality(c.conkey) = 1 and a.attname = ${name}`.execute(db);
  return result.rows.map((row) => row.conname);
}

/** A table name as `to_regclass` reads it: quoted, so its letter case is kept. */
function quotedTable(sqlName: string): string {
  return `"${sqlName.replaceAll('"', '""')}"`;
}

/** How many records hold no value in the column: null, or (text) empty or only spaces, which a required field refuses. */
export async function countMissingValues(db: Db, sqlName: string, name: string, type: FieldType): Promise<number> {
  const missing = type === 'text' ? sql`${sql.ref(name)} is null or btrim(${sql.ref(name)}) = ''` : sql`${sql.ref(name)} is null`;
  const result = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(sqlName)} where ${missing}`.execute(db);
  return result.rows[0]!.n;
}

/** How many values the column holds in more than one record. */
export async function countDuplicatedValues(db: Db, sqlName: string, name: string): Promise<number> {
  const result = await sql<{ n: number }>`
    select count(*)::int as n from (select 1 from ${sql.table(sqlName)} where ${sql.ref(name)} is not null group by ${sql.ref(name)} having count(*) > 1) as duplicated`.execute(db);
  return result.rows[0]!.n;
}

/** How many records the table has, or how many hold a value in `name`. */
export async function countRecords(db: Db, sqlName: string, name?: string): Promise<number> {
  const where = name === undefined ? sql`true` : sql`${sql.ref(name)} is not null`;
  const result = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(sqlName)} where ${where}`.execute(db);
  return result.rows[0]!.n;
}

export async function recordTableHasRows(db: Db, sqlName: string): Promise<boolean> {
  const result = await sql<{ found: boolean }>`select exists (select 1 from ${sql.table(sqlName)}) as found`.execute(db);
  return result.rows[0]?.found === true;
}

function withConstraints(column: ColumnDefinitionBuilder, spec: ColumnSpec): ColumnDefinitionBuilder {
  let built = column;
  if (spec.required) built = built.notNull();
  if (spec.unique) built = built.unique();
  if (spec.type === 'reference' && spec.referenceSqlName) {
    built = built.references(`${spec.referenceSqlName}._id`).onDelete('restrict');
  }
  return built;
}
