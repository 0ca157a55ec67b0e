import {
  GraphQLEnumType,
  GraphQLError,
  GraphQLScalarType,
  Kind,
  TypeInfo,
  getNamedType,
  print,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type EnumValueNode,
  type GraphQLSchema,
  type ValueNode,
} from 'graphql';
import { PERMISSIONS, SCOPES } from '../access/permissions.js';
import { MCP_AUDIT_OUTCOMES } from '../audit/schema.js';
import { FEATURE_STATUSES } from '../features/schema.js';
import { HOOK_RUN_OUTCOMES, HOOK_TYPES, WEBHOOK_SIGNING_SCHEMES } from '../hooks/schema.js';
import { FIELD_TYPES } from '../tables/schema.js';

/**
 * The closed sets of the domain (src/<domain>/schema.ts) by their GraphQL type name: one
 * definition of each set, checked by GraphQL before a resolver runs, with the wire strings of MCP
 * and the CLI.
 */
const CLOSED_SETS: Readonly<Record<string, readonly string[]>> = {
  HookType: HOOK_TYPES,
  HookRunOutcome: HOOK_RUN_OUTCOMES,
  WebhookSigningScheme: WEBHOOK_SIGNING_SCHEMES,
  FieldType: FIELD_TYPES,
  FeatureStatus: FEATURE_STATUSES,
  AuditOutcome: MCP_AUDIT_OUTCOMES,
  Scope: SCOPES,
  Permission: PERMISSIONS,
};

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
const NOT_ENUM_VALUES: ReadonlySet<string> = new Set(['true', 'false', 'null']);

/** Whether GraphQL accepts the string as an enum value (a name other than true, false and null). */
export function isEnumValueName(value: string): boolean {
  return NAME.test(value) && !NOT_ENUM_VALUES.has(value);
}

function closedSets(enums: boolean): Readonly<Record<string, readonly string[]>> {
  return Object.fromEntries(Object.entries(CLOSED_SETS).filter(([, values]) => values.every(isEnumValueName) === enums));
}

/** The closed sets whose every value is a GraphQL name: enums, which clients' code generators type. */
export const DOMAIN_ENUMS = closedSets(true);

/**
 * The closed sets with a value that is not a GraphQL name (`config:read`, `multi-reference`):
 * scalars that accept exactly the domain's strings, and unquoted those that are names.
 */
export const DOMAIN_SCALARS = closedSets(false);

/** What a scalar's description says: its values, and how they are written in a document. */
export function domainScalarDescription(values: readonly string[]): string {
  const names = values.filter(isEnumValueName);
  const quoted = values.find((value) => !isEnumValueName(value))!;
  const unquoted = names.length ? `; ${names.join(', ')}, being GraphQL names, may also be written unquoted` : ': the values are not GraphQL names';
  return `A string, one of: ${values.join(', ')}. Written as a string in a document ("${quoted}")${unquoted}.`;
}

/** The SDL declaring each domain enum and scalar (introspection shows the values). */
export const CLOSED_SET_TYPE_DEFS = [
  ...Object.entries(DOMAIN_ENUMS).map(([name, values]) => `enum ${name} {\n  ${values.join('\n  ')}\n}`),
  ...Object.entries(DOMAIN_SCALARS).map(([name, values]) => `${JSON.stringify(domainScalarDescription(values))}\nscalar ${name}`),
].join('\n');

/**
 * Gives the built schema's closed sets their checks: each refuses what is not one of its values
 * with a message that lists them (BAD_INPUT, 400); enums take their values unquoted, scalars as
 * strings and, when a value is a name, unquoted too. Serialized values stay the domain's strings.
 */
export function attachClosedSets(schema: GraphQLSchema): void {
  for (const [name, values] of Object.entries(CLOSED_SETS)) {
    const type = schema.getType(name);
    const isEnum = name in DOMAIN_ENUMS;
    if (isEnum ? !(type instanceof GraphQLEnumType) : !(type instanceof GraphQLScalarType)) {
      throw new Error(`The builder schema does not declare ${isEnum ? 'enum' : 'scalar'} ${name}`);
    }
    const allowed = new Set(values);
    const literalKinds: ReadonlySet<Kind> = new Set(isEnum ? [Kind.ENUM] : [Kind.STRING, Kind.ENUM]);
    const rule = `${name} must be one of ${values.join(', ')}`;
    const refuse = (message: string, node?: ValueNode) => new GraphQLError(message, { nodes: node, extensions: { code: 'BAD_INPUT', status: 400 } });
    const checked = type as GraphQLEnumType | GraphQLScalarType;
    checked.parseValue = (value: unknown) => {
      if (typeof value === 'string' && allowed.has(value)) return value;
      throw refuse(rule); // graphql-js names the variable and the value before this message
    };
    checked.parseLiteral = (node: ValueNode) => {
      if (literalKinds.has(node.kind) && allowed.has((node as { value: string }).value)) return (node as { value: string }).value;
      throw refuse(`${rule}; got ${print(node).slice(0, 60)}`, node);
    };
    if (!isEnum) (type as GraphQLScalarType).serialize = (value: unknown) => value;
  }
}

/**
 * The document with each string literal that stands where a domain enum is expected, and is one
 * of its values, written as that enum value: documents written while these sets were scalars
 * (`updateFeature(status: "published")`) keep working. Any other string is left for validation
 * to refuse.
 *
 * @example quotedEnumValues(schema, parse('{ hookRuns(outcome: "timeout") { nextCursor } }')) // { hookRuns(outcome: timeout) { nextCursor } }
 */
export function quotedEnumValues(schema: GraphQLSchema, document: DocumentNode): DocumentNode {
  const typeInfo = new TypeInfo(schema);
  return visit(
    document,
    visitWithTypeInfo(typeInfo, {
      StringValue(node): EnumValueNode | undefined {
        const type = getNamedType(typeInfo.getInputType());
        if (!(type instanceof GraphQLEnumType) || !(type.name in DOMAIN_ENUMS) || !type.getValue(node.value)) return undefined;
        return { kind: Kind.ENUM, value: node.value, ...(node.loc ? { loc: node.loc } : {}) };
      },
    }),
  );
}
