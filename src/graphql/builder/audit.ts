import type { GraphQLModule } from '../module.js';
import { requireUser, withoutNulls } from './access.js';

const typeDefs = /* GraphQL */ `
  "One MCP tool call. Secret values and keys were redacted before it was stored."
  type McpAuditLogEntry {
    _id: ID!
    at: DateTime!
    "The MCP key the call authenticated with."
    keyId: ID
    userId: ID
    tool: String!
    "Redacted arguments: long strings are { preview, sha256, bytes }."
    arguments: JSON!
    "ok, error or denied."
    outcome: String!
    error: String
    durationMs: Int!
    "SHA-256 of the code a hook or feature write persisted."
    codeSha256: String
  }

  type McpAuditLogPage {
    "Newest first."
    entries: [McpAuditLogEntry!]!
    "Pass as before to read the next, older page; null on the last page."
    nextCursor: ID
  }

  extend type Query {
    "MCP tool calls of the last year, newest first (admin only). since is inclusive, until exclusive; limit 1 to 500, default 50."
    mcpAuditLogs(
      tool: String
      keyId: ID
      userId: ID
      outcome: String
      since: DateTime
      until: DateTime
      limit: Int
      before: ID
    ): McpAuditLogPage!
  }
`;

export const auditModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      mcpAuditLogs: (_s, args, ctx) => ctx.services.audit.list(requireUser(ctx), withoutNulls(args) as never),
    },
  },
};
