import type { RecordTable } from '../../tables/record-schema.js';
import type { GraphQLModule, Resolver } from '../module.js';
import { assignRecordNames, type RecordTypeNames, type TakenNames } from './names.js';
import { SHARED_RECORD_TYPE_DEFS, recordTypeDefs } from './sdl.js';

export type { RecordTypeNames, TakenNames } from './names.js';

function queryResolvers(table: RecordTable, names: RecordTypeNames): Record<string, Resolver> {
  return {
    // `total` stays a function, which GraphQL's default resolver calls only when it is selected.
    [names.list]: (_s, args, ctx) =>
      ctx.services.records.page(ctx.principal, table.id, { filter: args.filter, sort: args.sort, limit: args.limit, offset: args.offset }),
    [names.get]: (_s, args, ctx) => ctx.services.records.get(ctx.principal, table.id, args.Id),
  };
}

function mutationResolvers(table: RecordTable, names: RecordTypeNames): Record<string, Resolver> {
  return {
    [names.create]: (_s, args, ctx) => ctx.services.records.create(ctx.principal, table.id, args.data ?? {}, { scratch: ctx.scratch }),
    [names.update]: (_s, args, ctx) => ctx.services.records.update(ctx.principal, table.id, args.Id, args.data ?? {}, { scratch: ctx.scratch }),
    [names.delete]: (_s, args, ctx) => ctx.services.records.delete(ctx.principal, table.id, args.Id, { scratch: ctx.scratch }),
  };
}

/**
 * The part of the schema generated from the application's tables: for a table `Order`, the
 * type `Order`, inputs `OrderInput`, `OrderFilter`, `OrderSort`, enum `OrderSortField`, type
 * `OrderPage { items, total }`, queries `listOrder(filter, sort, limit, offset)` and
 * `getOrder(Id)`, mutations `createOrder(data)`, `updateOrder(Id, data)` and `deleteOrder(Id)`.
 * Resolvers call the record service with the caller's principal. A required field that some role
 * may not read (`hidden`: `tableId.field`) is nullable in the output type: it reads as null for them.
 */
export function recordsModule(tables: readonly RecordTable[], builderTaken: TakenNames, hidden: ReadonlySet<string> = new Set()): GraphQLModule {
  if (!tables.length) return { typeDefs: '', resolvers: {} };
  const names = assignRecordNames(tables, builderTaken);
  const typeDefs = [SHARED_RECORD_TYPE_DEFS];
  const Query: Record<string, Resolver> = {};
  const Mutation: Record<string, Resolver> = {};
  for (const table of tables) {
    const tableNames = names.get(table.id)!;
    typeDefs.push(recordTypeDefs(table, tableNames, hidden));
    Object.assign(Query, queryResolvers(table, tableNames));
    Object.assign(Mutation, mutationResolvers(table, tableNames));
  }
  return { typeDefs: typeDefs.join('\n'), resolvers: { Query, Mutation } };
}
