import { GraphQLObjectType, buildSchema, type GraphQLSchema } from 'graphql';
import { CLOSED_SET_TYPE_DEFS, attachClosedSets } from './closed-sets.js';
import type { GraphQLModule } from './module.js';

const ROOT_TYPE_DEFS = /* GraphQL */ `
  "An ISO-8601 date and time."
  scalar DateTime
  "Any JSON value."
  scalar JSON

  type Query
  type Mutation
`;


/** Builds one executable schema from the modules' SDL and attaches their resolvers. */
export function buildBuilderSchema(modules: readonly GraphQLModule[]): GraphQLSchema {
  const schema = buildSchema([ROOT_TYPE_DEFS, CLOSED_SET_TYPE_DEFS, ...modules.map((m) => m.typeDefs)].join('\n'));
  for (const module of modules) {
    for (const [typeName, fields] of Object.entries(module.resolvers)) {
      const type = schema.getType(typeName);
      if (!(type instanceof GraphQLObjectType)) throw new Error(`Resolvers for unknown type ${typeName}`);
      const typeFields = type.getFields();
      for (const [fieldName, resolve] of Object.entries(fields)) {
        const field = typeFields[fieldName];
        if (!field) throw new Error(`Resolver for unknown field ${typeName}.${fieldName}`);
        field.resolve = resolve as typeof field.resolve;
      }
    }
  }
  attachClosedSets(schema);
  return schema;
}
