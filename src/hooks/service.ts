import { writeTransaction } from '../platform/db/write.js';
import { resolveNamedRecord } from '../platform/references.js';
import { requirePermission, type Principal } from '../access/permissions.js';
import { recordAudit } from '../audit/writer.js';
import { assertValidCode } from '../authoring/code-edits.js';
import { applyPatches } from '../authoring/code-patches.js';
import { newId, sha256Hex } from '../platform/crypto.js';
import type { PlatformContext } from '../platform/context.js';
import type { Db } from '../platform/db/index.js';
import type { Row } from '../platform/db/types.js';
import { badInput, notFound } from '../platform/errors.js';
import { enqueueMail } from '../platform/mail.js';
import { assertDistinctName } from '../platform/names.js';
import { assertMaxBytes, parseInput } from '../platform/validation.js';
import { validateHookCode } from './code-validation.js';
import type { CodeValidation } from '../authoring/ast-walk.js';
import {
  HOOK_CODE_MAX_BYTES,
  TABLE_HOOK_TYPES,
  createHookInput,
  deleteHookInput,
  editHookCodeInput,
  hookNameProblem,
  listHookRunsInput,
  listHooksInput,
  updateHookInput,
  type CreateHookInput,
  type DeleteHookInput,
  type EditHookCodeInput,
  type HookType,
  type ListHookRunsInput,
  type ListHooksInput,
  type UpdateHookInput,
} from './schema.js';

export interface Hook {
  _id: string;
  name: string;
  type: HookType;
  tableId: string | null;
  content: string;
  contentSha256: string;
  version: number;
  createdBy: string | null;
  updatedBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface HookUpdate {
  hook: Hook;
  /** The code before this update, for adapters that answer with a diff. */
  previousCode: string;
}

type HookChanges = Pick<UpdateHookInput, 'name' | 'tableId' | 'content'>;
type HookWrite = 'create' | 'update' | 'edit';
/** What the owners' e-mail announces: a write of a hook, or its deletion. */
type HookChange = HookWrite | 'delete';

export class HookService {
  constructor(private readonly ctx: PlatformContext) {}

  /**
   * Checks hook code without saving or running it, as every hook write does, and warns about a
   * `db` call on a table that does not exist and an `env` name that is not set.
   */
  async validateCode(principal: Principal, code: string): Promise<CodeValidation> {
    requirePermission(principal, 'config:read');
    const [tables, envVars] = await Promise.all([
      this.ctx.db.selectFrom('app_tables').select(['id as _id', 'name']).orderBy('name').execute(),
      this.ctx.db.selectFrom('env_vars').select('name').orderBy('name').execute(),
    ]);
    return validateHookCode(code, { tables, envNames: envVars.map((row) => row.name) });
  }

  /** Hooks, optionally of one type and/or one table, ordered by name. */
  async listHooks(principal: Principal, input: ListHooksInput = {}): Promise<Hook[]> {
    requirePermission(principal, 'config:read');
    const filter = parseInput(listHooksInput, input);
    let select = this.ctx.db.selectFrom('hooks').selectAll().orderBy('name').orderBy('id');
    if (filter.type) select = select.where('type', '=', filter.type);
    if (filter.tableId) select = select.where('table_id', '=', filter.tableId);
    return (await select.execute()).map(toHook);
  }

  /** The run log of hooks, newest first, with the cursor of the next page. */
  async listHookRuns(principal: Principal, input: ListHookRunsInput = {}): Promise<{ items: HookRun[]; nextCursor: string | null }> {
    requirePermission(principal, 'config:read');
    const filter = parseInput(listHookRunsInput, input);
    let select = this.ctx.db.selectFrom('hook_runs').selectAll().orderBy('id', 'desc').limit(filter.limit + 1);
    if (filter.hookId) select = select.where('hook_id', '=', filter.hookId);
    if (filter.outcome) select = select.where('outcome', '=', filter.outcome);
    if (filter.before !== undefined) select = select.where('id', '<', filter.before);
    const rows = await select.execute();
    const page = rows.slice(0, filter.limit);
    const detailed = mayReadRunDetails(principal);
    return {
      items: page.map((row) => toHookRun(row, detailed)),
      nextCursor: rows.length > filter.limit ? String(page[page.length - 1]!.id) : null,
    };
  }

  async getHook(principal: Principal, hookId: string): Promise<Hook> {
    requirePermission(principal, 'config:read');
    return readHook(this.ctx.db, hookId);
  }

  /**
   * Creates a hook as version 1 and e-mails every application owner in the same transaction.
   * Throws BAD_INPUT (also for code the validator finds errors in), NOT_FOUND (unknown table),
   * CONFLICT (taken name) or PAYLOAD_TOO_LARGE.
   */
  async createHook(principal: Principal, input: CreateHookInput): Promise<Hook> {
    const data = parseInput(createHookInput, input);
    requirePermission(principal, 'hooks:write');
    checkCode(data.content);
    return writeTransaction(this.ctx, async (trx) => {
      const tableId = await resolveTableId(trx, data.type, data.tableId);
      await assertNameFree(trx, data.name);
      const id = newId();
      const contentSha256 = sha256Hex(data.content);
      await trx
        .insertInto('hooks')
        .values({
          id,
          name: data.name,
          type: data.type,
          table_id: tableId,
          content: data.content,
          content_sha256: contentSha256,
          version: 1,
          created_by: principal.userId,
          updated_by: principal.userId,
          updated_at: new Date(),
        })
        .execute();
      const hook = await readHook(trx, id);
      await recordHookWrite(trx, principal, hook, 'create');
      return hook;
    });
  }

  /**
   * Changes a hook's name, table or code (never its type), adds a version and e-mails every
   * application owner in the same transaction. New code is validated like at creation.
   */
  async updateHook(principal: Principal, input: UpdateHookInput): Promise<HookUpdate> {
    const data = parseInput(updateHookInput, input);
    requirePermission(principal, 'hooks:write');
    if (data.content !== undefined) checkCode(data.content);
    return writeTransaction(this.ctx, async (trx) => {
      const current = await lockHook(trx, data._id);
      return saveHook(trx, principal, current, data, 'update');
    });
  }

  /**
   * Applies old_str/new_str patches to the code read under a row lock, so concurrent edits never
   * lose an update, then validates and saves the result exactly like updateHook. A patch that
   * does not match exactly once, or a result with errors, rejects the edit and nothing is written.
   */
  async editHookCode(principal: Principal, input: EditHookCodeInput): Promise<HookUpdate> {
    const data = parseInput(editHookCodeInput, input);
    requirePermission(principal, 'hooks:write');
    return writeTransaction(this.ctx, async (trx) => {
      const current = await lockHook(trx, data._id);
      const content = applyPatches(current.content, data.patches);
      checkCode(content);
      return saveHook(trx, principal, current, { content }, 'edit');
    });
  }

  async deleteHook(principal: Principal, input: DeleteHookInput): Promise<boolean> {
    const data = parseInput(deleteHookInput, input);
    requirePermission(principal, 'config:delete');
    return writeTransaction(this.ctx, async (trx) => {
      const id = await resolveNamedRecord(trx, 'hooks', data._id);
      const hook = await trx.selectFrom('hooks').select(['id', 'name', 'type', 'table_id', 'version']).where('id', '=', id).forUpdate().executeTakeFirst();
      if (!hook) throw notFound('Hook', data._id);
      await trx.deleteFrom('hooks').where('id', '=', hook.id).execute();
      await recordAudit(trx, principal, {
        action: 'hook.delete',
        resourceType: 'hook',
        resourceId: hook.id,
        details: { name: hook.name, type: hook.type },
      });
      await notifyOwners(trx, principal, { name: hook.name, type: hook.type as HookType, tableId: hook.table_id, version: hook.version }, 'delete');
      return true;
    });
  }
}

function checkCode(content: string): void {
  assertMaxBytes('content', content, HOOK_CODE_MAX_BYTES, '200 KB');
  assertValidCode('content', validateHookCode(content));
}


/** The hook `hookRef` names (its `_id` or name), locked for this transaction. */
async function lockHook(trx: Db, hookRef: string): Promise<Row<'hooks'>> {
  const hookId = await resolveNamedRecord(trx, 'hooks', hookRef);
  const current = await trx.selectFrom('hooks').selectAll().where('id', '=', hookId).forUpdate().executeTakeFirst();
  if (!current) throw notFound('Hook', hookId);
  return current;
}

/** Writes already validated changes over the locked row `current` as a new version, with its audit entry and owners' e-mails. */
async function saveHook(trx: Db, principal: Principal, current: Row<'hooks'>, changes: HookChanges, write: HookWrite): Promise<HookUpdate> {
  const type = current.type as HookType;
  if (changes.name !== undefined) {
    const problem = hookNameProblem(type, changes.name);
    if (problem) throw badInput(`name: ${problem}`, { field: 'name' });
    if (changes.name !== current.name) await assertNameFree(trx, changes.name, current.id);
  }
  const tableId = changes.tableId === undefined ? current.table_id : await resolveTableId(trx, type, changes.tableId);
  const content = changes.content ?? current.content;
  await trx
    .updateTable('hooks')
    .set({
      name: changes.name ?? current.name,
      table_id: tableId,
      content,
      content_sha256: sha256Hex(content),
      version: current.version + 1,
      updated_by: principal.userId,
      updated_at: new Date(),
    })
    .where('id', '=', current.id)
    .execute();
  const hook = await readHook(trx, current.id);
  await recordHookWrite(trx, principal, hook, write);
  return { hook, previousCode: current.content };
}

/**
 * The table a hook is stored with. Table hooks need an existing table; webhooks do not use one
 * and keep a given id only when that table exists (docs/spec.md 2.5: the default value may stay).
 */
async function resolveTableId(trx: Db, type: HookType, tableId: string | undefined): Promise<string | null> {
  if (tableId === undefined) {
    if (TABLE_HOOK_TYPES.has(type)) throw badInput(`tableId: is required for ${type} hooks`, { field: 'tableId' });
    return null;
  }
  // Table hooks need the table, named by _id or name; a webhook keeps a given table only when it exists.
  if (TABLE_HOOK_TYPES.has(type)) return resolveNamedRecord(trx, 'app_tables', tableId);
  const table = await trx.selectFrom('app_tables').select('id').where('id', '=', tableId).executeTakeFirst();
  return table?.id ?? null;
}

/** Refuses a name another hook has, in any letter case, or that looks like one (D33); `exceptId` is the hook being renamed. */
async function assertNameFree(trx: Db, name: string, exceptId?: string): Promise<void> {
  let others = trx.selectFrom('hooks').select('name');
  if (exceptId) others = others.where('id', '!=', exceptId);
  assertDistinctName(name, (await others.execute()).map((hook) => hook.name), { what: 'hook', field: 'name' });
}

/** The version row, the audit entry (with the sha256 of the stored code) and the owners' e-mails of one save. */
async function recordHookWrite(trx: Db, principal: Principal, hook: Hook, write: HookWrite): Promise<void> {
  await trx
    .insertInto('hook_versions')
    .values({
      hook_id: hook._id,
      version: hook.version,
      content: hook.content,
      content_sha256: hook.contentSha256,
      author_id: principal.userId,
    })
    .execute();
  await recordAudit(trx, principal, {
    action: `hook.${write}`,
    resourceType: 'hook',
    resourceId: hook._id,
    details: { name: hook.name, type: hook.type, tableId: hook.tableId, version: hook.version, codeSha256: hook.contentSha256 },
  });
  await notifyOwners(trx, principal, hook, write);
}

/**
 * Spec section 6: owners hear of every hook creation, modification and deletion, whoever made it.
 * A disabled owner is told too: the e-mail is an announcement, and disabling the owner must not
 * silence it (D33).
 */
async function notifyOwners(trx: Db, principal: Principal, hook: Pick<Hook, 'name' | 'type'> & Partial<Hook>, change: HookChange): Promise<void> {
  const owners = await trx.selectFrom('users').select('email').where('is_owner', '=', true).execute();
  if (!owners.length) return;
  const author = await authorLabel(trx, principal);
  const done = HOOK_CHANGE_WORDS[change];
  const subject = `Hook "${hook.name}" ${done}`;
  const body = [
    `The hook "${hook.name}" was ${done}.`,
    '',
    `Type: ${hook.type}`,
    ...(hook.tableId ? [`Table: ${hook.tableId}`] : []),
    ...(hook.version !== undefined ? [`Version: ${hook.version}`] : []),
    `Author: ${author}`,
    `Source: ${principal.source}`,
    ...(hook.contentSha256 ? [`SHA-256 of the stored code: ${hook.contentSha256}`] : []),
    '',
    'Hook code runs on the server. If you did not expect this change, review the hooks in the designer.',
  ].join('\n');
  for (const owner of owners) await enqueueMail(trx, { to: owner.email, subject, body });
}

const HOOK_CHANGE_WORDS: Record<HookChange, string> = { create: 'created', update: 'modified', edit: 'modified', delete: 'deleted' };

async function authorLabel(trx: Db, principal: Principal): Promise<string> {
  if (!principal.userId) return principal.label;
  const user = await trx.selectFrom('users').select('email').where('id', '=', principal.userId).executeTakeFirst();
  return user?.email ?? principal.label;
}

async function readHook(db: Db, hookRef: string): Promise<Hook> {
  const hookId = await resolveNamedRecord(db, 'hooks', hookRef);
  const row = await db.selectFrom('hooks').selectAll().where('id', '=', hookId).executeTakeFirst();
  if (!row) throw notFound('Hook', hookId);
  return toHook(row);
}

/** One run of a hook as the run log shows it. */
export interface HookRun {
  _id: string;
  hookId: string | null;
  hookName: string;
  trigger: string;
  startedAt: Date;
  durationMs: number;
  outcome: string;
  /** Null for a reader who may not write hooks (see `mayReadRunDetails`). */
  console: string[] | null;
  error: string | null;
  /** What the run received and answered (redacted, cut to 4000 characters of JSON); null when withheld. */
  input: unknown;
  output: unknown;
  /** How long the run waited for a hook worker (ms); null for runs stored before this was recorded. */
  queuedMs: number | null;
  /** The HTTP request that caused the run (its x-request-id, as in the server's log); null when none did. */
  requestId: string | null;
  /** The HTTP status a webhook answered (500 when its code failed); null for save hooks and runs stored before. */
  httpStatus: number | null;
  /** False when console, error, input and output are withheld from this reader. */
  detailsVisible: boolean;
}

/**
 * Whether `principal` may read what a run printed and threw: what hook code writes there may hold
 * secrets (environment values in any disguise), so only those who could have written the code
 * themselves (admins with 'hooks:write') read it; the reader set of a secret never grows.
 */
export function mayReadRunDetails(principal: Principal): boolean {
  return principal.isAdmin && principal.permissions.has('hooks:write');
}

function toHookRun(row: Row<'hook_runs'>, detailed: boolean): HookRun {
  return {
    _id: String(row.id),
    hookId: row.hook_id,
    hookName: row.hook_name,
    trigger: row.trigger,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    outcome: row.outcome,
    console: detailed ? row.console : null,
    error: detailed ? row.error : null,
    input: detailed ? (row.input ?? null) : null,
    output: detailed ? (row.output ?? null) : null,
    queuedMs: row.queued_ms,
    requestId: row.request_id,
    httpStatus: row.http_status,
    detailsVisible: detailed,
  };
}

function toHook(row: Row<'hooks'>): Hook {
  return {
    _id: row.id,
    name: row.name,
    type: row.type as HookType,
    tableId: row.table_id,
    content: row.content,
    contentSha256: row.content_sha256,
    version: row.version,
    createdBy: row.created_by,
    updatedBy: row.updated_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
