import { effectiveScopes } from '../../keys/service.js';
import type { GraphQLModule } from '../module.js';
import { requireUser } from './access.js';

const typeDefs = /* GraphQL */ `
  "A personal MCP API key. The raw key is never shown again after creation."
  type McpApiKey {
    _id: ID!
    name: String!
    "The visible first characters of the key."
    keyPrefix: String!
    scopes: [String!]!
    "The key's scopes that work now: those its user's role still grants (admin-only ones only while the user is an admin)."
    effectiveScopes: [String!]!
    expiresAt: DateTime!
    lastUsedAt: DateTime
    revokedAt: DateTime
    createdAt: DateTime!
  }

  type CreatedMcpApiKey {
    "The raw key, shown only in this answer: store it now."
    apiKey: String!
    key: McpApiKey!
  }

  extend type Query {
    "The signed-in user's MCP API keys, newest first."
    mcpApiKeys: [McpApiKey!]!
  }

  extend type Mutation {
    "Creates an MCP API key for the signed-in user (needs 'ai_designer'); expiresInDays is 1 to 365."
    createMcpApiKey(name: String!, scopes: [String!]!, expiresInDays: Int!): CreatedMcpApiKey!
    "Revokes one of the signed-in user's keys (an admin may revoke any key)."
    revokeMcpApiKey(_id: ID!): McpApiKey!
  }
`;

export const keysModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    McpApiKey: {
      effectiveScopes: (key, _a, ctx) => [...effectiveScopes((key as { scopes: string[] }).scopes, ctx.principal.permissions)],
    },
    Query: {
      mcpApiKeys: (_s, _a, ctx) => ctx.services.keys.listMcpApiKeys(requireUser(ctx)),
    },
    Mutation: {
      createMcpApiKey: (_s, args, ctx) => ctx.services.keys.createMcpApiKey(requireUser(ctx), args as never),
      revokeMcpApiKey: (_s, args, ctx) => ctx.services.keys.revokeMcpApiKey(requireUser(ctx), args._id),
    },
  },
};
