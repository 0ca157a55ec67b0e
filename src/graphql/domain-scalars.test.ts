import { GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLScalarType, getNamedType, graphql, type GraphQLInputType, type GraphQLOutputType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { builderModules } from './builder/index.js';
import { DOMAIN_SCALARS } from './domain-scalars.js';
import { buildBuilderSchema } from './schema.js';

const schema = buildBuilderSchema(builderModules);

/** Every argument and field of the builder schema, with its type. */
function everyPosition(): Array<{ where: string; name: string; type: GraphQLInputType | GraphQLOutputType }> {
  const positions: Array<{ where: string; name: string; type: GraphQLInputType | GraphQLOutputType }> = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || !('getFields' in type)) continue;
    for (const field of Object.values(type.getFields())) {
      positions.push({ where: `${type.name}.${field.name}`, name: field.name, type: field.type });
      for (const arg of 'args' in field ? field.args : []) positions.push({ where: `${type.name}.${field.name}(${arg.name})`, name: arg.name, type: arg.type });
    }
  }
  return positions;
}

describe('the builder schema', () => {
  it('types every closed set with its domain scalar, never a bare String', () => {
    const closed: Record<string, string> = { type: 'HookType|FieldType', status: 'FeatureStatus', outcome: 'HookRunOutcome|AuditOutcome', scopes: 'Scope', effectiveScopes: 'Scope', permissions: 'Permission' };
    const loose = everyPosition()
      // A table's generated type name and a component prop's type as an author writes it are open text.
      .filter(({ name, where }) => name in closed && !where.startsWith('RecordOperations.') && !where.startsWith('FeatureComponentProp.'))
      .filter(({ name, type }) => !new RegExp(`^(${closed[name]})$`).test(getNamedType(type).name))
      .map(({ where, type }) => `${where}: ${String(type)}`);
    expect(loose).toEqual([]);
  });

  it('describes each domain scalar with its values, as introspection shows them', async () => {
    const result = await graphql({ schema, source: '{ __schema { types { name kind description } } }' });
    const types = (result.data!.__schema as { types: Array<{ name: string; kind: string; description: string }> }).types;
    for (const [name, values] of Object.entries(DOMAIN_SCALARS)) {
      expect(types.find((type) => type.name === name)).toEqual({ name, kind: 'SCALAR', description: `A string, one of: ${values.join(', ')}.` });
    }
  });

  it.each(Object.entries(DOMAIN_SCALARS))('accepts exactly the values of %s', (name, values) => {
    const type = schema.getType(name) as GraphQLScalarType;
    for (const value of values) expect(type.parseValue(value)).toBe(value);
    for (const bad of ['', values[0]!.toUpperCase(), 42, null, [values[0]]]) expect(() => type.parseValue(bad)).toThrow(`${name} must be one of ${values.join(', ')}`);
  });

  it('gives paged answers one shape: items, then nextCursor', () => {
    const pages = Object.values(schema.getTypeMap()).filter((type): type is GraphQLObjectType => type instanceof GraphQLObjectType && 'nextCursor' in type.getFields());
    expect(pages.map((page) => page.name).sort()).toEqual(['HookRunPage', 'McpAuditLogPage']);
    for (const page of pages) {
      const fields = page.getFields();
      expect(fields.items!.type).toBeInstanceOf(GraphQLNonNull);
      expect((fields.items!.type as GraphQLNonNull<GraphQLList<GraphQLOutputType>>).ofType).toBeInstanceOf(GraphQLList);
      expect(String(fields.nextCursor!.type)).toBe('ID');
    }
  });
});
