import { z } from 'zod';
import {
  changePasswordInput,
  createRoleInput,
  createUserInput,
  deleteRoleInput,
  featureRolesInput,
  grantFeatureAccessInput,
  transferOwnershipInput,
  updateRoleInput,
  updateUserInput,
} from '../../access/schema.js';
import { updateSettingsInput } from '../../application/schema.js';
import { listMcpAuditLogsInput } from '../../audit/schema.js';
import { deleteEnvironmentVariableInput, setEnvironmentVariableInput } from '../../envvars/schema.js';
import {
  createFeatureInput,
  deleteFeatureInput,
  featurePreviewInput,
  featureRefInput,
  featureVersionDiffInput,
  listFeaturesInput,
  updateFeatureInput,
  validateFeatureCodeInput,
} from '../../features/schema.js';
import { hookRunStatsInput } from '../../hooks/run-stats.js';
import {
  createHookInput,
  deleteHookInput,
  hookRefInput,
  listHookRunsInput,
  listHooksInput,
  testWebhookInput,
  updateHookInput,
  validateHookCodeInput,
} from '../../hooks/schema.js';
import { createIntegrationKeyInput, deleteIntegrationKeyInput } from '../../integrations/schema.js';
import { createMcpApiKeyInput, listMcpApiKeysInput, revokeMcpApiKeyInput } from '../../keys/schema.js';
import { deleteMenuInput, upsertMenuInput } from '../../menus/schema.js';
import {
  addTableFieldInput,
  createTableInput,
  deleteTableFieldInput,
  deleteTableInput,
  fieldUsageInput,
  setTableAccessInput,
  tableRefInput,
  updateTableFieldInput,
  updateTableInput,
} from '../../tables/schema.js';
import { idValues } from '../../platform/validation.js';
import { DOMAIN_ENUMS, DOMAIN_SCALARS } from '../closed-sets.js';

/**
 * The input schema of each builder root field that hands its arguments to a service, by field
 * name: the field's arguments are that schema's keys (arguments.test.ts fails when the SDL and the
 * schema part). The service parses them after its permission check, so that a caller without the
 * permission is FORBIDDEN whatever it sent; the resolver does not parse.
 */
export const BUILDER_ARGUMENTS = {
  // access
  featureRoles: featureRolesInput,
  createUser: createUserInput,
  changeMyPassword: changePasswordInput,
  updateUser: updateUserInput,
  transferOwnership: transferOwnershipInput,
  createRole: createRoleInput,
  updateRole: updateRoleInput,
  deleteRole: deleteRoleInput,
  grantFeatureAccess: grantFeatureAccessInput,
  grantFeature: grantFeatureAccessInput,
  revokeFeatureAccess: grantFeatureAccessInput,
  // app page
  appFeature: featureRefInput,
  featurePreview: featurePreviewInput,
  // application
  updateApplication: updateSettingsInput,
  // audit
  mcpAuditLogs: listMcpAuditLogsInput,
  // envvars
  setEnvironmentVariable: setEnvironmentVariableInput,
  deleteEnvironmentVariable: deleteEnvironmentVariableInput,
  // features
  validateFeatureCode: validateFeatureCodeInput,
  featureVersionDiff: featureVersionDiffInput,
  features: listFeaturesInput,
  feature: featureRefInput,
  featureVersions: featureRefInput,
  createFeature: createFeatureInput,
  updateFeature: updateFeatureInput,
  deleteFeature: deleteFeatureInput,
  // hooks
  validateHookCode: validateHookCodeInput,
  hooks: listHooksInput,
  hook: hookRefInput,
  hookRuns: listHookRunsInput,
  createHook: createHookInput,
  updateHook: updateHookInput,
  deleteHook: deleteHookInput,
  testWebhook: testWebhookInput,
  // integrations
  createIntegrationKey: createIntegrationKeyInput,
  deleteIntegrationKey: deleteIntegrationKeyInput,
  // keys
  mcpApiKeys: listMcpApiKeysInput,
  createMcpApiKey: createMcpApiKeyInput,
  revokeMcpApiKey: revokeMcpApiKeyInput,
  // menus
  upsertMenu: upsertMenuInput,
  deleteMenu: deleteMenuInput,
  // run-stats
  hookRunStats: hookRunStatsInput,
  // tables
  table: tableRefInput,
  fieldUsage: fieldUsageInput,
  createTable: createTableInput,
  updateTable: updateTableInput,
  addTableField: addTableFieldInput,
  updateTableField: updateTableFieldInput,
  deleteTableField: deleteTableFieldInput,
  setTableAccess: setTableAccessInput,
  deleteTable: deleteTableInput,
} as const satisfies Record<string, z.ZodObject>;

export type BuilderArgumentsField = keyof typeof BUILDER_ARGUMENTS;

/**
 * A field's GraphQL arguments as its service's input, unparsed: GraphQL passes an omitted optional
 * argument as null where the schemas expect it absent, so top-level nulls are removed (inside an
 * input object an explicit null stays, and the schemas accept it where GraphQL does). The type is
 * the schema's input type; that the arguments have that shape is what arguments.test.ts checks.
 *
 * @example argsFor('deleteFeature', { _id: 'orders', confirm: true }) // { _id: 'orders', confirm: true }, typed as z.input<typeof deleteFeatureInput>
 */
export function argsFor<F extends BuilderArgumentsField>(_field: F, args: Record<string, unknown>): z.input<(typeof BUILDER_ARGUMENTS)[F]> {
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null)) as z.input<(typeof BUILDER_ARGUMENTS)[F]>;
}

/**
 * What a value's schema says of it for a caller: its own description, else that of the schema it
 * wraps (optional, nullable, defaulted, piped), the same text MCP's tools/list shows for the key.
 */
export function schemaDescription(schema: z.ZodType): string | undefined {
  let current: z.ZodType | undefined = schema;
  for (let depth = 0; current && depth < 8; depth++) {
    if (current.description) return current.description;
    const def = current.def as { innerType?: z.ZodType; in?: z.ZodType };
    current = def.innerType ?? def.in;
  }
  return undefined;
}

/**
 * The descriptions of the arguments of every builder root field in BUILDER_ARGUMENTS, by field
 * and argument name, from the field's input schema: one text for GraphQL's introspection and MCP.
 */
export function builderArgumentDescriptions(): Map<string, Map<string, string>> {
  const fields = new Map<string, Map<string, string>>();
  for (const [field, input] of Object.entries(BUILDER_ARGUMENTS)) {
    const described = new Map<string, string>();
    for (const [name, schema] of Object.entries(input.shape as Record<string, z.ZodType>)) {
      const text = schemaDescription(schema);
      if (text) described.set(name, text);
    }
    fields.set(field, described);
  }
  return fields;
}

/**
 * Schema keys a builder field deliberately does not take as arguments, by `<field>.<key>`, and why.
 * There is no renamed argument: argsFor passes every name as it is.
 */
export const NOT_IN_GRAPHQL: Readonly<Record<string, string>> = {
  'createTable.access': "MCP create_table's roles' rules (D32); the builder sets them per role with setTableAccess",
  'updateTable.access': "MCP update_table's roles' rules (D32); the builder sets them per role with setTableAccess",
};

/**
 * The GraphQL type of each argument or input field whose schema is an object, by `<field or input
 * type>.<key>`: an input type of the builder's SDL (written by graphqlInput from that object), or
 * JSON. A union with an object among its forms is the input type named here too.
 */
const OBJECT_ARGUMENTS: Readonly<Record<string, string>> = {
  'testWebhook.headers': 'HttpHeaderInput',
  'testWebhook.signWith': 'WebhookSigningInput',
  'upsertMenu.entries': 'MenuEntryInput',
  'createTable.fields': 'AppFieldInput',
  'addTableField.field': 'AppFieldInput',
  'setTableAccess.access': 'TableAccessInput',
  'TableAccessInput.read': 'AccessRuleInput',
  'TableAccessInput.create': 'AccessRuleInput',
  'TableAccessInput.update': 'AccessRuleInput',
  'TableAccessInput.delete': 'AccessRuleInput',
  'updateApplication.themeColors': 'JSON',
  'updateApplication.shellVariables': 'JSON',
};

/**
 * Arguments whose schema is an id's (a reference by _id or name) that GraphQL has typed String since
 * they were added: a client's document declares its variables with that type, so it stays.
 */
const STRING_REFERENCES: ReadonlySet<string> = new Set(['mcpAuditLogs.key', 'mcpAuditLogs.user', 'fieldUsage.field', 'updateTableField.field', 'deleteTableField.field']);

/** The schema a wrapper holds (optional, nullable, defaulted, piped: a pipe by its input when it transforms), or undefined. */
export function wrapped(schema: z.ZodType): z.ZodType | undefined {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault || schema instanceof z.ZodPrefault) return schema.unwrap() as z.ZodType;
  if (schema instanceof z.ZodPipe) return (schema.out instanceof z.ZodTransform ? schema.in : schema.out) as z.ZodType;
  return undefined;
}

/**
 * The closed set (a GraphQL enum or scalar of closed-sets.ts, or one of `others` by name) whose
 * values are exactly `values`.
 */
export function closedSetOf(values: readonly unknown[], where: string, others: Readonly<Record<string, readonly string[]>> = {}): string {
  const wanted = new Set(values);
  for (const [name, members] of [...Object.entries(others), ...Object.entries(DOMAIN_ENUMS), ...Object.entries(DOMAIN_SCALARS)]) {
    if (members.length === wanted.size && members.every((member) => wanted.has(member))) return name;
  }
  throw new Error(`${where}: no closed set of closed-sets.ts holds exactly ${values.join(', ')}`);
}

/** The nullable GraphQL type of a value of `schema`, for the argument or item at `where` (`<field>.<key>`). */
function graphqlType(schema: z.ZodType, where: string): string {
  if (STRING_REFERENCES.has(where)) return 'String';
  for (let current: z.ZodType | undefined = schema; current; current = wrapped(current)) {
    if (idValues.get(current)?.kind === 'id') return 'ID';
    if (current instanceof z.ZodString || current instanceof z.ZodStringFormat) return 'String';
    if (current instanceof z.ZodEnum) return closedSetOf(current.options, where);
    if (current instanceof z.ZodNumber) return current.isInt ? 'Int' : 'Float';
    if (current instanceof z.ZodBoolean) return 'Boolean';
    if (current instanceof z.ZodLiteral && [...current.values].every((value) => typeof value === 'boolean')) return 'Boolean';
    if (current instanceof z.ZodDate) return 'DateTime';
    if (current instanceof z.ZodArray) {
      const element = current.element as z.ZodType;
      return `[${graphqlType(element, where)}${element.safeParse(null).success ? '' : '!'}]`;
    }
    if (current instanceof z.ZodObject || current instanceof z.ZodRecord || current instanceof z.ZodUnion) {
      const type = OBJECT_ARGUMENTS[where];
      if (!type) throw new Error(`${where}: an object argument needs its GraphQL type in OBJECT_ARGUMENTS`);
      return type;
    }
  }
  throw new Error(`${where}: no GraphQL type for a ${schema.constructor.name}`);
}

/**
 * The SDL of the arguments of a builder root field, from its input schema (BUILDER_ARGUMENTS), in
 * the schema's order: `(name: String!, status: FeatureStatus)`. An argument is non-null exactly when
 * the schema refuses it missing. Strings are String, ids (idValues) ID, a closed set its enum or
 * scalar, integers Int, dates DateTime, objects the type OBJECT_ARGUMENTS names.
 */
export function graphqlArguments(field: BuilderArgumentsField): string {
  const shape = BUILDER_ARGUMENTS[field].shape as Record<string, z.ZodType>;
  const list = Object.entries(shape)
    .filter(([key]) => !NOT_IN_GRAPHQL[`${field}.${key}`])
    .map(([key, schema]) => sdlField(key, schema, field));
  return `(${list.join(', ')})`;
}

/** An argument or input field in the SDL, `<key>: <type>`, non-null (`!`) exactly when the schema refuses it missing. */
function sdlField(key: string, schema: z.ZodType, owner: string): string {
  return `${key}: ${graphqlType(schema, `${owner}.${key}`)}${schema.safeParse(undefined).success ? '' : '!'}`;
}

/** The object schema a value's schema holds, wrappers and arrays looked through, or undefined. */
function objectIn(schema: z.ZodType | undefined): z.ZodObject | undefined {
  for (let current = schema; current; current = current instanceof z.ZodArray ? (current.element as z.ZodType) : wrapped(current)) {
    if (current instanceof z.ZodObject) return current;
  }
  return undefined;
}

/** The object schema of the input type `name`: the object at the first position OBJECT_ARGUMENTS names it for. */
function inputSchema(name: string): z.ZodObject {
  for (const [where, type] of Object.entries(OBJECT_ARGUMENTS)) {
    if (type !== name) continue;
    const [owner, key] = where.split('.') as [string, string];
    const shape = (owner in BUILDER_ARGUMENTS ? BUILDER_ARGUMENTS[owner as BuilderArgumentsField] : inputSchema(owner)).shape as Record<string, z.ZodType>;
    const object = objectIn(shape[key]);
    if (object) return object;
  }
  throw new Error(`${name}: OBJECT_ARGUMENTS names no position whose schema is an object for it`);
}

/** A description in the SDL: a GraphQL string, on the line before what it describes. */
export function sdlDescription(text: string | undefined, indent: string): string {
  return text ? `${JSON.stringify(text)}\n${indent}` : '';
}

/**
 * The SDL of a builder input type from the object schema its values are parsed with (at a position
 * of OBJECT_ARGUMENTS): its fields in the schema's order, typed as arguments are (graphqlArguments),
 * non-null exactly when the schema refuses them missing, described as the schema describes them (the
 * type by the object's own description).
 *
 * @example graphqlInput('MenuEntryInput') // input MenuEntryInput { label: String! "…" path: String! }
 */
export function graphqlInput(name: string): string {
  const object = inputSchema(name);
  const fields = Object.entries(object.shape as Record<string, z.ZodType>).map(([key, schema]) => `    ${sdlDescription(schemaDescription(schema), '    ')}${sdlField(key, schema, name)}`);
  return `${sdlDescription(object.description, '  ')}input ${name} {\n${fields.join('\n')}\n  }`;
}
