import type { GraphQLModule } from '../module.js';
import { requireUser, withoutNulls } from './access.js';

const typeDefs = /* GraphQL */ `
  "A field of an application table; its column is named like the field."
  type AppField {
    _id: ID!
    name: String!
    type: FieldType!
    required: Boolean!
    unique: Boolean!
    "The table a reference or multi-reference field points at."
    referenceTableId: ID
    description: String!
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

  "An application table: metadata of a real SQL table of records."
  type AppTable {
    _id: ID!
    name: String!
    description: String!
    "Fields in position order."
    fields: [AppField!]!
    "The generated GraphQL operations of the table's records."
    operations: RecordOperations
    createdAt: DateTime!
    updatedAt: DateTime!
  }

  input AppFieldInput {
    name: String!
    type: FieldType!
    required: Boolean
    unique: Boolean
    "The _id (or name) of the target table of a reference or multi-reference field."
    referenceTableId: ID
    description: String
  }

  extend type Query {
    "The application's tables."
    tables: [AppTable!]!
    table(_id: ID!): AppTable
  }

  extend type Mutation {
    "Creates a table and its SQL table."
    createTable(name: String!, description: String, fields: [AppFieldInput!]): AppTable!
    "Renames a table or changes its description; records stay."
    updateTable(_id: ID!, name: String, description: String): AppTable!
    "Adds a field; a required field needs a table without rows."
    addTableField(tableId: ID!, field: AppFieldInput!): AppTable!
    "Changes a field's description; field is its _id or name."
    updateTableField(tableId: ID!, field: String!, description: String!): AppTable!
    "Drops a table and its records (needs confirm: true)."
    deleteTable(_id: ID!, confirm: Boolean!): Boolean!
  }
`;

export const tablesModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    AppTable: {
      operations: (table, _a, ctx) => ctx.services.graphql.recordNames((table as { _id: string })._id),
    },
    Query: {
      tables: (_s, _a, ctx) => ctx.services.tables.listTables(requireUser(ctx)),
      table: (_s, args, ctx) => ctx.services.tables.getTable(requireUser(ctx), args._id),
    },
    Mutation: {
      createTable: (_s, args, ctx) => ctx.services.tables.createTable(requireUser(ctx), withoutNulls(args) as never),
      updateTable: (_s, args, ctx) => ctx.services.tables.updateTable(requireUser(ctx), withoutNulls(args) as never),
      addTableField: (_s, args, ctx) => ctx.services.tables.addTableField(requireUser(ctx), args as never),
      updateTableField: (_s, args, ctx) => ctx.services.tables.updateTableField(requireUser(ctx), args as never),
      deleteTable: (_s, args, ctx) => ctx.services.tables.deleteTable(requireUser(ctx), args as never),
    },
  },
};
