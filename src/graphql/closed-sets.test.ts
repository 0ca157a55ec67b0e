import {
  GraphQLEnumType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  getNamedType,
  graphql,
  parse,
  print,
  validate,
  type GraphQLInputType,
  type GraphQLOutputType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { builderModules } from './builder/index.js';
import { DOMAIN_ENUMS, DOMAIN_SCALARS, domainScalarDescription, quotedEnumValues } from './closed-sets.js';
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

/** The messages of validating `source` against the builder schema, after quoted enum values are read as enum values. */
function validationMessages(source: string): string[] {
  return validate(schema, quotedEnumValues(schema, parse(source))).map((error) => error.message);
}

describe('the builder schema', () => {
  it('types every closed set with its domain enum or scalar, never a bare String', () => {
    const closed: Record<string, string> = { type: 'HookType|FieldType', status: 'FeatureStatus', outcome: 'HookRunOutcome|AuditOutcome', scopes: 'Scope', effectiveScopes: 'Scope', permissions: 'Permission' };
    const loose = everyPosition()
      // A table's generated type name and a component prop's type as an author writes it are open text.
      .filter(({ name, where }) => name in closed && !where.startsWith('RecordOperations.') && !where.startsWith('FeatureComponentProp.'))
      .filter(({ name, type }) => !new RegExp(`^(${closed[name]})$`).test(getNamedType(type).name))
      .map(({ where, type }) => `${where}: ${String(type)}`);
    expect(loose).toEqual([]);
  });

  it('makes an enum of every closed set whose values are GraphQL names, and keeps a scalar for the others', () => {
    expect(Object.keys(DOMAIN_ENUMS).sort()).toEqual(['AuditOutcome', 'FeatureStatus', 'HookRunOutcome', 'HookType', 'WebhookSigningScheme']);
    expect(Object.keys(DOMAIN_SCALARS).sort()).toEqual(['FieldType', 'Permission', 'Scope']);
  });

  it('shows each enum with its values and each scalar with its values in its description, as introspection answers', async () => {
    const result = await graphql({ schema, source: '{ __schema { types { name kind description enumValues { name } } } }' });
    const types = (result.data!.__schema as { types: Array<{ name: string; kind: string; description: string | null; enumValues: Array<{ name: string }> | null }> }).types;
    for (const [name, values] of Object.entries(DOMAIN_ENUMS)) {
      expect(types.find((type) => type.name === name)).toMatchObject({ kind: 'ENUM', enumValues: values.map((value) => ({ name: value })) });
    }
    for (const [name, values] of Object.entries(DOMAIN_SCALARS)) {
      expect(types.find((type) => type.name === name)).toEqual({ name, kind: 'SCALAR', description: domainScalarDescription(values), enumValues: null });
    }
  });

  it.each([
    ['FieldType', 'A string, one of: text, number, boolean, date, datetime, json, reference, multi-reference. Written as a string in a document ("multi-reference"); text, number, boolean, date, datetime, json, reference, being GraphQL names, may also be written unquoted.'],
    ['Scope', 'A string, one of: config:read, features:write, tables:write, menus:write, hooks:write, roles:write, env:write, config:delete. Written as a string in a document ("config:read"): the values are not GraphQL names.'],
  ])('describes %s with the values a document may write unquoted', (name, description) => {
    expect(schema.getType(name)!.description).toBe(description);
  });

  it.each(Object.entries({ ...DOMAIN_ENUMS, ...DOMAIN_SCALARS }))('accepts exactly the values of %s from variables', (name, values) => {
    const type = schema.getType(name) as GraphQLEnumType | GraphQLScalarType;
    for (const value of values) expect(type.parseValue(value)).toBe(value);
    for (const bad of ['', values[0]!.toUpperCase(), 42, null, [values[0]]]) expect(() => type.parseValue(bad)).toThrow(`${name} must be one of ${values.join(', ')}`);
  });

  it.each(Object.entries(DOMAIN_ENUMS))('serializes each value of %s as the domain string', (name, values) => {
    const type = schema.getType(name) as GraphQLEnumType;
    for (const value of values) expect(type.serialize(value)).toBe(value);
  });

  it.each([
    ['an enum value', '{ hookRuns(outcome: timeout) { nextCursor } }'],
    ['a string naming an enum value, as written while the sets were scalars', '{ hookRuns(outcome: "timeout") { nextCursor } }'],
    ['a string naming an enum value in a list and an input object', 'mutation { testWebhook(_id: "x", signWith: { scheme: "stripe", envVar: "S" }) { httpStatus } }'],
    ['a string as a variable default', 'query($o: HookRunOutcome = "memory") { hookRuns(outcome: $o) { nextCursor } }'],
    ['a scalar value that is a name, unquoted', 'mutation { createRole(name: "r", permissions: [admin, "config:read"]) { _id } }'],
    ['a field type that is a name, unquoted', 'mutation { addTableField(tableId: "t", field: { name: "n", type: text }) { _id } }'],
  ])('validates %s', (_case, source) => {
    expect(validationMessages(source)).toEqual([]);
  });

  it.each([
    ['an unknown enum value', '{ hookRuns(outcome: slow) { nextCursor } }', 'HookRunOutcome must be one of ok, refused, error, timeout, memory; got slow'],
    ['a string that is no enum value', '{ hookRuns(outcome: "slow") { nextCursor } }', 'HookRunOutcome must be one of ok, refused, error, timeout, memory; got "slow"'],
    ['a string in the wrong letter case', 'mutation { updateFeature(_id: "f", status: "Published") { _id } }', 'FeatureStatus must be one of draft, published; got "Published"'],
    ['a scope written unquoted', 'mutation { createMcpApiKey(name: "k", scopes: [config], expiresInDays: 1) { apiKey } }', 'Scope must be one of config:read, features:write, tables:write, menus:write, hooks:write, roles:write, env:write, config:delete; got config'],
    ['a boolean for a field type', 'mutation { addTableField(tableId: "t", field: { name: "n", type: true }) { _id } }', 'FieldType must be one of text, number, boolean, date, datetime, json, reference, multi-reference; got true'],
  ])('refuses %s naming the allowed values', (_case, source, message) => {
    expect(validationMessages(source)).toEqual([message]);
  });

  it('reads only strings where a domain enum is expected as enum values, and leaves other strings as they are', () => {
    const source = '{ hooks(type: "webHook", tableId: "webHook") { _id } sorted: hookRuns(hookId: "ok", outcome: "ok") { nextCursor } }';
    expect(print(quotedEnumValues(schema, parse(source)))).toBe('{\n  hooks(type: webHook, tableId: "webHook") {\n    _id\n  }\n  sorted: hookRuns(hookId: "ok", outcome: ok) {\n    nextCursor\n  }\n}');
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
