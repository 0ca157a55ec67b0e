import { GraphQLEnumType, GraphQLScalarType, GraphQLSchema, buildSchema, graphql, parse, printSchema, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import type { RecordField, RecordTable } from '../tables/record-schema.js';
import { applicationSchema, sectionedSdl } from './application-schema.js';
import { builderModules } from './builder/index.js';
import { recordsModule, type TakenNames } from './records/index.js';
import { DOMAIN_ENUMS, DOMAIN_SCALARS } from './closed-sets.js';
import { buildBuilderSchema, extendBuilderSchema } from './schema.js';

const builder = buildBuilderSchema(builderModules);
const taken: TakenNames = {
  types: new Set(Object.keys(builder.getTypeMap())),
  queries: new Set(Object.keys(builder.getQueryType()!.getFields())),
  mutations: new Set(Object.keys(builder.getMutationType()!.getFields())),
};

function table(name: string, fields: RecordField[]): RecordTable {
  return { id: `id-${name}`, name, sqlName: `t_${name.toLowerCase()}`, fields, fieldsByName: new Map(fields.map((field) => [field.name, field])) };
}

const ORDERS = table('Orders', [
  { name: 'title', type: 'text', required: true, unique: false, reference: null },
  { name: 'placedAt', type: 'datetime', required: false, unique: false, reference: null },
]);
const ORDER_OPERATIONS = ['listOrders', 'getOrders', 'createOrders', 'updateOrders', 'deleteOrders'];

/** The whole schema of an application with these tables (as served), and the names of its generated root fields. */
function wholeSchema(tables: RecordTable[]): { schema: GraphQLSchema; applicationFields: Set<string> } {
  const schema = extendBuilderSchema(builder, recordsModule(tables, taken));
  const roots = [...Object.keys(schema.getQueryType()!.getFields()), ...Object.keys(schema.getMutationType()!.getFields())];
  return { schema, applicationFields: new Set(roots.filter((name) => !taken.queries.has(name) && !taken.mutations.has(name))) };
}

function rootFields(schema: GraphQLSchema): string[] {
  return [...Object.keys(schema.getQueryType()?.getFields() ?? {}), ...Object.keys(schema.getMutationType()?.getFields() ?? {})].sort();
}

describe('the builder schema extended with the tables', () => {
  it('is the schema built from all the SDL at once: the same types, resolvers, argument descriptions and closed sets', () => {
    const module = recordsModule([ORDERS, table('Payroll', [{ name: 'amount', type: 'number', required: true, unique: false, reference: null }])], taken);
    const whole = buildBuilderSchema([...builderModules, module]);
    const extended = extendBuilderSchema(builder, module);
    expect(printSchema(extended)).toBe(printSchema(whole));
    for (const root of ['getQueryType', 'getMutationType'] as const) {
      const wholeFields = whole[root]()!.getFields();
      for (const [name, field] of Object.entries(extended[root]()!.getFields())) {
        expect(field.resolve, name).toBe(wholeFields[name]!.resolve);
        expect(field.args.map((argument) => argument.description), name).toEqual(wholeFields[name]!.args.map((argument) => argument.description));
      }
    }
    for (const name of [...Object.keys(DOMAIN_ENUMS), ...Object.keys(DOMAIN_SCALARS)]) {
      const type = extended.getType(name) as GraphQLEnumType | GraphQLScalarType;
      expect(() => type.parseValue('not-a-member'), name).toThrow(/must be one of/);
    }
  });

  it('is the builder schema itself while the application has no tables', () => {
    expect(extendBuilderSchema(builder, recordsModule([], taken))).toBe(builder);
  });
});

describe('the application schema', () => {
  it("holds the generated operations only, with their resolvers, and none of the builder's types", () => {
    const { schema, applicationFields } = wholeSchema([ORDERS]);
    const application = applicationSchema(schema, applicationFields);
    expect(rootFields(application)).toEqual([...ORDER_OPERATIONS].sort());
    expect(application.getQueryType()!.getFields().listOrders!.resolve).toBe(schema.getQueryType()!.getFields().listOrders!.resolve);
    for (const builderType of ['Feature', 'HookType', 'FieldType', 'McpApiKey', 'User']) expect(application.getType(builderType)).toBeUndefined();
    expect(validate(application, parse('{ listOrders(sort: [{ field: title }], filter: { placedAt: { gt: "2024-01-01T00:00:00Z" } }) { items { title } total } }'))).toEqual([]);
    expect(validate(application, parse('{ features { _id } }')).map((error) => error.message)).toEqual(['Cannot query field "features" on type "Query".']);
  });

  it('has an empty Query and no Mutation while the application has no tables, and still answers __typename', async () => {
    const { schema, applicationFields } = wholeSchema([]);
    const application = applicationSchema(schema, applicationFields);
    expect(rootFields(application)).toEqual([]);
    expect(application.getMutationType()).toBeUndefined();
    expect(await graphql({ schema: application, source: '{ __typename }' })).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('the sectioned SDL', () => {
  it.each([
    ['with tables', [ORDERS]],
    ['without tables', []],
  ])('prints the application operations first, the builder operations apart, as one SDL of the whole schema (%s)', (_case, tables) => {
    const { schema, applicationFields } = wholeSchema(tables);
    const sdl = sectionedSdl(schema, applicationSchema(schema, applicationFields));
    const [applicationPart, builderPart] = sdl.split('# Builder operations');
    for (const operation of tables.length ? ORDER_OPERATIONS : []) {
      expect(applicationPart).toContain(`  ${operation}(`);
      expect(builderPart).not.toContain(`  ${operation}(`);
    }
    expect(applicationPart).not.toContain('createTable(');
    expect(builderPart).toContain('createTable(');
    expect(builderPart).toContain('enum FeatureStatus {');
    const rebuilt = buildSchema(sdl);
    expect(rootFields(rebuilt)).toEqual(rootFields(schema));
    expect(Object.keys(rebuilt.getTypeMap()).sort()).toEqual(Object.keys(schema.getTypeMap()).sort());
  });
});
