import { rolePermissions } from '../../access/permissions.js';
import { effectiveScopes } from '../../keys/service.js';
import type { GraphQLContext, GraphQLModule } from '../module.js';
import { requireUser } from './access.js';
import { argsFor, graphqlArguments } from './operation-args.js';

const typeDefs = /* GraphQL */ `
  "A personal MCP API key. The raw key is never shown again after creation."
  type McpApiKey {
    _id: ID!
    name: String!
    "The visible first characters of the key."
    keyPrefix: String!
    scopes: [Scope!]!
    "The key's scopes that work now: those its user's role still grants (admin-only ones only while the user is an admin)."
    effectiveScopes: [Scope!]!
    expiresAt: DateTime!
    lastUsedAt: DateTime
    revokedAt: DateTime
    createdAt: DateTime!
    "The user the key acts as."
    userId: ID!
    "That user's e-mail."
    userEmail: String
  }

  type CreatedMcpApiKey {
    "The raw key, shown only in this answer: store it now."
    apiKey: String!
    key: McpApiKey!
  }

  extend type Query {
    "The signed-in user's MCP keys, newest first; with all: true, every key of the application (admin only), so that an admin can revoke any."
    mcpApiKeys${graphqlArguments('mcpApiKeys')}: [McpApiKey!]!
  }

  extend type Mutation {
    "Creates an MCP API key for the signed-in user (needs 'ai_designer'); expiresInDays is 1 to 365."
    createMcpApiKey${graphqlArguments('createMcpApiKey')}: CreatedMcpApiKey!
    "Revokes one of the signed-in user's keys (an admin may revoke any key)."
    revokeMcpApiKey${graphqlArguments('revokeMcpApiKey')}: McpApiKey!
  }
`;

export const keysModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    McpApiKey: {
      userEmail: async (key, _a, ctx) => (await keyOwner(ctx, (key as { userId: string }).userId))?.email ?? null,
      // What the key may do now: its scopes that its user's role grants (the caller's own role for their keys).
      effectiveScopes: async (key, _a, ctx) => {
        const { scopes, userId } = key as { scopes: string[]; userId: string };
        if (userId === ctx.principal.userId) return [...effectiveScopes(scopes, ctx.principal.permissions)];
        const owner = await keyOwner(ctx, userId);
        return owner && !owner.disabled ? [...effectiveScopes(scopes, rolePermissions(owner.permissions))] : [];
      },
    },
    Query: {
      mcpApiKeys: (_s, args, ctx) => ctx.services.keys.listMcpApiKeys(requireUser(ctx), { all: argsFor('mcpApiKeys', args).all === true }),
    },
    Mutation: {
      createMcpApiKey: (_s, args, ctx) => ctx.services.keys.createMcpApiKey(requireUser(ctx), argsFor('createMcpApiKey', args)),
      revokeMcpApiKey: (_s, args, ctx) => ctx.services.keys.revokeMcpApiKey(requireUser(ctx), argsFor('revokeMcpApiKey', args)._id),
    },
  },
};

/** The user a key acts as, with the permissions of their role. */
function keyOwner(ctx: GraphQLContext, userId: string) {
  return ctx.services.ctx.db
    .selectFrom('users')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select(['users.email', 'users.disabled', 'roles.permissions'])
    .where('users.id', '=', userId)
    .executeTakeFirst();
}
