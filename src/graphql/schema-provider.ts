import { printSchema, type GraphQLSchema } from 'graphql';
import { builderModules } from './builder/index.js';
import { buildBuilderSchema } from './schema.js';

/** The schema served at `/graphql` and its SDL (what `get_graphql_schema` returns). */
export class GraphQLSchemaProvider {
  private readonly schema: GraphQLSchema = buildBuilderSchema(builderModules);
  private printed: string | undefined;

  current(): GraphQLSchema {
    return this.schema;
  }

  sdl(): string {
    this.printed ??= printSchema(this.schema);
    return this.printed;
  }
}
