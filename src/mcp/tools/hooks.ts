import { z } from 'zod';
import { unifiedDiff } from '../../authoring/code-patches.js';
import { CREATE, DELETE, READ, UPDATE, defineTool } from './types.js';
import {
  createHookInput,
  deleteHookInput,
  editHookCodeInput,
  hookOutput,
  hookRefInput,
  hookWithContentOutput,
  listHooksInput,
  updateHookInput,
  validateHookCodeInput,
} from '../../hooks/schema.js';
import { webhookUrl } from '../../runtime/webhooks.js';
import { codeValidationOutput } from '../../authoring/schema.js';
import { diffOutput, plain } from './shared.js';

export const listHooks = defineTool({
  name: 'list_hooks',
  scope: 'config:read',
  title: 'List hooks',
  description: 'Lists server-side hooks without their code, optionally filtered by type or table.',
  input: listHooksInput,
  // Each hook as get_hook_details answers it, without its code and authors.
  output: z.object({ hooks: z.array(hookOutput.pick({ _id: true, name: true, type: true, tableId: true, contentSha256: true, version: true, updatedAt: true })) }),
  annotations: READ,
  cacheable: true,
  async run(services, principal, args) {
    const hooks = await services.hooks.listHooks(principal, args);
    return {
      data: {
        hooks: plain(
          hooks.map((h) => ({
            _id: h._id,
            name: h.name,
            type: h.type,
            tableId: h.tableId,
            contentSha256: h.contentSha256,
            version: h.version,
            updatedAt: h.updatedAt,
          })),
        ),
      },
    };
  },
});

export const getHookDetails = defineTool({
  name: 'get_hook_details',
  aliases: { hookId: '_id' },
  scope: 'config:read',
  title: 'Get a hook',
  description: 'Returns one hook with its code (content), type, table and version.',
  input: hookRefInput,
  output: z.object({ hook: hookWithContentOutput }),
  annotations: READ,
  cacheable: true,
  async run(services, principal, args) {
    return { data: { hook: plain(await services.hooks.getHook(principal, args._id)) } };
  },
});

export const validateHookCodeTool = defineTool({
  name: 'validate_hook_code',
  scope: 'config:read',
  title: 'Validate hook code',
  description:
    'Dry-run check of server-side hook code: syntax (strict mode, as the code runs), the single async function shape `async function (instance) { ... }`, forbidden constructs and size; warns about a db call on a table that does not exist and an env name that is not set. Never executes the code.',
  input: validateHookCodeInput,
  output: codeValidationOutput,
  annotations: READ,
  async run(services, principal, args) {
    return { data: plain(await services.hooks.validateCode(principal, args.content)) };
  },
});

export const createHook = defineTool({
  name: 'create_hook',
  scope: 'hooks:write',
  title: 'Create a hook',
  description:
    'Creates a server-side hook: beforeSave/afterSave on a table (tableId required) or webHook (public endpoint /api/webhook/<name>; name 2-64 letters, digits, _ and -; the answer gives its url). Code is `async function (instance) { ... }`. Every owner is e-mailed.',
  input: createHookInput,
  output: z.object({
    hook: hookOutput,
    url: z.string().optional().describe("A webhook's URL, where callers POST: /api/webhook/<name> on this server (TRELLIS_PUBLIC_URL when set)"),
  }),
  annotations: CREATE,
  async run(services, principal, args) {
    const hook = await services.hooks.createHook(principal, args);
    return { data: { hook: plain({ ...hook, content: undefined }), ...(hook.type === 'webHook' ? { url: webhookUrl(principal.baseUrl, hook.name) } : {}) } };
  },
});

export const updateHook = defineTool({
  name: 'update_hook',
  aliases: { hookId: '_id' },
  scope: 'hooks:write',
  title: 'Update a hook',
  description: 'Updates a hook\'s name, table or code. When content is given it replaces the code in full and the answer carries a unified diff.',
  input: updateHookInput,
  output: z.object({ hook: hookOutput, diff: diffOutput.optional() }),
  annotations: UPDATE,
  async run(services, principal, args) {
    const { hook, previousCode } = await services.hooks.updateHook(principal, args);
    return {
      data: { hook: plain({ ...hook, content: undefined }) },
      ...(args.content !== undefined ? { diff: unifiedDiff(`hook/${hook.name}.js`, previousCode, hook.content) } : {}),
    };
  },
});

export const editHookCode = defineTool({
  name: 'edit_hook_code',
  aliases: { hookId: '_id' },
  scope: 'hooks:write',
  title: 'Edit hook code',
  description:
    'Applies old_str/new_str patches to the hook\'s current code, validates the result, saves it and returns a unified diff. A patch that does not match exactly once rejects the whole edit and nothing is written.',
  input: editHookCodeInput,
  output: z.object({ hook: hookOutput, diff: diffOutput }),
  annotations: UPDATE,
  async run(services, principal, args) {
    const { hook, previousCode } = await services.hooks.editHookCode(principal, args);
    return {
      data: { hook: plain({ ...hook, content: undefined }) },
      diff: unifiedDiff(`hook/${hook.name}.js`, previousCode, hook.content),
    };
  },
});

export const deleteHook = defineTool({
  name: 'delete_hook',
  aliases: { hookId: '_id' },
  scope: 'config:delete',
  title: 'Delete a hook',
  description: 'Deletes a hook. Requires confirm: true.',
  input: deleteHookInput,
  output: z.object({ deleted: z.string() }),
  annotations: DELETE,
  async run(services, principal, args) {
    await services.hooks.deleteHook(principal, args);
    return { data: { deleted: args._id } };
  },
});
