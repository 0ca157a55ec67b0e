import { z } from 'zod';
import { codePatchesSchema } from '../authoring/code-edits.js';
import { confirmTrue, cursorSchema, idOutput, idSchema, isoTime, pageSizeSchema, recordRef, userRef } from '../platform/validation.js';

/** Hook code limit (spec section 8): 200 KB of UTF-8. */
export const HOOK_CODE_MAX_BYTES = 204_800;

export const HOOK_TYPES = ['beforeSave', 'afterSave', 'webHook'] as const;
export type HookType = (typeof HOOK_TYPES)[number];

/**
 * How a hook run ended, as the run log stores it: `refused` is a webhook whose code ran to the end
 * and answered a 4xx or 5xx status with respond() (a bad signature's 401), told apart from `ok`.
 */
export const HOOK_RUN_OUTCOMES = ['ok', 'refused', 'error', 'timeout', 'memory'] as const;
export type HookRunOutcome = (typeof HOOK_RUN_OUTCOMES)[number];

/** Hook types that run on a table's saves and so need `tableId`. */
export const TABLE_HOOK_TYPES: ReadonlySet<HookType> = new Set(['beforeSave', 'afterSave']);

/** Webhook names become part of `/api/webhook/<name>` (spec section 2.5). */
const WEBHOOK_NAME = /^[A-Za-z0-9_-]{2,64}$/;
const TABLE_HOOK_NAME = /^[A-Za-z0-9 _-]{1,100}$/;

/** Why `name` is not a valid name for a hook of `type`, or undefined when it is. */
export function hookNameProblem(type: HookType, name: string): string | undefined {
  if (type === 'webHook') {
    return WEBHOOK_NAME.test(name) ? undefined : 'must be 2 to 64 characters: letters, digits, _ and - only';
  }
  return TABLE_HOOK_NAME.test(name) ? undefined : 'must be 1 to 100 characters: letters, digits, space, _ and - only';
}

const hookType = z.enum(HOOK_TYPES, { message: `must be one of ${HOOK_TYPES.join(', ')}` });
const hookName = z.string().trim();
/** Server-side JavaScript; its size is checked by the service (PAYLOAD_TOO_LARGE). */
const content = z.string().refine((code) => code.trim().length > 0, 'must not be empty');
const tableRef = recordRef('table');

// One contract per operation: the MCP tools and GraphQL take these schemas as they are.
export const createHookInput = z
  .object({
    name: hookName.describe('webHook: 2-64 letters, digits, _ and - (it is the URL /api/webhook/<name>); save hooks: 1-100 letters, digits, space, _ and -'),
    type: hookType,
    tableId: tableRef.optional().describe("The table's _id or name; required for beforeSave and afterSave"),
    content: content.describe('The hook code (at most 200 KB): one `async function (instance) { ... }`'),
  })
  .superRefine((input, ctx) => {
    const problem = hookNameProblem(input.type, input.name);
    if (problem) ctx.addIssue({ code: 'custom', path: ['name'], message: problem });
    if (TABLE_HOOK_TYPES.has(input.type) && input.tableId === undefined) {
      ctx.addIssue({ code: 'custom', path: ['tableId'], message: `is required for ${input.type} hooks` });
    }
  });

/** The type of a hook never changes; the name is checked against it by the service. */
export const updateHookInput = z.object({
  _id: recordRef('hook'),
  name: hookName.optional(),
  tableId: tableRef.optional(),
  content: content.optional().describe('The complete new hook code'),
});

export const editHookCodeInput = z.object({
  _id: recordRef('hook'),
  patches: codePatchesSchema,
});

export const deleteHookInput = z.object({
  _id: recordRef('hook'),
  confirm: confirmTrue,
});

export const listHooksInput = z.object({
  type: hookType.optional(),
  tableId: tableRef.optional(),
});

export const hookRefInput = z.object({ _id: recordRef('hook') });

// The same argument name as create_hook and update_hook: what validates is what is saved.
export const validateHookCodeInput = z.object({ content: z.string().describe('The complete hook code, as create_hook and update_hook take it') });

export const listHookRunsInput = z.object({
  hookId: idSchema.optional(),
  outcome: z.enum(HOOK_RUN_OUTCOMES, { message: `must be one of ${HOOK_RUN_OUTCOMES.join(', ')}` }).optional(),
  limit: pageSizeSchema(500, 50),
  /** The `nextCursor` of the previous page: runs older than its last one. */
  before: cursorSchema.optional(),
});

/** The provider signature schemes a test run can sign its body with (the hook guide's examples). */
export const WEBHOOK_SIGNING_SCHEMES = ['stripe', 'github'] as const;
export type WebhookSigningScheme = (typeof WEBHOOK_SIGNING_SCHEMES)[number];

/** An HTTP header name (a token) and a value of visible ASCII, spaces and tabs. */
const testHeader = z.object({
  name: z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'must be an HTTP header name: letters, digits and !#$%&\'*+.^_`|~- only'),
  value: z.string().max(8192, 'must be at most 8192 characters').regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'may hold only tabs, spaces, visible ASCII and U+0080-U+00FF'),
});

/**
 * A test run of a webhook, as a POST to its URL would run it: the raw body with its media type and
 * headers, signed on the server with an environment value when `signWith` is given.
 */
export const testWebhookInput = z.object({
  _id: recordRef('hook'),
  body: z.string().default('').describe('The raw body, sent as it is (what providers sign)'),
  contentType: z.string().trim().max(200, 'must be at most 200 characters').default('application/json'),
  headers: z.array(testHeader).max(50, 'at most 50 headers').default([]),
  signWith: z
    .object({
      scheme: z
        .enum(WEBHOOK_SIGNING_SCHEMES, { message: `must be one of ${WEBHOOK_SIGNING_SCHEMES.join(', ')}` })
        .describe("stripe (Stripe-Signature: t=<now>,v1=<hex HMAC-SHA256 of '<t>.<body>'>) or github (X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>)."),
      envVar: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
    })
    .describe("Sign the test run's body as the provider would, with the value of the environment variable envVar (the value stays on the server).")
    .optional()
    .describe("Signs the body on the server with this environment variable's value, as the provider would: stripe (Stripe-Signature: t=<now>,v1=<HMAC-SHA256 of t.body>) or github (X-Hub-Signature-256: sha256=<HMAC-SHA256 of body>)"),
});

/** A hook in an answer, without its code (MCP's lists and writes). */
export const hookOutput = z.object({
  _id: idOutput,
  name: z.string(),
  type: z.enum(HOOK_TYPES),
  tableId: idOutput.nullable().describe('The table of a beforeSave or afterSave hook; unused by webhooks.'),
  contentSha256: z.string(),
  version: z.number().int(),
  createdBy: userRef,
  updatedBy: userRef,
  createdAt: isoTime,
  updatedAt: isoTime,
});

/** A hook with its code (MCP's get_hook, GraphQL's Hook). */
export const hookWithContentOutput = hookOutput
  .extend({ content: z.string() })
  .describe("Server-side JavaScript run on a table's saves (beforeSave, afterSave) or at /api/webhook/<name> (webHook).");

export type ListHookRunsInput = z.input<typeof listHookRunsInput>;
export type TestWebhookInput = z.input<typeof testWebhookInput>;
export type CreateHookInput = z.input<typeof createHookInput>;
export type UpdateHookInput = z.input<typeof updateHookInput>;
export type EditHookCodeInput = z.input<typeof editHookCodeInput>;
export type DeleteHookInput = z.input<typeof deleteHookInput>;
export type ListHooksInput = z.input<typeof listHooksInput>;
