import type { GraphQLModule } from '../module.js';
import type { Table } from '../../tables/service.js';
import { requireUser } from './access.js';
import { argsFor, graphqlArguments, graphqlInput } from './operation-args.js';
import { graphqlEnum, graphqlObject } from './output-types.js';

const typeDefs = /* GraphQL */ `
  ${graphqlObject('AppField')}

  enum FieldUseKind {
    FEATURE
    HOOK
    ACCESS_RULE
  }

  "Something that uses a table or one of its fields: a feature's or hook's code, or a role's data-access rule."
  type FieldUse {
    kind: FieldUseKind!
    "The feature's, hook's or role's _id."
    _id: ID!
    name: String!
    "How it uses it, e.g. selects amount, db.update('Orders', …) names amount, hidden from clerk."
    detail: String!
    "The line in the code (features and hooks)."
    line: Int
  }

  "The names of a table's generated GraphQL type and operations."
  type RecordOperations {
    type: String!
    input: String!
    filter: String!
    sort: String!
    sortField: String!
    list: String!
    get: String!
    create: String!
    update: String!
    delete: String!
  }

  ${graphqlEnum('AccessLevel')}

  ${graphqlObject('AccessRule')}

  ${graphqlObject('TableAccess')}

  input AccessRuleInput {
    level: AccessLevel!
    "Required with FILTER, refused otherwise."
    filter: JSON
  }

  ${graphqlInput('TableAccessInput')}

  ${graphqlEnum('AccessAction')}

  ${graphqlObject('DataGrant')}

  "What a feature grant did: who sees the feature now, the rules it set to ALL because the feature's GraphQL documents need them, and narrower rules it left as they were."
  type FeatureGrant {
    roleIds: [ID!]!
    granted: [DataGrant!]!
    leftNarrower: [DataGrant!]!
  }

  "What a user may do with one table's records."
  type EffectiveTableAccess {
    tableId: ID!
    table: String!
    read: AccessLevel!
    create: AccessLevel!
    update: AccessLevel!
    delete: AccessLevel!
    hiddenFields: [String!]!
    readOnlyFields: [String!]!
  }

  extend type User {
    "What this user may do with each table's records (ALL everywhere for an admin); yourself, or anyone for an admin."
    tableAccess: [EffectiveTableAccess!]!
  }

  ${graphqlObject(
    'AppTable',
    `"The generated GraphQL operations of the table's records."
    operations: RecordOperations
    "How many records the table has, or with field how many hold a value in it (what a deletion loses). Null for a caller whose role's rules bound the records it reaches."
    recordCount(field: String): Int`,
  )}

  ${graphqlInput('AppFieldInput')}

  extend type Query {
    "The application's tables."
    tables: [AppTable!]!
    table${graphqlArguments('table')}: AppTable
    "Features, hooks and roles' rules that use a table's field (without field, the table): what a change or a deletion may break. Read from their code and rules, best-effort: names built at run time are not seen."
    fieldUsage${graphqlArguments('fieldUsage')}: [FieldUse!]!
  }

  extend type Mutation {
    "Creates a table and its SQL table."
    createTable${graphqlArguments('createTable')}: AppTable!
    "Renames a table or changes its description; records stay."
    updateTable${graphqlArguments('updateTable')}: AppTable!
    "Adds a field; a required field needs a table without rows."
    addTableField${graphqlArguments('addTableField')}: AppTable!
    """
    Changes a field (its _id or name); what is not given stays. A rename keeps the values and follows in roles' rules. A new type converts every stored value or changes nothing: text to number, boolean, date, datetime or json when each value parses; anything to text; number, boolean, date and datetime to json; date to datetime (midnight UTC) and datetime to date (midnight UTC only); reference and multi-reference into each other; other changes, and a change of the referenced table, only while no record holds a value. required needs a value in every record, unique no repeated value.
    """
    updateTableField${graphqlArguments('updateTableField')}: AppTable!
    "Deletes a field and its value in every record (needs confirm: true and config:delete); refused while a role's filter names it."
    deleteTableField${graphqlArguments('deleteTableField')}: AppTable!
    "Sets one non-admin role's rules on a table's records (admin only: roles:write)."
    setTableAccess${graphqlArguments('setTableAccess')}: TableAccess!
    "Drops a table and its records (needs confirm: true)."
    deleteTable${graphqlArguments('deleteTable')}: Boolean!
  }
`;

export const tablesModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    AppTable: {
      operations: (table, _a, ctx) => ctx.services.graphql.recordNames((table as { _id: string })._id),
      access: (table, _a, ctx) => (table as Table).access ?? ctx.services.tables.tableAccess(requireUser(ctx), (table as Table)._id),
      recordCount: (table, args, ctx) => ctx.services.tables.recordCount(requireUser(ctx), (table as Table)._id, args.field ?? undefined),
    },
    User: {
      tableAccess: (user, _a, ctx) => ctx.services.tables.effectiveAccess(requireUser(ctx), (user as { _id: string })._id),
    },
    Query: {
      tables: (_s, _a, ctx) => ctx.services.tables.listTables(requireUser(ctx)),
      table: (_s, args, ctx) => ctx.services.tables.getTable(requireUser(ctx), argsFor('table', args)._id),
      fieldUsage: (_s, args, ctx) => ctx.services.tables.fieldUsage(requireUser(ctx), argsFor('fieldUsage', args)),
    },
    Mutation: {
      createTable: (_s, args, ctx) => ctx.services.tables.createTable(requireUser(ctx), argsFor('createTable', args)),
      updateTable: (_s, args, ctx) => ctx.services.tables.updateTable(requireUser(ctx), argsFor('updateTable', args)),
      addTableField: (_s, args, ctx) => ctx.services.tables.addTableField(requireUser(ctx), argsFor('addTableField', args)),
      updateTableField: (_s, args, ctx) => ctx.services.tables.updateTableField(requireUser(ctx), argsFor('updateTableField', args)),
      deleteTableField: (_s, args, ctx) => ctx.services.tables.deleteTableField(requireUser(ctx), argsFor('deleteTableField', args)),
      setTableAccess: (_s, args, ctx) => ctx.services.tables.setTableAccess(requireUser(ctx), argsFor('setTableAccess', args)),
      deleteTable: (_s, args, ctx) => ctx.services.tables.deleteTable(requireUser(ctx), argsFor('deleteTable', args)),
    },
  },
};
