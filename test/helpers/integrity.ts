import { PGlite } from '@electric-sql/pglite';
import { amcheck } from '@electric-sql/pglite/contrib/amcheck';
import { pgliteFolder } from '../../src/platform/db/index.js';

/** What PostgreSQL's amcheck found in an embedded database: the relations it verified, and every corruption it reports. */
export interface IntegrityReport {
  /** The btree indexes checked against their table, each with every row of the table found in it. */
  indexes: string[];
  /** The tables whose pages, tuples and TOAST values were checked. */
  tables: string[];
  /** `relation: message` for each corruption, or each error a check raised; empty when the database is sound. */
  problems: string[];
}

const USER_RELATIONS = `
  from pg_class c
  join pg_namespace n on n.oid = c.relnamespace
  where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname !~ '^pg_(toast|temp)' and c.relpersistence <> 't'`;

const BTREE_INDEXES = `
  select c.oid, format('%I.%I', n.nspname, c.relname) as name
  ${USER_RELATIONS} and c.relkind = 'i' and c.relam = (select oid from pg_am where amname = 'btree')
    and exists (select 1 from pg_index i where i.indexrelid = c.oid and i.indisvalid and i.indisready)
  order by 2`;

const TABLES = `
  select c.oid, format('%I.%I', n.nspname, c.relname) as name
  ${USER_RELATIONS} and c.relkind in ('r', 'm')
  order by 2`;

interface Relation {
  oid: number;
  name: string;
}

/**
 * Runs amcheck on the embedded database of `dataDir`, which no process may hold open: every btree
 * index of every schema but the system's (`bt_index_check` with `heapallindexed` and
 * `checkunique`) and every table (`verify_heapam` with `check_toast`). The extension is created
 * for the check and dropped afterwards, so the folder's schema is left as it was.
 *
 * @example expect((await verifyPGliteIntegrity(dataDir)).problems).toEqual([])
 */
export async function verifyPGliteIntegrity(dataDir: string): Promise<IntegrityReport> {
  const pglite = await PGlite.create(pgliteFolder(dataDir), { extensions: { amcheck } });
  try {
    const installed = (await pglite.query(`select 1 from pg_extension where extname = 'amcheck'`)).rows.length > 0;
    if (!installed) await pglite.exec('create extension amcheck');
    try {
      return await verify(pglite);
    } finally {
      if (!installed) await pglite.exec('drop extension amcheck');
    }
  } finally {
    await pglite.close();
  }
}

const INDEX_CHECK = 'select bt_index_check(index => $1::oid::regclass, heapallindexed => true, checkunique => true)';
const TABLE_CHECK = `
  select format('block %s, offset %s, attribute %s: %s', blkno, offnum, attnum, msg) as problem
  from verify_heapam($1::oid::regclass, check_toast => true)`;

async function verify(pglite: PGlite): Promise<IntegrityReport> {
  const indexes = (await pglite.query<Relation>(BTREE_INDEXES)).rows;
  const tables = (await pglite.query<Relation>(TABLES)).rows;
  const problems: string[] = [];
  for (const index of indexes) problems.push(...(await problemsOf(pglite, index, INDEX_CHECK)));
  for (const table of tables) problems.push(...(await problemsOf(pglite, table, TABLE_CHECK)));
  return { indexes: indexes.map((index) => index.name), tables: tables.map((table) => table.name), problems };
}

/** The corruptions `query` reports on `relation` (its `problem` column), or the error it raised: bt_index_check raises on the first one. */
async function problemsOf(pglite: PGlite, relation: Relation, query: string): Promise<string[]> {
  try {
    const { rows } = await pglite.query<{ problem?: string }>(query, [relation.oid]);
    return rows.flatMap((row) => (row.problem === undefined ? [] : [`${relation.name}: ${row.problem}`]));
  } catch (error) {
    return [`${relation.name}: ${(error as Error).message}`];
  }
}
