import { randomInt } from 'node:crypto';
import { sql, type ColumnDataType, type ColumnDefinitionBuilder, type Expression } from 'kysely';
import type { Db } from '../platform/db/index.js';
import type { FieldType } from './schema.js';

/** A field as a column: `referenceSqlName` is the SQL table a reference field points at. */
export interface ColumnSpec {
  name: string;
  type: FieldType;
  required: boolean;
  unique: boolean;
  referenceSqlName: string | null;
}

const SQL_TYPES: Record<FieldType, ColumnDataType | Expression<unknown>> = {
  text: 'text',
  number: 'double precision',
  boolean: 'boolean',
  date: 'date',
  datetime: 'timestamptz',
  json: 'jsonb',
  reference: 'text',
  'multi-reference': sql`text[]`,
};

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
    builder = builder.addColumn(column.name, SQL_TYPES[column.type], (c) => withConstraints(c, column));
  }
  await builder.execute();
}

export async function addRecordColumn(db: Db, sqlName: string, column: ColumnSpec): Promise<void> {
  await db.schema
    .alterTable(sqlName)
    .addColumn(column.name, SQL_TYPES[column.type], (c) => withConstraints(c, column))
    .execute();
}

export async function dropRecordTable(db: Db, sqlName: string): Promise<void> {
  await db.schema.dropTable(sqlName).execute();
}

/** Blocks writes to the records table until the transaction ends, as the ALTER that follows would. */
export async function lockRecordTable(db: Db, sqlName: string): Promise<void> {
  await sql`lock table ${sql.table(sqlName)} in access exclusive mode`.execute(db);
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
