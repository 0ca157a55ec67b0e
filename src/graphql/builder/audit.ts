import type { GraphQLModule } from '../module.js';
import { requireUser } from './access.js';
import { argsFor, graphqlArguments } from './operation-args.js';

const typeDefs = /* GraphQL */ `
  "One MCP tool call. Secret values and keys were redacted before it was stored."
  type McpAuditLogEntry {
    _id: ID!
    at: DateTime!
    "The MCP key the call authenticated with."
    keyId: ID
    "That key's name, as its owner gave it; null when it is gone."
    keyName: String
    "That key's visible first characters."
    keyPrefix: String
    userId: ID
    "The user's e-mail; null when the user is gone."
    userEmail: String
    tool: String!
    "Redacted arguments: long strings are { preview, sha256, bytes }."
    arguments: JSON!
    outcome: AuditOutcome!
    error: String
    durationMs: Int!
    "SHA-256 of the code a hook or feature write persisted."
    codeSha256: String
    "The HTTP request of the call: its x-request-id, as in the server's log."
    requestId: String
  }

  "A page of the MCP audit log; pages share one shape: items, then nextCursor."
  type McpAuditLogPage {
    "Newest first."
    items: [McpAuditLogEntry!]!
    entries: [McpAuditLogEntry!]! @deprecated(reason: "Use items: every paged answer names its list items.")
    "Pass as before to read the next, older page; null on the last page."
    nextCursor: ID
  }

  extend type Query {
    "MCP tool calls of the last year, newest first (admin only). key: a key's name (any letter case), prefix or _id; user: an e-mail or _id. since is inclusive, until exclusive; limit 1 to 500, default 50."
    mcpAuditLogs${graphqlArguments('mcpAuditLogs')}: McpAuditLogPage!
  }
`;

export const auditModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      mcpAuditLogs: (_s, args, ctx) => ctx.services.audit.list(requireUser(ctx), argsFor('mcpAuditLogs', args)),
    },
    McpAuditLogPage: { entries: (page) => (page as { items: unknown[] }).items },
  },
};
