import { systemPrincipal, type Principal } from '../access/permissions.js';
import { namesCapability } from '../hooks/code-validation.js';
import type { HookDb, HookRunner, HookRunRequest, HookUser } from '../hooks/run-contract.js';
import type { Hook, HookService } from '../hooks/service.js';
import type { PlatformContext } from '../platform/context.js';
import type { Db } from '../platform/db/index.js';
import { TrellisError, badInput } from '../platform/errors.js';
import { ReadValue } from '../platform/read-cache.js';
import { rolledBack } from './record-sql.js';
import { isSystemField, validateRecordData, type RecordOutput, type RecordTable, type RecordValues } from './record-schema.js';
import { withFields } from '../platform/objects.js';

/**
 * What the record layer is handed of the hooks (built in services.ts): the hooks, to find each
 * table's save hooks, and a runner for save hooks.
 */
export interface SaveHooks {
  readonly hooks: Pick<HookService, 'listHooks'>;
  readonly runner: HookRunner<HookRunRequest>;
}

/** The save hooks of a table. */
export interface TableSaveHooks {
  beforeSave: Hook[];
  afterSave: Hook[];
  /** A beforeSave hook names `db`: it gets it, and its writes must share the record's transaction. */
  beforeSaveWrites: boolean;
}

/** The save hooks of a write and who they run for. */
export interface SaveContext extends TableSaveHooks {
  user: HookUser | null;
}

export const NO_HOOKS: SaveContext = { beforeSave: [], afterSave: [], beforeSaveWrites: false, user: null };

/**
 * What runs around a record's write: the table's `beforeSave` hooks on the record before it is
 * written (inside the write's transaction when they may write through `db`), the `afterSave` hooks
 * after the commit, and the transaction itself when the write needs one.
 */
export class SavePipeline {
  /** Per record id, the end of its afterSave hooks started so far. */
  private readonly afterSaveChains = new Map<string, Promise<void>>();
  private readonly hooks: ReadValue<Map<string, TableSaveHooks>>;

  /**
   * @param saveHooks the hooks and the runner of save hooks, handed to RecordService in services.ts.
   * @param hookDb the `db` capability handed to hook code for `principal`, joining `db` when given
   *   (RecordService.hookDb).
   */
  constructor(
    private readonly ctx: PlatformContext,
    private readonly saveHooks: SaveHooks,
    private readonly hookDb: (principal: Principal, db?: Db) => HookDb,
  ) {
    this.hooks = new ReadValue(ctx.changes, { topics: ['config'] });
  }

  /**
   * The table's save hooks and, when there are any, the author as hooks see it, with the runtime
   * prepared: all read before the write's transaction opens (on the embedded database a read
   * outside the transaction would wait for it).
   */
  async context(principal: Principal, tableId: string): Promise<SaveContext> {
    const hooks = await this.tableHooks(tableId);
    if (!hooks.beforeSave.length && !hooks.afterSave.length) return NO_HOOKS;
    if (hooks.beforeSave.length) await this.saveHooks.runner.prepare();
    return withFields(hooks, { user: await this.author(principal) });
  }

  /**
   * Runs the table's beforeSave hooks in name order, each on the previous one's instance, and
   * checks what the last one leaves. A hook that throws rejects the save with its message.
   */
  async beforeSave(principal: Principal, table: RecordTable, hooks: SaveContext, instance: Record<string, unknown>, trx: Db): Promise<RecordValues> {
    const { _id, ...values } = instance;
    if (!hooks.beforeSave.length) return values;
    const { runner } = this.saveHooks;
    const db = hooks.beforeSaveWrites ? this.hookDb(principal, trx) : undefined;
    let current: Record<string, unknown> = instance;
    for (const hook of hooks.beforeSave) {
      const result = await runner.run({ hook, trigger: 'beforeSave', instance: current, user: hooks.user, db, requestId: principal.requestId });
      if (!result.ok) throw badInput(result.error.message, { hook: hook.name, kind: result.error.kind });
      current = hookInstance(hook, result.instance);
    }
    return validateHookResult(table, hooks.beforeSave[hooks.beforeSave.length - 1]!, current, _id);
  }

  /**
   * Starts the afterSave hooks without waiting: the runtime records each run and its failure. The
   * hooks of one record run in the order of its saves (each save's after the previous save's have
   * ended), so that what they send elsewhere arrives in that order too.
   */
  afterSave(principal: Principal, hooks: SaveContext, record: RecordOutput): void {
    if (!hooks.afterSave.length) return;
    const { runner } = this.saveHooks;
    const db = this.hookDb(principal);
    const key = String(record._id);
    const previous = this.afterSaveChains.get(key) ?? Promise.resolve();
    const chain = previous
      .then(async () => {
        for (const hook of hooks.afterSave) {
          await runner.run({ hook, trigger: 'afterSave', instance: { ...record }, user: hooks.user, db, requestId: principal.requestId });
        }
      })
      .catch((error: unknown) => this.ctx.logger.error({ err: error }, 'afterSave hooks failed'))
      .finally(() => {
        if (this.afterSaveChains.get(key) === chain) this.afterSaveChains.delete(key);
      });
    this.afterSaveChains.set(key, chain);
  }

  /** The author as hooks see it: from the principal when authentication read the e-mail, else read. */
  private async author(principal: Principal): Promise<HookUser | null> {
    if (!principal.userId) return null;
    const via = principal.via === undefined ? {} : { via: principal.via };
    if (principal.userEmail !== undefined && principal.userRole !== undefined) return { _id: principal.userId, email: principal.userEmail, role: principal.userRole, ...via };
    const user = await this.ctx.db
      .selectFrom('users as u')
      .innerJoin('roles as r', 'r.id', 'u.role_id')
      .select(['u.id as _id', 'u.email', 'r.name as role'])
      .where('u.id', '=', principal.userId)
      .executeTakeFirst();
    return user ? withFields(user, via) : null;
  }

  /** The save hooks of a table, from a cache kept until the next configuration change. */
  private async tableHooks(tableId: string): Promise<TableSaveHooks> {
    return (await this.hooks.load(() => loadSaveHooks(this.saveHooks.hooks))).get(tableId) ?? NO_HOOKS;
  }
}

/**
 * Runs a write's statements in one transaction (joining `db` when it is one). A write of one
 * statement (no beforeSave hook, no reference to check) needs none: the statement is atomic.
 * A scratch write always has one, rolled back at the end.
 */
export function inTransaction<T>(executor: Db, scratch: boolean | undefined, atomic: boolean, work: (trx: Db) => Promise<T>): Promise<T> {
  if (scratch) return rolledBack(executor, work);
  if (!atomic || executor.isTransaction) return work(executor);
  return executor.transaction().execute(work);
}

/** Whether updates of `table` run its beforeSave hooks without a transaction (RecordService.updateUnlocked). */
export function updatesUnlocked(table: RecordTable, hooks: TableSaveHooks): boolean {
  return hooks.beforeSave.length > 0 && !hooks.beforeSaveWrites && !table.fields.some((field) => field.reference);
}

/** Whether `values` reference other records: their existence is checked in the write's transaction. */
export function hasReferences(table: RecordTable, values: RecordValues): boolean {
  return table.fields.some((field) => field.reference && values[field.name] !== null && values[field.name] !== undefined);
}

async function loadSaveHooks(hooks: SaveHooks['hooks']): Promise<Map<string, TableSaveHooks>> {
  const byTable = new Map<string, TableSaveHooks>();
  for (const hook of await hooks.listHooks(systemPrincipal())) {
    if (!hook.tableId || (hook.type !== 'beforeSave' && hook.type !== 'afterSave')) continue;
    const entry = byTable.get(hook.tableId) ?? { beforeSave: [], afterSave: [], beforeSaveWrites: false };
    entry[hook.type].push(hook);
    if (hook.type === 'beforeSave') entry.beforeSaveWrites ||= namesCapability(hook.content, 'db');
    byTable.set(hook.tableId, entry);
  }
  return byTable;
}

function hookInstance(hook: Hook, instance: unknown): Record<string, unknown> {
  if (instance === null || typeof instance !== 'object' || Array.isArray(instance)) {
    throw badInput(`beforeSave hook '${hook.name}' left instance as something other than an object`, { hook: hook.name });
  }
  return instance as Record<string, unknown>;
}

/** The instance a beforeSave hook leaves: system fields are the server's, the rest must be valid. */
function validateHookResult(table: RecordTable, hook: Hook, instance: Record<string, unknown>, id: unknown): RecordValues {
  const data = Object.fromEntries(Object.entries(instance).filter(([key]) => !isSystemField(key)));
  if (instance._id !== undefined && instance._id !== id) {
    throw badInput(`beforeSave hook '${hook.name}' changed instance._id; the _id of a record cannot change`, { hook: hook.name });
  }
  try {
    return validateRecordData(table, data, 'create', 'data');
  } catch (error) {
    if (!(error instanceof TrellisError)) throw error;
    throw badInput(`beforeSave hook '${hook.name}' left an invalid record: ${error.message}`, withFields(error.details ?? {}, { hook: hook.name }));
  }
}
