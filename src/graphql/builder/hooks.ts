import { webhookUrl } from '../../runtime/webhooks.js';
import type { GraphQLModule } from '../module.js';
import { requireUser } from './access.js';
import { argsFor, graphqlArguments, graphqlInput } from './operation-args.js';
import { graphqlObject } from './output-types.js';

const typeDefs = /* GraphQL */ `
  ${graphqlObject(
    'Hook',
    `"A webhook's URL, POST /api/webhook/<name> on the server asked (TRELLIS_PUBLIC_URL when set); null for save hooks."
    url: String`,
  )}

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
    "ok; refused when a webhook's code answered a 4xx or 5xx status with respond(); error, timeout or memory when the code failed."
    outcome: HookRunOutcome!
    "The HTTP status a webhook answered (500 when its code failed); null for save hooks and for runs stored before it was recorded."
    httpStatus: Int
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

  "A header of a webhook's test run: the name in lower case."
  type HttpHeader {
    name: String!
    value: String!
  }

  ${graphqlInput('HttpHeaderInput')}

  ${graphqlInput('WebhookSigningInput')}

  "What a webhook answered a test run, as its caller would get it."
  type WebhookTestAnswer {
    httpStatus: Int!
    headers: [HttpHeader!]!
    "The answer's body as text ('' without one)."
    body: String!
    "The request headers the run was sent with, the signature included."
    sentHeaders: [HttpHeader!]!
  }

  extend type Query {
    "Checks hook code without saving or running it (config:read); warnings name unknown tables and environment variables."
    validateHookCode${graphqlArguments('validateHookCode')}: CodeValidation!
    "Hooks, optionally of one type and/or one table, ordered by name."
    hooks${graphqlArguments('hooks')}: [Hook!]!
    hook${graphqlArguments('hook')}: Hook
    "The run log of hooks, newest first: every failed run, a sample of the successful ones (TRELLIS_RUN_LOG_SAMPLES_PER_MINUTE per hook) and the latest run of each hook; every run is counted in hookRunStats."
    hookRuns${graphqlArguments('hookRuns')}: HookRunPage!
  }

  extend type Mutation {
    "Creates a hook. type: beforeSave, afterSave (both need tableId) or webHook. Owners are e-mailed."
    createHook${graphqlArguments('createHook')}: Hook!
    "Changes a hook's name, table or code (not its type). Owners are e-mailed."
    updateHook${graphqlArguments('updateHook')}: Hook!
    "Deletes a hook; confirm must be true."
    deleteHook${graphqlArguments('deleteHook')}: Boolean!
    "Runs a webhook's saved code as a POST of body to its URL would, and answers what the caller would get (also 400, 429 or 500); the run is in the run log as a test run and counts towards the webhook limit. contentType defaults to application/json. signWith adds the provider's signature computed on the server (needs hooks:write); otherwise config:read."
    testWebhook${graphqlArguments('testWebhook')}: WebhookTestAnswer!
  }
`;

export const hooksModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      validateHookCode: (_s, args, ctx) => ctx.services.hooks.validateCode(requireUser(ctx), argsFor('validateHookCode', args).content),
      hooks: (_s, args, ctx) => ctx.services.hooks.listHooks(requireUser(ctx), argsFor('hooks', args)),
      hook: (_s, args, ctx) => ctx.services.hooks.getHook(requireUser(ctx), argsFor('hook', args)._id),
      hookRuns: (_s, args, ctx) => ctx.services.hooks.listHookRuns(requireUser(ctx), argsFor('hookRuns', args)),
    },
    Hook: {
      url: (hook, _a, ctx) => {
        const { type, name } = hook as { type: string; name: string };
        return type === 'webHook' ? webhookUrl(ctx.principal.baseUrl, name) : null;
      },
    },
    HookRunPage: { runs: (page) => (page as { items: unknown[] }).items },
    Mutation: {
      createHook: (_s, args, ctx) => ctx.services.hooks.createHook(requireUser(ctx), argsFor('createHook', args)),
      updateHook: async (_s, args, ctx) =>
        (await ctx.services.hooks.updateHook(requireUser(ctx), argsFor('updateHook', args))).hook,
      deleteHook: (_s, args, ctx) => ctx.services.hooks.deleteHook(requireUser(ctx), argsFor('deleteHook', args)),
      testWebhook: (_s, args, ctx) => ctx.services.webhooks.testRun(requireUser(ctx), argsFor('testWebhook', args)),
    },
  },
};
