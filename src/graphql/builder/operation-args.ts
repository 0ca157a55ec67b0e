import type { z } from 'zod';
import { changePasswordInput, createRoleInput, createUserInput, grantFeatureAccessInput, transferOwnershipInput, updateRoleInput, updateUserInput } from '../../access/schema.js';
import { updateSettingsInput } from '../../application/schema.js';
import { listMcpAuditLogsInput } from '../../audit/schema.js';
import { deleteEnvironmentVariableInput, setEnvironmentVariableInput } from '../../envvars/schema.js';
import { createFeatureInput, deleteFeatureInput, listFeaturesInput, updateFeatureInput } from '../../features/schema.js';
import { hookRunStatsInput } from '../../hooks/run-stats.js';
import { createHookInput, deleteHookInput, listHookRunsInput, listHooksInput, testWebhookInput, updateHookInput } from '../../hooks/schema.js';
import { createIntegrationKeyInput, deleteIntegrationKeyInput } from '../../integrations/schema.js';
import { createMcpApiKeyInput } from '../../keys/schema.js';
import { deleteMenuInput, upsertMenuInput } from '../../menus/schema.js';
import {
  addTableFieldInput,
  createTableInput,
  deleteTableFieldInput,
  deleteTableInput,
  fieldUsageInput,
  setTableAccessInput,
  updateTableFieldInput,
  updateTableInput,
} from '../../tables/schema.js';

/**
 * The input schema of each builder root field that hands its arguments to a service, by field
 * name: the field's arguments are that schema's keys (arguments.test.ts fails when the SDL and the
 * schema part). The service parses them after its permission check, so that a caller without the
 * permission is FORBIDDEN whatever it sent; the resolver does not parse.
 */
export const BUILDER_ARGUMENTS = {
  // access
  createUser: createUserInput,
  changeMyPassword: changePasswordInput,
  updateUser: updateUserInput,
  transferOwnership: transferOwnershipInput,
  createRole: createRoleInput,
  updateRole: updateRoleInput,
  grantFeatureAccess: grantFeatureAccessInput,
  grantFeature: grantFeatureAccessInput,
  revokeFeatureAccess: grantFeatureAccessInput,
  // application
  updateApplication: updateSettingsInput,
  // audit
  mcpAuditLogs: listMcpAuditLogsInput,
  // envvars
  setEnvironmentVariable: setEnvironmentVariableInput,
  deleteEnvironmentVariable: deleteEnvironmentVariableInput,
  // features
  features: listFeaturesInput,
  createFeature: createFeatureInput,
  updateFeature: updateFeatureInput,
  deleteFeature: deleteFeatureInput,
  // hooks
  hooks: listHooksInput,
  hookRuns: listHookRunsInput,
  createHook: createHookInput,
  updateHook: updateHookInput,
  deleteHook: deleteHookInput,
  testWebhook: testWebhookInput,
  // integrations
  createIntegrationKey: createIntegrationKeyInput,
  deleteIntegrationKey: deleteIntegrationKeyInput,
  // keys
  createMcpApiKey: createMcpApiKeyInput,
  // menus
  upsertMenu: upsertMenuInput,
  deleteMenu: deleteMenuInput,
  // run-stats
  hookRunStats: hookRunStatsInput,
  // tables
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
