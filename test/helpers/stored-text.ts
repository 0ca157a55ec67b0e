import { sql } from 'kysely';
import type { Db } from '../../src/platform/db/index.js';

const TEXT_TYPES = ['text', 'character varying', 'character', 'json', 'jsonb'];

/** Every text-like and JSON value of every table of the current schema, joined into one string. */
export async function allStoredText(db: Db): Promise<{ columns: number; text: string }> {
  const columns = await sql<{ table_name: string; column_name: string }>`
    select c.table_name, c.column_name
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and t.table_type = 'BASE TABLE' and c.data_type in (${sql.join(TEXT_TYPES)})
  `.execute(db);
  const values: string[] = [];
  for (const { table_name, column_name } of columns.rows) {
    const result = await sql<{ value: string | null }>`select ${sql.ref(column_name)}::text as value from ${sql.table(table_name)}`.execute(db);
    for (const row of result.rows) if (row.value !== null) values.push(row.value);
  }
  return { columns: columns.rows.length, text: values.join('\n') };
}
