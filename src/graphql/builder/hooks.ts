import type { GraphQLModule } from '../module.js';
import { requireUser, withoutNulls } from './access.js';

const typeDefs = /* GraphQL */ `
  "Server-side JavaScript run on a table's saves (beforeSave, afterSave) or at /api/webhook/<name> (webHook)."
  type Hook {
    _id: ID!
    name: String!
    type: HookType!
    "The table of a beforeSave or afterSave hook; unused by webhooks."
    tableId: ID
    content: String!
    contentSha256: String!
    version: Int!
    createdBy: ID
    updatedBy: ID
    createdAt: DateTime!
    updatedAt: DateTime!
  }

  "One run of a hook: trigger, duration, outcome, console lines and the (redacted) error. Console lines and the error may hold what the code saw (secrets included): only admins who may write hooks read them; for others they are null and detailsVisible is false."
  type HookRun {
    _id: ID!
    hookId: ID
    hookName: String!
    trigger: String!
    startedAt: DateTime!
    durationMs: Int!
    "How long the run waited for a hook worker, in ms (while other runs held them all); null for runs stored before."
    queuedMs: Int
    "The HTTP request that caused the run: its x-request-id, as in the server's log; null when none did."
    requestId: String
    outcome: HookRunOutcome!
    "The run's console lines; null unless the reader is an admin with hooks:write."
    console: [String!]
    "The error (environment values redacted); null when the run succeeded or the reader is not an admin with hooks:write."
    error: String
    "What the run received (the record, or a webhook's body), secrets redacted, cut to 4000 characters of JSON; null unless the reader is an admin with hooks:write."
    input: JSON
    "What it answered (a webhook's answer, or what a save hook returned); null when withheld or when the run failed."
    output: JSON
    "Whether console, error, input and output are shown to this reader."
    detailsVisible: Boolean!
  }

  "A page of the run log; pages share one shape: items, then nextCursor."
  type HookRunPage {
    "Newest first."
    items: [HookRun!]!
    runs: [HookRun!]! @deprecated(reason: "Use items: every paged answer names its list items.")
    "Pass as before to read the next page; null on the last page."
    nextCursor: ID
  }

  extend type Query {
    "Checks hook code without saving or running it (config:read); warnings name unknown tables and environment variables."
    validateHookCode(content: String!): CodeValidation!
    "Hooks, optionally of one type and/or one table, ordered by name."
    hooks(type: HookType, tableId: ID): [Hook!]!
    hook(_id: ID!): Hook
    "The run log of hooks, newest first."
    hookRuns(hookId: ID, outcome: HookRunOutcome, limit: Int, before: ID): HookRunPage!
  }

  extend type Mutation {
    "Creates a hook. type: beforeSave, afterSave (both need tableId) or webHook. Owners are e-mailed."
    createHook(name: String!, type: HookType!, tableId: ID, content: String!): Hook!
    "Changes a hook's name, table or code (not its type). Owners are e-mailed."
    updateHook(_id: ID!, name: String, tableId: ID, content: String): Hook!
    "Deletes a hook; confirm must be true."
    deleteHook(_id: ID!, confirm: Boolean!): Boolean!
  }
`;

export const hooksModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      validateHookCode: (_s, args, ctx) => ctx.services.hooks.validateCode(requireUser(ctx), args.content),
      hooks: (_s, args, ctx) => ctx.services.hooks.listHooks(requireUser(ctx), withoutNulls(args) as never),
      hook: (_s, args, ctx) => ctx.services.hooks.getHook(requireUser(ctx), args._id),
      hookRuns: (_s, args, ctx) => ctx.services.hooks.listHookRuns(requireUser(ctx), withoutNulls(args) as never),
    },
    HookRunPage: { runs: (page) => (page as { items: unknown[] }).items },
    Mutation: {
      createHook: (_s, args, ctx) => ctx.services.hooks.createHook(requireUser(ctx), withoutNulls(args) as never),
      updateHook: async (_s, args, ctx) =>
        (await ctx.services.hooks.updateHook(requireUser(ctx), withoutNulls(args) as never)).hook,
      deleteHook: (_s, args, ctx) => ctx.services.hooks.deleteHook(requireUser(ctx), args as never),
    },
  },
};
