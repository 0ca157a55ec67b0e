import { readdirSync, readFileSync } from 'node:fs';
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  getNullableType,
  type GraphQLField,
  type GraphQLType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DOMAIN_ENUMS, DOMAIN_SCALARS } from '../closed-sets.js';
import { featureOutput } from '../../features/schema.js';
import { hookOutput } from '../../hooks/schema.js';
import { buildBuilderSchema } from '../schema.js';
import { builderModules } from './index.js';
import { BUILDER_ARGUMENTS, graphqlArguments, graphqlInput, NOT_IN_GRAPHQL, schemaDescription, type BuilderArgumentsField } from './operation-args.js';
import { graphqlObject, OUTPUT_TYPES } from './output-types.js';

// Each builder root field in BUILDER_ARGUMENTS hands its arguments, top-level nulls removed, to a
// service that parses them with that zod schema. This file checks that the SDL's arguments are the
// schema's keys, by name, by kind and by whether they are required, so that neither can change
// without the other: what `argsFor`'s type claims.
//
// Required or optional, the rule: a GraphQL argument (or input field) is non-null exactly when
// the schema refuses it missing (it is not optional, nullish, defaulted, or otherwise accepting
// undefined). Top-level nulls are removed by argsFor, so a top-level schema need not accept null;
// inside an input object GraphQL passes an explicit null as it is, so a nullable input field (or
// list item) must also be accepted as null by its schema.
//
// Kinds: String and ID take a string, an enum of strings or a string literal; Int an integer
// number (.int()); Float a number not restricted to integers; Boolean a boolean or a boolean
// literal (confirm: true); DateTime a date (coerced from the ISO string) or a string; JSON
// anything; a GraphQL enum or a closed-set scalar (closed-sets.ts) a z.enum of the same values; a
// list an array of the element's kind; an input object a zod object, compared key by key in the
// same way. Wrappers (optional, nullable, default, pipes) are looked through: a pipe by its output
// unless that is a transform, then by its input; a union matches when one of its branches does.
// The schemas are read with zod's classes (instanceof, .shape, .unwrap(), .in/.out, .options,
// .element, .isInt): the JSON Schema that MCP's tools/list shows (portable-schema.ts) describes a
// pipe by its input (a scope as a bare string) and cannot describe a date.

const schema = buildBuilderSchema(builderModules);
const roots = [schema.getQueryType(), schema.getMutationType()].filter((root): root is GraphQLObjectType => root !== null && root !== undefined);
const rootFields = new Map(roots.flatMap((root) => Object.values(root.getFields()).map((field) => [field.name, { field }] as const)));

/** Positions, by `<field or input type>.<name>`, where GraphQL requires what the schema would accept missing. */
const REQUIRED_IN_GRAPHQL_ONLY: Readonly<Record<string, string>> = {
  'AccessRuleInput.level':
    "GraphQL's AccessRuleInput is the full form { level, filter }; MCP may also write { filter } alone (FILTER) or the level as a bare string (access-schema.ts)",
};

/** GraphQL enums whose schema also takes other spellings of the same values: how a schema value maps to the GraphQL one. */
const ENUM_SPELLINGS: Readonly<Record<string, (value: string) => string>> = {
  AccessLevel: (value) => value.toUpperCase(), // MCP and the CLI write levels in any letter case ('all', 'own')
};

// The answers go the other way: each builder type of a record MCP answers too is written from its
// output schema (OUTPUT_TYPES, graphqlObject); MCP's lists and writes answer those schemas or picks
// of them. Checked here as if written by hand: every key of the schema is a field of the type, of
// the same kind, nullable exactly where the schema lets it be null or missing, with one text where
// both describe it; the type may have more (a write's warnings, URLs, counts, resolved on demand).

/** What differs between the fields of an output type and the keys of the output schema `object`. */
function outputProblems(type: GraphQLObjectType, object: z.ZodObject): string[] {
  const fields = type.getFields();
  const problems: string[] = [];
  for (const [key, zod] of Object.entries(object.shape as Record<string, z.ZodType>)) {
    const where = `${type.name}.${key}`;
    const field: GraphQLField<unknown, unknown> | undefined = fields[key];
    if (!field) {
      problems.push(`${where}: in MCP's output, not in GraphQL`);
      continue;
    }
    const nullable = !(field.type instanceof GraphQLNonNull);
    const missing = zod.safeParse(null).success || zod.safeParse(undefined).success;
    if (nullable && !missing) problems.push(`${where}: nullable in GraphQL but never null in MCP's output`);
    if (!nullable && missing) problems.push(`${where}: non-null in GraphQL but null or missing in MCP's output`);
    // Where both describe the field, one text (a value type's own, such as the ISO time of a date, the GraphQL scalar says).
    const text = schemaDescription(zod);
    if (text && field.description && field.description !== text) problems.push(`${where}: described ${JSON.stringify(field.description)} in GraphQL, ${JSON.stringify(text)} in MCP`);
    problems.push(...kindProblems(where, getNullableType(field.type), zod));
  }
  return problems;
}

/** The schemas a value may be, wrappers looked through: one, or a union's branches. */
function alternatives(zod: z.ZodType): z.ZodType[] {
  if (zod instanceof z.ZodOptional || zod instanceof z.ZodNullable || zod instanceof z.ZodDefault || zod instanceof z.ZodPrefault) return alternatives(zod.unwrap() as z.ZodType);
  if (zod instanceof z.ZodNonOptional || zod instanceof z.ZodReadonly || zod instanceof z.ZodCatch) return alternatives(zod.unwrap() as z.ZodType);
  if (zod instanceof z.ZodLazy) return alternatives(zod.unwrap() as z.ZodType);
  if (zod instanceof z.ZodPipe) return alternatives((zod.out instanceof z.ZodTransform ? zod.in : zod.out) as z.ZodType);
  if (zod instanceof z.ZodUnion) return (zod.options as z.ZodType[]).flatMap(alternatives);
  return [zod];
}

/** A string schema, a format (z.email()) included. */
function isString(zod: z.ZodType): boolean {
  return zod instanceof z.ZodString || zod instanceof z.ZodStringFormat;
}

function sameValues(a: Iterable<unknown>, b: Iterable<unknown>): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((value) => right.has(value));
}

/** What is wrong with `zod` as the schema of a value of (nullable) GraphQL type `type` at `where`. */
function kindProblems(where: string, type: GraphQLType, zod: z.ZodType): string[] {
  // A union's branches of the GraphQL type's shape (an object for an input object) first: their problems say more.
  const isObject = type instanceof GraphQLInputObjectType || type instanceof GraphQLObjectType;
  const shaped = (candidate: z.ZodType) =>
    type instanceof GraphQLList ? candidate instanceof z.ZodArray : isObject ? candidate instanceof z.ZodObject : !(candidate instanceof z.ZodArray || candidate instanceof z.ZodObject);
  const candidates = alternatives(zod).sort((a, b) => Number(shaped(b)) - Number(shaped(a)));
  let best: string[] | undefined;
  for (const candidate of candidates) {
    const problems = candidateProblems(where, type, candidate);
    if (problems.length === 0) return [];
    best ??= problems;
  }
  return best ?? [`${where}: no schema`];
}

function candidateProblems(where: string, type: GraphQLType, zod: z.ZodType): string[] {
  const kind = zod.constructor.name;
  const mismatch = (expected: string) => [`${where}: GraphQL ${String(type)} but the schema is ${kind} (expected ${expected})`];
  if (type instanceof GraphQLList) {
    if (!(zod instanceof z.ZodArray)) return mismatch('an array');
    const item = type.ofType as GraphQLType;
    const element = zod.element as z.ZodType;
    const problems: string[] = [];
    if (!(item instanceof GraphQLNonNull) && !element.safeParse(null).success) problems.push(`${where}[]: items are nullable in GraphQL but the schema refuses null`);
    return [...problems, ...kindProblems(`${where}[]`, getNullableType(item), element)];
  }
  if (type instanceof GraphQLInputObjectType) {
    if (!(zod instanceof z.ZodObject)) return mismatch('an object');
    return fieldsProblems(type.name, Object.values(type.getFields()), zod, false);
  }
  if (type instanceof GraphQLObjectType) {
    if (!(zod instanceof z.ZodObject)) return mismatch('an object');
    return outputProblems(type, zod);
  }
  if (type instanceof GraphQLEnumType) {
    if (!(zod instanceof z.ZodEnum)) return mismatch(`z.enum of ${type.name}`);
    const spelling = ENUM_SPELLINGS[type.name] ?? ((value: string) => value);
    const values = (zod.options as unknown[]).map((value) => spelling(String(value)));
    const expected = type.getValues().map((value) => value.value as string);
    return sameValues(values, expected) ? [] : [`${where}: GraphQL enum ${type.name} is ${expected.join(', ')} but the schema's is ${[...new Set(values)].join(', ')}`];
  }
  if (type instanceof GraphQLScalarType) {
    const closedSet = DOMAIN_SCALARS[type.name];
    if (closedSet) {
      if (!(zod instanceof z.ZodEnum)) return mismatch(`z.enum of ${type.name}`);
      return sameValues(zod.options, closedSet) ? [] : [`${where}: scalar ${type.name} is ${closedSet.join(', ')} but the schema's enum is ${zod.options.join(', ')}`];
    }
    const literals = zod instanceof z.ZodLiteral ? [...(zod.values as Set<unknown>)] : undefined;
    switch (type.name) {
      case 'String':
      case 'ID':
        return isString(zod) || (zod instanceof z.ZodEnum && zod.options.every((value) => typeof value === 'string')) || literals?.every((value) => typeof value === 'string')
          ? []
          : mismatch('a string');
      case 'Int':
        return zod instanceof z.ZodNumber && zod.isInt ? [] : mismatch('an integer number');
      case 'Float':
        return zod instanceof z.ZodNumber && !zod.isInt ? [] : mismatch('a number not restricted to integers');
      case 'Boolean':
        return zod instanceof z.ZodBoolean || literals?.every((value) => typeof value === 'boolean') ? [] : mismatch('a boolean');
      case 'DateTime':
        return zod instanceof z.ZodDate || isString(zod) ? [] : mismatch('a date or a string');
      case 'JSON':
        return [];
      default:
        return [`${where}: no rule for the scalar ${type.name}`];
    }
  }
  return [`${where}: unexpected GraphQL type ${String(type)}`];
}

/**
 * What differs between GraphQL arguments or input fields of `owner` (a root field or an input
 * type) and the keys of `object`. `topLevel`: arguments of a root field, whose nulls argsFor removes.
 */
function fieldsProblems(owner: string, fields: readonly { name: string; type: GraphQLType }[], object: z.ZodObject, topLevel: boolean): string[] {
  const shape = object.shape as Record<string, z.ZodType>;
  const problems: string[] = [];
  for (const key of Object.keys(shape)) {
    if (!fields.some((field) => field.name === key) && !NOT_IN_GRAPHQL[`${owner}.${key}`]) problems.push(`${owner}.${key}: in the schema, not in GraphQL`);
  }
  for (const { name, type } of fields) {
    const where = `${owner}.${name}`;
    const zod = shape[name];
    if (!zod) {
      problems.push(`${where}: in GraphQL, not in the schema`);
      continue;
    }
    const nonNull = type instanceof GraphQLNonNull;
    const optional = zod.safeParse(undefined).success;
    if (nonNull && optional && !REQUIRED_IN_GRAPHQL_ONLY[where]) problems.push(`${where}: non-null in GraphQL but optional in the schema`);
    if (!nonNull && !optional) problems.push(`${where}: nullable in GraphQL but required by the schema`);
    if (!nonNull && !topLevel && !zod.safeParse(null).success) problems.push(`${where}: nullable in GraphQL (an explicit null reaches the service) but the schema refuses null`);
    problems.push(...kindProblems(where, getNullableType(type), zod));
  }
  return problems;
}

/** What differs between a root field's arguments and its registered schema. */
function argumentProblems(fieldName: string, object: z.ZodObject): string[] {
  const found = rootFields.get(fieldName);
  if (!found) return [`${fieldName}: not a root field of the builder schema`];
  return [...new Set(fieldsProblems(fieldName, found.field.args, object, true))]; // an input type used twice reports once
}

describe('builder arguments and their schemas', () => {
  it.each(Object.entries(BUILDER_ARGUMENTS))('%s: the arguments are the schema', (fieldName, object) => {
    expect(argumentProblems(fieldName, object)).toEqual([]);
  });

  it.each(Object.keys(BUILDER_ARGUMENTS) as BuilderArgumentsField[])('%s: the SDL takes the arguments graphqlArguments derives from the schema', (fieldName) => {
    const { field } = rootFields.get(fieldName)!;
    expect(`(${field.args.map((argument) => `${argument.name}: ${String(argument.type)}`).join(', ')})`).toBe(graphqlArguments(fieldName));
  });

  it('every root field with arguments has its input schema in BUILDER_ARGUMENTS, and every entry there is a root field', () => {
    const withArguments = [...rootFields.values()].filter(({ field }) => field.args.length > 0).map(({ field }) => field.name);
    expect(withArguments.filter((name) => !(name in BUILDER_ARGUMENTS))).toEqual([]);
    expect(Object.keys(BUILDER_ARGUMENTS).filter((name) => !rootFields.has(name))).toEqual([]);
  });

  it('each exception names a registered field or an input type of the schema, and a key the schema has', () => {
    const owners = new Set([...Object.keys(BUILDER_ARGUMENTS), ...Object.values(schema.getTypeMap()).filter((type) => type instanceof GraphQLInputObjectType).map((type) => type.name)]);
    const stale = [...Object.keys(NOT_IN_GRAPHQL), ...Object.keys(REQUIRED_IN_GRAPHQL_ONLY)].filter((position) => !owners.has(position.split('.')[0]!));
    expect(stale).toEqual([]);
    for (const position of Object.keys(NOT_IN_GRAPHQL)) {
      const [field, key] = position.split('.') as [keyof typeof BUILDER_ARGUMENTS, string];
      expect(Object.keys(BUILDER_ARGUMENTS[field].shape), position).toContain(key);
      expect(rootFields.get(field)!.field.args.map((arg) => arg.name), position).not.toContain(key);
    }
    for (const position of Object.keys(REQUIRED_IN_GRAPHQL_ONLY)) {
      const [owner, name] = position.split('.') as [string, string];
      const input = schema.getType(owner);
      const type = input instanceof GraphQLInputObjectType ? input.getFields()[name]?.type : rootFields.get(owner)?.field.args.find((arg) => arg.name === name)?.type;
      expect(type, `${position} is non-null in GraphQL`).toBeInstanceOf(GraphQLNonNull);
    }
    for (const name of Object.keys(ENUM_SPELLINGS)) expect(schema.getType(name), name).toBeInstanceOf(GraphQLEnumType);
    for (const name of Object.keys(DOMAIN_ENUMS)) expect(ENUM_SPELLINGS[name], `${name} is a closed set: one spelling`).toBeUndefined();
  });

  it.each(Object.entries(OUTPUT_TYPES))("%s answers what MCP's output schema for it says, described alike", (typeName, object) => {
    const type = schema.getType(typeName);
    expect(type).toBeInstanceOf(GraphQLObjectType);
    expect([...new Set(outputProblems(type as GraphQLObjectType, object))]).toEqual([]);
  });

  // Without their code: what MCP's lists and writes answer (featureOutput, hookOutput).
  it.each(Object.entries({ Feature: featureOutput, Hook: hookOutput }))("%s answers what MCP's lists and writes say of it, described alike", (typeName, object) => {
    expect([...new Set(outputProblems(schema.getType(typeName) as GraphQLObjectType, object))]).toEqual([]);
  });

  it("describes each argument with its key's description in the input schema, the text MCP's tools/list shows", () => {
    let described = 0;
    for (const [name, input] of Object.entries(BUILDER_ARGUMENTS)) {
      const field = rootFields.get(name)?.field;
      expect(field, name).toBeDefined();
      for (const [key, value] of Object.entries(input.shape as Record<string, z.ZodType>)) {
        const text = schemaDescription(value);
        const argument = field!.args.find((arg) => arg.name === key);
        // A key GraphQL does not take (NOT_IN_GRAPHQL) is checked by the test above.
        if (!text || !argument) continue;
        described += 1;
        expect(argument.description, `${name}.${key}`).toBe(text);
      }
    }
    expect(described).toBeGreaterThan(40);
    const createFeature = rootFields.get('createFeature')!.field;
    expect(createFeature.args.find((arg) => arg.name === '_id')?.description).toBe('Optional _id: 2-64 lowercase letters, digits and -; derived from the name when omitted');
  });

  it("writes each input type from its schema, fields described as MCP's tools/list describes them; AccessRuleInput alone by hand", () => {
    const folder = new URL('.', import.meta.url);
    const handWritten = readdirSync(folder)
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
      .flatMap((file) => [...readFileSync(new URL(file, folder), 'utf8').matchAll(/^\s*input (\w+) \{/gm)].map((match) => match[1]));
    // Its schema also takes a level as a bare word and { filter } alone (MCP); GraphQL the full { level, filter }.
    expect(handWritten).toEqual(['AccessRuleInput']);
    const generated = Object.values(schema.getTypeMap()).filter((type): type is GraphQLInputObjectType => type instanceof GraphQLInputObjectType && !handWritten.includes(type.name) && !type.name.startsWith('__'));
    expect(generated.map((type) => type.name).sort()).toEqual(['AppFieldInput', 'HttpHeaderInput', 'MenuEntryInput', 'TableAccessInput', 'WebhookSigningInput']);
    const appField = schema.getType('AppFieldInput') as GraphQLInputObjectType;
    const fieldInput = (BUILDER_ARGUMENTS.addTableField.shape.field as z.ZodObject).shape as Record<string, z.ZodType>;
    expect(Object.keys(appField.getFields())).toEqual(Object.keys(fieldInput));
    expect(appField.getFields().label!.description).toBe(schemaDescription(fieldInput.label!));
    expect(String(appField.getFields().type!.type)).toBe('FieldType!');
    expect(String(appField.getFields().referenceTableId!.type)).toBe('ID');
    expect((schema.getType('WebhookSigningInput') as GraphQLInputObjectType).description).toMatch(/^Sign the test run's body/);
    expect(graphqlInput('MenuEntryInput')).toBe('input MenuEntryInput {\n    label: String!\n    "/feature/<feature_id> of an existing feature"\n    path: String!\n  }');
    expect(() => graphqlInput('NoSuchInput')).toThrow(/OBJECT_ARGUMENTS names no position/);
  });

  it('writes each record type MCP answers too from its output schema, and no such type by hand', () => {
    const folder = new URL('.', import.meta.url);
    const handWritten = readdirSync(folder)
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
      .flatMap((file) => [...readFileSync(new URL(file, folder), 'utf8').matchAll(/^\s*type (\w+) \{/gm)].map((match) => match[1]));
    expect(handWritten.filter((name) => name! in OUTPUT_TYPES)).toEqual([]);
    expect(graphqlObject('MenuEntry')).toBe('type MenuEntry {\n    label: String!\n    "A feature path: /feature/<feature_id>."\n    path: String!\n  }');
    // Ids are ID, an ISO time DateTime without the scalar's text, a nested record its type, a finding JSON.
    const feature = schema.getType('Feature') as GraphQLObjectType;
    expect(Object.fromEntries(Object.entries(feature.getFields()).map(([name, field]) => [name, String(field.type)]))).toMatchObject({ _id: 'ID!', createdBy: 'ID', createdAt: 'DateTime!', roleIds: '[ID!]!', status: 'FeatureStatus!', warnings: '[JSON!]' });
    expect(feature.getFields().createdAt!.description).toBeUndefined();
    expect(feature.description).toBe('A custom feature written as JSX, reached at /feature/<_id>.');
    expect(String((schema.getType('AppTable') as GraphQLObjectType).getFields().access!.type)).toBe('[TableAccess!]!');
    expect(String((schema.getType('CodeValidation') as GraphQLObjectType).getFields().errors!.type)).toBe('[JSON!]!');
    expect(String((schema.getType('AccessRule') as GraphQLObjectType).getFields().level!.type)).toBe('AccessLevel!');
  });

  it("finds a key of MCP's output GraphQL lacks, a changed kind, a changed nullability and a second text", () => {
    const probe = buildBuilderSchema([...builderModules, { typeDefs: 'type OutputProbe { _id: ID!, count: Int, "Draft or published" status: FeatureStatus! }', resolvers: {} }]);
    const type = probe.getType('OutputProbe') as GraphQLObjectType;
    const output = (shape: z.ZodRawShape) => outputProblems(type, z.object(shape));
    expect(output({ _id: z.string(), count: z.number().int().nullable(), status: z.enum(['draft', 'published']) })).toEqual([]);
    expect(output({ _id: z.string(), count: z.number().int(), status: z.enum(['draft', 'published']).describe('The status'), extra: z.string() })).toEqual([
      'OutputProbe.count: nullable in GraphQL but never null in MCP\'s output',
      'OutputProbe.status: described "Draft or published" in GraphQL, "The status" in MCP',
      "OutputProbe.extra: in MCP's output, not in GraphQL",
    ]);
    expect(output({ _id: z.string().optional(), count: z.string().nullable(), status: z.enum(['draft']) })).toEqual([
      "OutputProbe._id: non-null in GraphQL but null or missing in MCP's output",
      'OutputProbe.count: GraphQL Int but the schema is ZodString (expected an integer number)',
      "OutputProbe.status: GraphQL enum FeatureStatus is draft, published but the schema's is draft",
    ]);
  });

  it('finds a renamed argument, a changed kind and a changed nullability', () => {
    const problems = (sdlArgs: string, object: z.ZodObject) => {
      const probe = buildBuilderSchema([...builderModules, { typeDefs: `extend type Query { argumentsProbe(${sdlArgs}): Boolean }`, resolvers: {} }]);
      const args = (probe.getQueryType()!.getFields().argumentsProbe!).args;
      return fieldsProblems('argumentsProbe', args, object, true);
    };
    const input = z.object({ _id: z.string(), count: z.number().int().optional(), status: z.enum(['draft', 'published']).default('draft') });
    expect(problems('_id: ID!, count: Int, status: FeatureStatus', input)).toEqual([]);
    expect(problems('id: ID!, count: Int, status: FeatureStatus', input)).toEqual(['argumentsProbe._id: in the schema, not in GraphQL', 'argumentsProbe.id: in GraphQL, not in the schema']);
    expect(problems('_id: ID!, count: Float, status: FeatureStatus', input)).toEqual(['argumentsProbe.count: GraphQL Float but the schema is ZodNumber (expected a number not restricted to integers)']);
    expect(problems('_id: ID!, count: String, status: FeatureStatus', input)).toEqual(['argumentsProbe.count: GraphQL String but the schema is ZodNumber (expected a string)']);
    expect(problems('_id: ID, count: Int, status: FeatureStatus!', input)).toEqual([
      'argumentsProbe._id: nullable in GraphQL but required by the schema',
      'argumentsProbe.status: non-null in GraphQL but optional in the schema',
    ]);
    expect(problems('_id: ID!, count: Int, status: HookType', input)).toEqual(['argumentsProbe.status: GraphQL enum HookType is beforeSave, afterSave, webHook but the schema\'s is draft, published']);
  });
});
