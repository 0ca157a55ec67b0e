import { GraphQLError, GraphQLScalarType, Kind, print, type GraphQLSchema, type ValueNode } from 'graphql';
import { PERMISSIONS, SCOPES } from '../access/permissions.js';
import { MCP_AUDIT_OUTCOMES } from '../audit/schema.js';
import { FEATURE_STATUSES } from '../features/schema.js';
import { HOOK_RUN_OUTCOMES, HOOK_TYPES, WEBHOOK_SIGNING_SCHEMES } from '../hooks/schema.js';
import { FIELD_TYPES } from '../tables/schema.js';

/**
 * The closed sets of the domain (src/<domain>/schema.ts), typed in the builder SDL as scalars
 * that accept exactly the domain's strings: one definition of each set, checked by GraphQL
 * before a resolver runs. Scalars rather than enums because GraphQL enum values cannot hold
 * `config:read` or `multi-reference`, and the wire strings stay those of MCP and the CLI.
 */
export const DOMAIN_SCALARS: Readonly<Record<string, readonly string[]>> = {
  HookType: HOOK_TYPES,
  HookRunOutcome: HOOK_RUN_OUTCOMES,
  WebhookSigningScheme: WEBHOOK_SIGNING_SCHEMES,
  FieldType: FIELD_TYPES,
  FeatureStatus: FEATURE_STATUSES,
  AuditOutcome: MCP_AUDIT_OUTCOMES,
  Scope: SCOPES,
  Permission: PERMISSIONS,
};

/** The SDL declaring each domain scalar, its values in the description (introspection shows them). */
export const DOMAIN_SCALAR_TYPE_DEFS = Object.entries(DOMAIN_SCALARS)
  .map(([name, values]) => `"A string, one of: ${values.join(', ')}."\nscalar ${name}`)
  .join('\n');

/** Gives the built schema's domain scalars their checks (buildSchema leaves scalars accepting anything). */
export function attachDomainScalars(schema: GraphQLSchema): void {
  for (const [name, values] of Object.entries(DOMAIN_SCALARS)) {
    const type = schema.getType(name);
    if (!(type instanceof GraphQLScalarType)) throw new Error(`The builder schema does not declare scalar ${name}`);
    const allowed = new Set(values);
    const refuse = (message: string, node?: ValueNode) => new GraphQLError(message, { nodes: node, extensions: { code: 'BAD_INPUT', status: 400 } });
    const rule = `${name} must be one of ${values.join(', ')}`;
    type.parseValue = (value: unknown) => {
      if (typeof value === 'string' && allowed.has(value)) return value;
      throw refuse(rule); // graphql-js names the variable and the value before this message
    };
    type.parseLiteral = (node: ValueNode) => {
      if (node.kind === Kind.STRING && allowed.has(node.value)) return node.value;
      throw refuse(`${rule}; got ${print(node).slice(0, 60)}`, node);
    };
    type.serialize = (value: unknown) => value;
  }
}
