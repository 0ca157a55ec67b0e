import { sql } from 'kysely';
import type { Db } from './db/index.js';
import { TrellisError } from './errors.js';
import { assertStorableText } from './validation.js';

/** Records that arguments may name by `_id` or by their unique name. */
const KINDS = {
  features: { label: 'Feature', plural: 'features' },
  hooks: { label: 'Hook', plural: 'hooks' },
  app_tables: { label: 'Table', plural: 'tables' },
  roles: { label: 'Role', plural: 'roles' },
} as const;

export type ReferenceKind = keyof typeof KINDS;

const CANDIDATES_SHOWN = 3;
const LISTED_WHEN_NONE_CLOSE = 10;

/**
 * The `_id` of the record `ref` names: its `_id`, or its name in any letter case (an exact `_id`
 * wins, then an exact name). One rule for every argument that names a feature, hook, table or
 * role, in MCP, GraphQL and the CLI alike.
 *
 * @throws NOT_FOUND saying what was looked up and how, with the closest existing records, e.g.
 *   `Table 'Order' does not exist (looked up by _id and by name); did you mean 'Orders' (_id tbl_1)?`
 */
export async function resolveNamedRecord(db: Db, kind: ReferenceKind, ref: string): Promise<string> {
  // A reference a service was handed on its own (GraphQL's `feature(_id:)`) was parsed by no schema:
  // text PostgreSQL cannot hold is BAD_INPUT here, not a failed query.
  assertStorableText(ref, '_id');
  const { rows } = await sql<{ id: string; name: string }>`
    select id, name from ${sql.table(kind)} where id = ${ref} or lower(name) = ${ref.toLowerCase()}`.execute(db);
  const match = rows.find((row) => row.id === ref) ?? rows.find((row) => row.name === ref) ?? rows[0];
  if (match) return match.id;
  throw await referenceNotFound(db, kind, ref);
}

async function referenceNotFound(db: Db, kind: ReferenceKind, ref: string): Promise<TrellisError> {
  const { label, plural } = KINDS[kind];
  const { rows } = await sql<{ id: string; name: string }>`select id, name from ${sql.table(kind)} order by name limit 1000`.execute(db);
  const wanted = ref.toLowerCase();
  const close = rows
    .map((row) => ({ row, distance: Math.min(editDistance(wanted, row.name.toLowerCase()), editDistance(wanted, row.id.toLowerCase())) }))
    .filter(({ row, distance }) => distance <= Math.max(2, Math.floor(ref.length / 3)) || row.name.toLowerCase().includes(wanted) || wanted.includes(row.name.toLowerCase()))
    .sort((a, b) => a.distance - b.distance)
    .slice(0, CANDIDATES_SHOWN)
    .map(({ row }) => row);
  const shown = (list: { id: string; name: string }[]) => list.map((row) => `'${row.name}' (_id ${row.id})`).join(', ');
  const hint =
    close.length > 0
      ? `; did you mean ${shown(close)}?`
      : rows.length > 0
        ? `; the ${plural} are ${shown(rows.slice(0, LISTED_WHEN_NONE_CLOSE))}${rows.length > LISTED_WHEN_NONE_CLOSE ? ', …' : ''}`
        : `; there are no ${plural} yet`;
  return new TrellisError('NOT_FOUND', `${label} '${ref}' does not exist (looked up by _id and by name)${hint}`, {
    resource: label,
    _id: ref,
    candidates: close.map((row) => ({ _id: row.id, name: row.name })),
  });
}

/** Levenshtein distance, bounded in cost by the short names it compares. */
function editDistance(a: string, b: string): number {
  if (a.length > 200 || b.length > 200) return Math.abs(a.length - b.length) + 100;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
