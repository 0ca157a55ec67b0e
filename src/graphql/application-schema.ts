import { GraphQLObjectType, GraphQLSchema, isSpecifiedScalarType, isIntrospectionType, printSchema, printType, type GraphQLNamedType } from 'graphql';

/**
 * The schema of the application's own operations: the root fields generated from its tables
 * (`applicationFields`), with their resolvers, and only the types they use. What an integration
 * token introspects and runs: builder operations need a signed-in user. An application without
 * tables has no operation: its Query type is empty, which GraphQL allows nowhere else, so the
 * schema is marked valid rather than checked.
 *
 * @example applicationSchema(schema, new Set(['listOrders', 'createOrders'])).getQueryType()!.getFields() // { listOrders }
 */
export function applicationSchema(schema: GraphQLSchema, applicationFields: ReadonlySet<string>): GraphQLSchema {
  const query = rootWith(schema.getQueryType(), (name) => applicationFields.has(name)) ?? new GraphQLObjectType({ name: 'Query', fields: {} });
  const mutation = rootWith(schema.getMutationType(), (name) => applicationFields.has(name));
  return new GraphQLSchema({ query, mutation, assumeValid: Object.keys(query.getFields()).length === 0 });
}

/**
 * The SDL of the whole schema in two sections: first the application's operations (what
 * `applicationSchema` holds), then the builder operations apart, as `extend type Query` and
 * `extend type Mutation` with the types only they use. The text is one valid SDL document.
 */
export function sectionedSdl(schema: GraphQLSchema, application: GraphQLSchema): string {
  const applicationTypes = application.getTypeMap();
  const roots = [schema.getQueryType(), schema.getMutationType()].flatMap((root) => (root ? [root] : []));
  const builderRoots = roots.flatMap((root) => {
    const applicationRoot = applicationTypes[root.name] as GraphQLObjectType | undefined;
    const applicationFields = applicationRoot?.getFields() ?? {};
    const builderRoot = rootWith(root, (name) => !(name in applicationFields));
    if (!builderRoot) return [];
    return [`${applicationRoot ? 'extend ' : ''}${printType(builderRoot)}`];
  });
  const builderTypes = Object.values(schema.getTypeMap()).filter((type) => isDefinedType(type) && !(type.name in applicationTypes) && !roots.includes(type as GraphQLObjectType));
  return [
    "# The application's operations, generated from its tables: what features and integration tokens call.",
    printSchema(application),
    '',
    '# Builder operations: for signed-in users only (session tokens); features and integration tokens do not reach them.',
    [...builderRoots, ...builderTypes.map((type) => printType(type))].join('\n\n'),
    '',
  ].join('\n');
}

/** A root type with only the fields `keep` names, or undefined when none is left. */
function rootWith(root: GraphQLObjectType | null | undefined, keep: (name: string) => boolean): GraphQLObjectType | undefined {
  if (!root) return undefined;
  const config = root.toConfig();
  const fields = Object.fromEntries(Object.entries(config.fields).filter(([name]) => keep(name)));
  return Object.keys(fields).length ? new GraphQLObjectType({ ...config, fields }) : undefined;
}

function isDefinedType(type: GraphQLNamedType): boolean {
  return !isSpecifiedScalarType(type) && !isIntrospectionType(type);
}
