import { z } from 'zod';
import { roleOutput } from '../../access/schema.js';
import { codeValidationOutput, findingOutput } from '../../authoring/schema.js';
import { environmentVariableOutput } from '../../envvars/schema.js';
import { componentOutput, componentPropOutput, featureAuthoringGuideOutput, featureModuleOutput, guideThemeOutput, runtimeExportOutput } from '../../features/authoring-guide.js';
import { featureWithCodeOutput } from '../../features/schema.js';
import { hookWithContentOutput } from '../../hooks/schema.js';
import { menuEntryOutput, menuOutput } from '../../menus/schema.js';
import { idValues, isoTime } from '../../platform/validation.js';
import { ACCESS_ACTIONS, ACCESS_LEVELS, accessRuleOutput, dataGrantOutput, tableAccessOutput } from '../../tables/access-schema.js';
import { entityOutput, fieldOutput } from '../../tables/schema.js';
import { closedSetOf, schemaDescription, sdlDescription, wrapped } from './operation-args.js';

/**
 * The builder's object types for the records MCP's tools answer too, by GraphQL name: each is
 * written from the domain's output schema (src/<domain>/schema.ts) that MCP's outputSchema shows,
 * so that a field, its kind, whether it may be null and its description are stated once.
 */
export const OUTPUT_TYPES = {
  Feature: featureWithCodeOutput,
  Hook: hookWithContentOutput,
  AppTable: entityOutput,
  AppField: fieldOutput,
  TableAccess: tableAccessOutput,
  AccessRule: accessRuleOutput,
  DataGrant: dataGrantOutput,
  Menu: menuOutput,
  MenuEntry: menuEntryOutput,
  Role: roleOutput,
  CodeValidation: codeValidationOutput,
  FeatureAuthoringGuide: featureAuthoringGuideOutput,
  FeatureModule: featureModuleOutput,
  FeatureComponent: componentOutput,
  FeatureComponentProp: componentPropOutput,
  FeatureRuntimeExport: runtimeExportOutput,
  EnvironmentVariable: environmentVariableOutput,
} as const satisfies Record<string, z.ZodObject>;

export type OutputTypeName = keyof typeof OUTPUT_TYPES;

/** The GraphQL type of a value that is one of these objects where it appears in another: its type, or JSON (a finding). */
const OBJECT_TYPES: ReadonlyMap<z.ZodType, string> = new Map<z.ZodType, string>([
  ...Object.entries(OUTPUT_TYPES).map(([name, object]) => [object, name] as [z.ZodType, string]),
  // Typed JSON in GraphQL: a validator's finding ({ code, message, line, column }), the guide's theme.
  [findingOutput, 'JSON'],
  [guideThemeOutput, 'JSON'],
]);

/**
 * The enums of data access, written from the domain's values. Not closed sets (closed-sets.ts), which
 * take one spelling: MCP and the CLI write a level in any letter case ('all', 'own').
 */
const BUILDER_ENUMS = {
  AccessLevel: { values: ACCESS_LEVELS, description: "How much of a table's records a rule reaches: none, those the user created, those a filter matches, or all." },
  AccessAction: { values: ACCESS_ACTIONS },
} as const satisfies Record<string, { values: readonly string[]; description?: string }>;

/** The SDL of an enum of BUILDER_ENUMS, from the domain's values. */
export function graphqlEnum(name: keyof typeof BUILDER_ENUMS): string {
  const { values, description }: { values: readonly string[]; description?: string } = BUILDER_ENUMS[name];
  return `${sdlDescription(description, '  ')}enum ${name} {\n    ${values.join('\n    ')}\n  }`;
}

const BUILDER_ENUM_VALUES: Readonly<Record<string, readonly string[]>> = Object.fromEntries(Object.entries(BUILDER_ENUMS).map(([name, { values }]) => [name, values]));

/** The nullable GraphQL type of an answer's value of `schema`, at `where` (`<type>.<key>`). */
function outputType(schema: z.ZodType, where: string): string {
  for (let current: z.ZodType | undefined = schema; current; current = wrapped(current)) {
    const object = OBJECT_TYPES.get(current);
    if (object) return object;
    if (current === isoTime) return 'DateTime';
    if (idValues.get(current)?.kind === 'id') return 'ID';
    if (current instanceof z.ZodString || current instanceof z.ZodStringFormat) return 'String';
    if (current instanceof z.ZodEnum) return closedSetOf(current.options, where, BUILDER_ENUM_VALUES);
    if (current instanceof z.ZodNumber) return current.isInt ? 'Int' : 'Float';
    if (current instanceof z.ZodBoolean) return 'Boolean';
    if (current instanceof z.ZodRecord) return 'JSON';
    if (current instanceof z.ZodArray) {
      const element = current.element as z.ZodType;
      return `[${outputType(element, where)}${mayBeNull(element) ? '' : '!'}]`;
    }
    if (current instanceof z.ZodObject) throw new Error(`${where}: an object in an answer needs its type in OUTPUT_TYPES`);
  }
  throw new Error(`${where}: no GraphQL type for a ${schema.constructor.name}`);
}

/** Whether an answer may hold null or nothing there: GraphQL answers null for both. */
function mayBeNull(schema: z.ZodType): boolean {
  return schema.safeParse(null).success || schema.safeParse(undefined).success;
}

/**
 * The SDL of a builder object type from its output schema (OUTPUT_TYPES): the schema's keys in its
 * order, typed as graphqlArguments types arguments (ids ID, closed sets their enum or scalar, an
 * ISO time DateTime, a nested record its type), non-null exactly when the schema never answers null
 * or nothing, described as the schema describes them (an ISO time by the DateTime scalar), the type
 * by the object's own description. `graphqlOnly`: the SDL of fields GraphQL alone answers (a write's
 * warnings, a count resolved on demand), after the others.
 *
 * @example graphqlObject('MenuEntry') // type MenuEntry { label: String! "A feature path: …" path: String! }
 */
export function graphqlObject(name: OutputTypeName, graphqlOnly = ''): string {
  const object: z.ZodObject = OUTPUT_TYPES[name];
  const fields = Object.entries(object.shape as Record<string, z.ZodType>).map(([key, schema]) => {
    const text = schemaDescription(schema);
    const type = `${outputType(schema, `${name}.${key}`)}${mayBeNull(schema) ? '' : '!'}`;
    return `    ${sdlDescription(text === isoTime.description ? undefined : text, '    ')}${key}: ${type}`;
  });
  const extra = graphqlOnly.trim() ? `\n    ${graphqlOnly.trim()}` : '';
  return `${sdlDescription(object.description, '  ')}type ${name} {\n${fields.join('\n')}${extra}\n  }`;
}
