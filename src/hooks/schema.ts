import { z } from 'zod';
import { codePatchesSchema } from '../platform/code-edits.js';
import { confirmTrue, cursorSchema, idSchema, pageSizeSchema, recordRef } from '../platform/validation.js';

/** Hook code limit (spec section 8): 200 KB of UTF-8. */
export const HOOK_CODE_MAX_BYTES = 204_800;

export const HOOK_TYPES = ['beforeSave', 'afterSave', 'webHook'] as const;
export type HookType = (typeof HOOK_TYPES)[number];

/** How a hook run ended, as the run log stores it. */
export const HOOK_RUN_OUTCOMES = ['ok', 'error', 'timeout', 'memory'] as const;

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

export const listHookRunsInput = z.object({
  hookId: idSchema.optional(),
  outcome: z.enum(HOOK_RUN_OUTCOMES, { message: `must be one of ${HOOK_RUN_OUTCOMES.join(', ')}` }).optional(),
  limit: pageSizeSchema(500, 50),
  /** The `nextCursor` of the previous page: runs older than its last one. */
  before: cursorSchema.optional(),
});

export type ListHookRunsInput = z.input<typeof listHookRunsInput>;
export type CreateHookInput = z.input<typeof createHookInput>;
export type UpdateHookInput = z.input<typeof updateHookInput>;
export type EditHookCodeInput = z.input<typeof editHookCodeInput>;
export type DeleteHookInput = z.input<typeof deleteHookInput>;
export type ListHooksInput = z.input<typeof listHooksInput>;
