import { z } from 'zod';
import { READ, UPSERT, defineTool } from './types.js';
import { grantFeatureAccessInput, roleOutput } from '../../access/schema.js';
import { dataGrantOutput } from '../../tables/access-schema.js';
import { environmentVariableOutput, setEnvironmentVariableInput } from '../../envvars/schema.js';
import { menuOutput, upsertMenuInput } from '../../menus/schema.js';
import { plain } from './shared.js';

export const listMenus = defineTool({
  name: 'list_menus',
  scope: 'config:read',
  title: 'List menus',
  description: 'Lists navigation menus and their entries (label and /feature/<feature_id> path).',
  input: z.object({}),
  output: z.object({ menus: z.array(menuOutput) }),
  annotations: READ,
  cacheable: true,
  async run(services, principal) {
    return { data: { menus: plain(await services.menus.listMenus(principal)) } };
  },
});

export const upsertMenu = defineTool({
  name: 'upsert_menu',
  scope: 'menus:write',
  title: 'Create or replace a menu',
  description: 'Creates a navigation menu, or replaces the entries of the menu with the same name. Each entry points at /feature/<feature_id> of an existing feature.',
  input: upsertMenuInput,
  output: z.object({ menu: menuOutput, created: z.boolean() }),
  annotations: UPSERT,
  async run(services, principal, args) {
    return { data: plain({ ...(await services.menus.upsertMenu(principal, args)) }) };
  },
});

export const listRoles = defineTool({
  name: 'list_roles',
  scope: 'config:read',
  title: 'List roles',
  description: 'Lists roles with their permissions. Roles control which features they see (grant_feature_access).',
  input: z.object({}),
  output: z.object({ roles: z.array(roleOutput) }),
  annotations: READ,
  cacheable: true,
  async run(services, principal) {
    return { data: { roles: plain(await services.access.listRoles(principal)) } };
  },
});

export const grantFeatureAccess = defineTool({
  name: 'grant_feature_access',
  aliases: { _id: 'featureId' },
  scope: 'roles:write',
  title: 'Grant roles access to a feature',
  description:
    "Lets the given roles see a feature, and gives each what the feature's GraphQL documents need of the tables' records: a rule that is none becomes all, a narrower rule (own, filter) is kept. " +
    'Answers every role that now sees the feature, the rules it granted and those it left narrower.',
  input: grantFeatureAccessInput,
  output: z.object({
    featureId: z.string(),
    roleIds: z.array(z.string()).describe('Every role that now sees the feature'),
    dataAccess: z.object({
      granted: z.array(dataGrantOutput).describe('Rules set to ALL because the feature needs them'),
      leftNarrower: z.array(dataGrantOutput).describe('Rules the feature needs that stay narrower (OWN or FILTER), as they were'),
    }),
  }),
  annotations: UPSERT,
  async run(services, principal, args) {
    const { roleIds, dataAccess } = await services.access.grantFeature(principal, args);
    return { data: { featureId: args.featureId, roleIds, dataAccess } };
  },
});

export const listEnvironmentVariables = defineTool({
  name: 'list_environment_variables',
  scope: 'config:read',
  title: 'List environment variable names',
  description: 'Lists the names of environment variables. Values are never readable; hooks read them as env.NAME.',
  input: z.object({}),
  output: z.object({ variables: z.array(environmentVariableOutput.pick({ name: true, updatedAt: true })) }),
  annotations: READ,
  cacheable: true,
  async run(services, principal) {
    const variables = await services.envVars.listEnvironmentVariables(principal);
    return { data: { variables: plain(variables.map((v) => ({ name: v.name, updatedAt: v.updatedAt }))) } };
  },
});

export const setEnvironmentVariable = defineTool({
  name: 'set_environment_variable',
  scope: 'env:write',
  title: 'Set an environment variable',
  description: 'Creates or updates an environment variable. The value is encrypted at rest and can never be read back through any API; only hook code sees it.',
  input: setEnvironmentVariableInput,
  output: z.object({ name: z.string(), created: z.boolean() }),
  annotations: UPSERT,
  async run(services, principal, args) {
    const result = await services.envVars.setEnvironmentVariable(principal, args);
    return { data: { name: result.name, created: result.created } };
  },
});
