import type { RecordTable } from '../../tables/record-schema.js';

/** The GraphQL names generated for one table. */
export interface RecordTypeNames {
  type: string;
  input: string;
  filter: string;
  sort: string;
  sortField: string;
  page: string;
  list: string;
  get: string;
  create: string;
  update: string;
  delete: string;
}

/** Names already taken in the schema: builder types and root fields, and the shared record types. */
export interface TakenNames {
  types: Set<string>;
  queries: Set<string>;
  mutations: Set<string>;
}

/** Type names the record part of the schema defines once, for every table. */
export const SHARED_RECORD_TYPES = [
  'Date',
  'SortDirection',
  'StringFilter',
  'FloatFilter',
  'BooleanFilter',
  'DateFilter',
  'DateTimeFilter',
  'IDFilter',
  'IDListFilter',
  'JSONFilter',
] as const;

/** Built-in GraphQL names no table may take. */
const GRAPHQL_BUILTINS = ['String', 'Int', 'Float', 'Boolean', 'ID', 'Query', 'Mutation', 'Subscription'];

function namesFor(base: string): RecordTypeNames {
  return {
    type: base,
    input: `${base}Input`,
    filter: `${base}Filter`,
    sort: `${base}Sort`,
    sortField: `${base}SortField`,
    page: `${base}Page`,
    list: `list${base}`,
    get: `get${base}`,
    create: `create${base}`,
    update: `update${base}`,
    delete: `delete${base}`,
  };
}

function isFree(names: RecordTypeNames, taken: TakenNames): boolean {
  const types = [names.type, names.input, names.filter, names.sort, names.sortField, names.page];
  return (
    types.every((name) => !taken.types.has(name)) &&
    !taken.queries.has(names.list) &&
    !taken.queries.has(names.get) &&
    [names.create, names.update, names.delete].every((name) => !taken.mutations.has(name))
  );
}

function take(names: RecordTypeNames, taken: TakenNames): void {
  for (const name of [names.type, names.input, names.filter, names.sort, names.sortField, names.page]) taken.types.add(name);
  taken.queries.add(names.list).add(names.get);
  taken.mutations.add(names.create).add(names.update).add(names.delete);
}

/**
 * Names each table's types and operations after the table: `Order`, `OrderInput`, `listOrder`,
 * `createOrder`, ... When one of them is taken (a builder type such as `User`, or another table's
 * generated name) the table's names use `<Table>Record` instead (`UserRecord`, `createUserRecord`),
 * then `<Table>Record2` and so on. Tables are named oldest first, so a new table never renames
 * an existing table's operations.
 */
export function assignRecordNames(tables: readonly RecordTable[], builderTaken: TakenNames): Map<string, RecordTypeNames> {
  const taken: TakenNames = {
    types: new Set([...builderTaken.types, ...SHARED_RECORD_TYPES, ...GRAPHQL_BUILTINS]),
    queries: new Set(builderTaken.queries),
    mutations: new Set(builderTaken.mutations),
  };
  const assigned = new Map<string, RecordTypeNames>();
  for (const table of tables) {
    let names = namesFor(table.name);
    for (let attempt = 1; !isFree(names, taken); attempt += 1) {
      names = namesFor(`${table.name}Record${attempt === 1 ? '' : attempt}`);
    }
    take(names, taken);
    assigned.set(table.id, names);
  }
  return assigned;
}
