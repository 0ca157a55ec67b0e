import { sql, type RawBuilder } from 'kysely';
import { systemPrincipal, type Principal } from '../access/permissions.js';
import { namesCapability } from '../hooks/code-validation.js';
import type { Hook, HookService } from '../hooks/service.js';
import type { PlatformContext } from '../platform/context.js';
import { ReadCache } from '../platform/read-cache.js';
import { newId } from '../platform/crypto.js';
import type { Db } from '../platform/db/index.js';
import { TrellisError, badInput, conflict, forbidden, notFound } from '../platform/errors.js';
import { idSchema, parseInput } from '../platform/validation.js';
import { RecordVersions, type RecordVersion } from './record-versions.js';
import { fieldValues, filterCondition, orderBy, selectList, sqlValue, toRecordOutput } from './record-query.js';
import { assertWritable, recordScope, storedRules, withoutHidden, type RecordScope } from './access-rules.js';
import { NO_ACCESS, type AccessAction, type TableAccessRules } from './access-schema.js';
import {
  isPlainObject,
  isSystemField,
  recordInputError,
  recordQueryInput,
  validateRecordData,
  type RecordField,
  type RecordIssue,
  type RecordOutput,
  type RecordQueryInput,
  type RecordTable,
  type RecordValues,
} from './record-schema.js';
import type { FieldType } from './schema.js';

/** One page of records and how many match the filter in all. */
export interface RecordPage {
  items: RecordOutput[];
  total: number;
}

/**
 * The `db` capability of hook code: the application's tables by name, with the hook's rights.
 * Arguments come from hook code as JSON values and are validated like any other input.
 */
export interface HookDb {
  /** `filter` as in record-query.ts; `options` holds `sort`, `limit` and `offset`. */
  find(table: string, filter?: unknown, options?: unknown): Promise<RecordPage>;
  get(table: string, _id: string): Promise<RecordOutput | null>;
  create(table: string, data: Record<string, unknown>): Promise<RecordOutput>;
  update(table: string, _id: string, data: Record<string, unknown>): Promise<RecordOutput>;
  delete(table: string, _id: string): Promise<boolean>;
}

export type SaveTrigger = 'beforeSave' | 'afterSave';

/** The user a save is made for, as hooks see it. */
export interface HookUser {
  _id: string;
  email: string;
  /** The name of the user's role: a hook refuses a save to a role by it. */
  role: string;
  /** The integration key's name when an integration acts for the user (`x-userid`). */
  via?: string;
}

/** One run of hook code, as the hook runtime takes it. */
export interface HookRunRequest {
  hook: Hook;
  trigger: SaveTrigger;
  instance: Record<string, unknown>;
  user?: HookUser | null;
  db?: HookDb;
  requestId?: string;
}

export type HookRunResult =
  | { ok: true; value: unknown; instance: unknown; durationMs: number }
  | { ok: false; error: { message: string; kind: string }; durationMs: number };

/** Runs hook code in the sandbox; `run` never throws (a failure is `ok: false`). */
export interface HookRunner {
  /** Loads what a run needs from the database; called before a transaction in which hooks run. */
  prepare(): Promise<void>;
  run(request: HookRunRequest): Promise<HookRunResult>;
}

/** What the record layer needs from the other services, resolved when a save runs. */
export interface RecordServiceDependencies {
  readonly hooks: HookService;
  readonly hookRuntime: HookRunner;
}

interface SaveHooks {
  beforeSave: Hook[];
  afterSave: Hook[];
  /** A beforeSave hook names `db`: it gets it, and its writes must share the record's transaction. */
  beforeSaveWrites: boolean;
}

/** The save hooks of a write and who they run for. */
interface SaveContext extends SaveHooks {
  user: HookUser | null;
}

/**
 * How a caller's write runs. `scratch`: checked in full (fields, access rules, beforeSave hooks and
 * their `db` writes, references, unique values), then rolled back; the answer is the record as it
 * would have been, nothing is stored and no afterSave hook runs (docs/decisions.md, D37).
 */
export interface WriteMode {
  scratch?: boolean | undefined;
}

interface WriteOptions extends WriteMode {
  /** The executor to write with: a hook's writes join the save's transaction. */
  db?: Db;
  /** False for writes made by hook code, so hooks never trigger hooks. */
  runHooks: boolean;
}

/** Thrown inside a scratch write's transaction to roll it back once its result is known. */
const SCRATCH_ROLLBACK = Symbol('scratch rollback');

const NO_HOOKS: SaveContext = { beforeSave: [], afterSave: [], beforeSaveWrites: false, user: null };
/** Reads and hook runs of an update whose record kept changing meanwhile, before it gives up. */
const UNLOCKED_UPDATE_ATTEMPTS = 3;

/**
 * The records of the application's tables: the only code that writes their rows. Every method
 * takes the caller's Principal: signed-in users, integrations and the system may read and write
 * records; MCP keys may not (they configure, they do not touch data). Each write is atomic:
 * `beforeSave` hooks run before the row is written (inside the write's transaction when they may
 * write through `db` or references must be checked), `afterSave` hooks after the commit.
 */
export class RecordService {
  private generation = 0;
  private readonly versions = new RecordVersions();
  /** Per record id, the end of its afterSave hooks started so far. */
  private readonly afterSaveChains = new Map<string, Promise<void>>();
  private readonly tables: ReadCache<Map<string, RecordTable>>;
  private readonly hooks: ReadCache<Map<string, SaveHooks>>;
  private readonly rules: ReadCache<Map<string, TableAccessRules>>;

  constructor(
    private readonly ctx: PlatformContext,
    private readonly dependencies: () => RecordServiceDependencies,
  ) {
    ctx.changes.on('config', () => {
      this.generation += 1;
    });
    this.tables = new ReadCache(ctx.changes, { topics: ['config'], maxEntries: 1 });
    this.hooks = new ReadCache(ctx.changes, { topics: ['config'], maxEntries: 1 });
    this.rules = new ReadCache(ctx.changes, { topics: ['config'], maxEntries: 1 });
  }

  /** A page of records: `filter` and `sort` as in record-query.ts, `limit` 50 by default, at most 500. */
  async list(principal: Principal, tableName: string, input: RecordQueryInput = {}, db: Db = this.ctx.db): Promise<RecordPage> {
    const { items, total } = await this.page(principal, tableName, input, db);
    return { items, total: await total() };
  }

  /**
   * The records of a page, and how to count all that match the filter: a second statement, a scan
   * of the table, made only when `total` is called (GraphQL calls it when `total` is selected).
   */
  async page(principal: Principal, tableName: string, input: RecordQueryInput = {}, db: Db = this.ctx.db): Promise<{ items: RecordOutput[]; total: () => Promise<number> }> {
    requireRecordAccess(principal);
    const query = parseInput(recordQueryInput, input ?? {});
    const table = await this.table(db, tableName);
    const scope = await this.scope(principal, table, 'read');
    const where = within(filterCondition(table, query.filter, { hidden: scope.hidden }), scope);
    const order = orderBy(table, query.sort, scope.hidden);
    const from = sql.table(table.sqlName);
    const rows = await sql<Record<string, unknown>>`select ${selectList(table)} from ${from} where ${where} order by ${order} limit ${query.limit} offset ${query.offset}`.execute(db);
    const total = async () => (await sql<{ total: number }>`select count(*)::int as total from ${from} where ${where}`.execute(db)).rows[0]?.total ?? 0;
    return { items: rows.rows.map((row) => withoutHidden(toRecordOutput(table, row), scope.hidden)), total };
  }

  /** One record, or null when no record has this `_id`. */
  async get(principal: Principal, tableName: string, recordId: string, db: Db = this.ctx.db): Promise<RecordOutput | null> {
    requireRecordAccess(principal);
    const id = parseInput(idSchema, recordId);
    const table = await this.table(db, tableName);
    const scope = await this.scope(principal, table, 'read');
    const row = await selectRecord(db, table, id, false, scope);
    return row ? withoutHidden(row, scope.hidden) : null;
  }

  /**
   * Creates a record with a new `_id`, authored by the principal's user. Throws BAD_INPUT naming
   * the field (type, required, unknown field, unknown referenced id, or a beforeSave hook's
   * rejection), CONFLICT naming a unique field, NOT_FOUND for an unknown table.
   */
  create(principal: Principal, tableName: string, data: unknown, mode: WriteMode = {}): Promise<RecordOutput> {
    return this.createRecord(principal, tableName, data, { runHooks: true, scratch: mode.scratch });
  }

  /** Changes the given fields of a record (a partial update); `null` clears an optional field. */
  update(principal: Principal, tableName: string, recordId: string, data: unknown, mode: WriteMode = {}): Promise<RecordOutput> {
    return this.updateRecord(principal, tableName, recordId, data, { runHooks: true, scratch: mode.scratch });
  }

  /** Deletes a record; CONFLICT while another record's reference field points at it. */
  async delete(principal: Principal, tableName: string, recordId: string, { db = this.ctx.db, scratch }: WriteMode & { db?: Db } = {}): Promise<boolean> {
    requireRecordAccess(principal);
    const id = parseInput(idSchema, recordId);
    const table = await this.table(db, tableName);
    const scope = await this.scope(principal, table, 'delete');
    const remove = (executor: Db) => sql<{ _id: string }>`delete from ${sql.table(table.sqlName)} where ${within(sql`_id = ${id}`, scope)} returning _id`.execute(executor);
    const result = scratch ? await rolledBack(db, remove) : await remove(db);
    if (!result.rows.length) throw await this.unreachable(principal, db, table, id, 'delete');
    return true;
  }

  /**
   * The `db` capability handed to hook code. Its writes run no hooks (a hook cannot trigger
   * itself or another hook) and, given `db`, join that transaction.
   */
  hookDb(author: Principal, db: Db = this.ctx.db): HookDb {
    // Hook code is the application's own: its `db` reaches every record, whoever the author is.
    const principal: Principal = author.dataRoles?.length ? { ...author, dataRoles: [] } : author;
    return {
      find: (table, filter, options) => this.list(principal, table, { ...(isPlainObject(options) ? options : {}), filter } as RecordQueryInput, db),
      get: (table, id) => this.get(principal, table, id, db),
      create: (table, data) => this.createRecord(principal, table, data, { db, runHooks: false }),
      update: (table, id, data) => this.updateRecord(principal, table, id, data, { db, runHooks: false }),
      delete: (table, id) => this.delete(principal, table, id, { db }),
    };
  }

  private async createRecord(principal: Principal, tableName: string, data: unknown, options: WriteOptions): Promise<RecordOutput> {
    requireRecordAccess(principal);
    const table = await this.table(options.db ?? this.ctx.db, tableName);
    const scope = await this.scope(principal, table, 'create');
    const values = validateRecordData(table, data, 'create');
    assertWritable(values, scope);
    const hooks = options.runHooks ? await this.saveContext(principal, table.id) : NO_HOOKS;
    const atomic = hooks.beforeSaveWrites || hasReferences(table, values);
    const generation = this.generation;
    const created = await this.inTransaction(options, atomic, async (trx) => {
      const id = newId();
      const final = await this.beforeSave(principal, table, hooks, { _id: id, ...values }, trx);
      await assertReferencesExist(trx, table, final);
      return insertRecord(trx, table, id, final, principal.userId, scope);
    });
    if (options.scratch) return withoutHidden(created.record, scope.hidden);
    if (updatesUnlocked(table, hooks)) this.versions.set(generation, table.id, created);
    this.afterSave(principal, hooks, created.record);
    return withoutHidden(created.record, scope.hidden);
  }

  private async updateRecord(
    principal: Principal,
    tableName: string,
    recordId: string,
    data: unknown,
    options: WriteOptions,
  ): Promise<RecordOutput> {
    requireRecordAccess(principal);
    const id = parseInput(idSchema, recordId);
    const executor = options.db ?? this.ctx.db;
    const table = await this.table(executor, tableName);
    const scope = await this.scope(principal, table, 'update');
    const changes = validateRecordData(table, data, 'update');
    assertWritable(changes, scope);
    const hooks = options.runHooks ? await this.saveContext(principal, table.id) : NO_HOOKS;
    if (!options.scratch && updatesUnlocked(table, hooks)) {
      const record = await this.updateUnlocked(principal, table, id, changes, hooks, scope);
      this.afterSave(principal, hooks, record);
      return withoutHidden(record, scope.hidden);
    }
    const atomic = hooks.beforeSave.length > 0 || hasReferences(table, changes);
    const record = await this.inTransaction(options, atomic, async (trx) => {
      let final = changes;
      if (hooks.beforeSave.length) {
        const existing = await selectRecord(trx, table, id, true, scope);
        if (!existing) throw await this.unreachable(principal, trx, table, id, 'update');
        final = await this.beforeSave(principal, table, hooks, { _id: id, ...fieldValues(table, existing), ...changes }, trx);
      }
      await assertReferencesExist(trx, table, final);
      const updated = await updateRecordRow(trx, table, id, final, principal.userId, scope);
      if (!updated) throw await this.unreachable(principal, trx, table, id, 'update');
      return updated.record;
    });
    if (!options.scratch) this.afterSave(principal, hooks, record);
    return withoutHidden(record, scope.hidden);
  }

  /**
   * An update whose beforeSave hooks cannot write (their code never names `db`) on a table without
   * references: the hooks run on the record with no transaction open, and the UPDATE applies only
   * if the row is still the version they saw (`xmin`). The record is the one this process last
   * wrote when it remembers it (RecordVersions), else it is read. When another write changed it
   * meanwhile, it is read again and the hooks run again; CONFLICT after 3 reads. One or two
   * statements instead of a transaction of four that holds a connection while the hooks run.
   */
  private async updateUnlocked(
    principal: Principal,
    table: RecordTable,
    id: string,
    changes: RecordValues,
    hooks: SaveContext,
    scope: RecordScope,
  ): Promise<RecordOutput> {
    const { db } = this.ctx;
    const generation = this.generation;
    // A remembered record may lie outside a bounded caller's rules: such a caller reads it anew.
    let remembered = scope.where ? undefined : this.versions.get(generation, table.id, id);
    for (let attempt = 1; ; ) {
      const existing = remembered ?? (await selectRecordVersion(db, table, id, scope));
      if (!existing) throw await this.unreachable(principal, db, table, id, 'update');
      const final = await this.beforeSave(principal, table, hooks, { _id: id, ...fieldValues(table, existing.record), ...changes }, db);
      const updated = await updateRecordRow(db, table, id, final, principal.userId, scope, existing.version);
      if (updated) {
        this.versions.set(generation, table.id, updated);
        return updated.record;
      }
      this.versions.delete(table.id, id);
      if (remembered) remembered = undefined;
      else if (++attempt > UNLOCKED_UPDATE_ATTEMPTS) throw conflict(`${table.name} '${id}' kept changing during the save; try again`);
    }
  }

  /**
   * Runs a write's statements in one transaction (joining `db` when it is one). A write of one
   * statement (no beforeSave hook, no reference to check) needs none: the statement is atomic.
   * A scratch write always has one, rolled back at the end.
   */
  private inTransaction<T>({ db, scratch }: WriteOptions, atomic: boolean, work: (trx: Db) => Promise<T>): Promise<T> {
    const executor = db ?? this.ctx.db;
    if (scratch) return rolledBack(executor, work);
    if (!atomic || executor.isTransaction) return work(executor);
    return executor.transaction().execute(work);
  }

  /**
   * Runs the table's beforeSave hooks in name order, each on the previous one's instance, and
   * checks what the last one leaves. A hook that throws rejects the save with its message.
   */
  private async beforeSave(
    principal: Principal,
    table: RecordTable,
    hooks: SaveContext,
    instance: Record<string, unknown>,
    trx: Db,
  ): Promise<RecordValues> {
    const { _id, ...values } = instance;
    if (!hooks.beforeSave.length) return values;
    const runtime = this.dependencies().hookRuntime;
    const db = hooks.beforeSaveWrites ? this.hookDb(principal, trx) : undefined;
    let current: Record<string, unknown> = instance;
    for (const hook of hooks.beforeSave) {
      const result = await runtime.run({ hook, trigger: 'beforeSave', instance: current, user: hooks.user, db, requestId: principal.requestId });
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
  private afterSave(principal: Principal, hooks: SaveContext, record: RecordOutput): void {
    if (!hooks.afterSave.length) return;
    const runtime = this.dependencies().hookRuntime;
    const db = this.hookDb(principal);
    const key = String(record._id);
    const previous = this.afterSaveChains.get(key) ?? Promise.resolve();
    const chain = previous
      .then(async () => {
        for (const hook of hooks.afterSave) {
          await runtime.run({ hook, trigger: 'afterSave', instance: { ...record }, user: hooks.user, db, requestId: principal.requestId });
        }
      })
      .catch((error: unknown) => this.ctx.logger.error({ err: error }, 'afterSave hooks failed'))
      .finally(() => {
        if (this.afterSaveChains.get(key) === chain) this.afterSaveChains.delete(key);
      });
    this.afterSaveChains.set(key, chain);
  }

  /**
   * The table's save hooks and, when there are any, the author as hooks see it, with the runtime
   * prepared: all read before the write's transaction opens (on the embedded database a read
   * outside the transaction would wait for it).
   */
  private async saveContext(principal: Principal, tableId: string): Promise<SaveContext> {
    const hooks = await this.saveHooks(tableId);
    if (!hooks.beforeSave.length && !hooks.afterSave.length) return NO_HOOKS;
    if (hooks.beforeSave.length) await this.dependencies().hookRuntime.prepare();
    return { ...hooks, user: await this.author(principal) };
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
    return user ? { ...user, ...via } : null;
  }

  /** What `action` reaches of `table` for the principal (D32); FORBIDDEN when a rule it needs is NONE. */
  private async scope(principal: Principal, table: RecordTable, action: AccessAction): Promise<RecordScope> {
    if (!principal.dataRoles?.length) return recordScope(principal, table, action, () => NO_ACCESS);
    const rules = await this.rules.load('all', () => loadAccessRules(this.ctx.db));
    return recordScope(principal, table, action, (tableId, roleId) => rules.get(`${tableId}:${roleId}`) ?? NO_ACCESS);
  }

  /**
   * Why an update or delete reached no record: NOT_FOUND when the caller cannot see one with this
   * `_id` (it does not exist for them), FORBIDDEN when they see it but it is outside the action's rule.
   */
  private async unreachable(principal: Principal, db: Db, table: RecordTable, id: string, action: AccessAction): Promise<TrellisError> {
    if (!principal.dataRoles?.length) return notFound(table.name, id);
    const read = await this.scope(principal, table, 'read');
    if (!(await selectRecord(db, table, id, false, read))) return notFound(table.name, id);
    return forbidden(`${table.name} '${id}' is outside what your role may ${action}`, { table: table.name, action });
  }

  /** The table by `_id` or name (case-insensitive), from a cache of every table kept until the next configuration change. */
  private async table(db: Db, nameOrId: string): Promise<RecordTable> {
    const key = parseInput(idSchema, nameOrId);
    const index = await this.tables.load('all', () => loadTableIndex(db));
    const table = index.get(key) ?? index.get(key.toLowerCase());
    if (!table) throw notFound('Table', key);
    return table;
  }

  /** The save hooks of a table, from a cache kept until the next configuration change. */
  private async saveHooks(tableId: string): Promise<SaveHooks> {
    return (await this.hooks.load('all', () => loadSaveHooks(this.dependencies().hooks))).get(tableId) ?? NO_HOOKS;
  }

}

/** Every application table with its fields, oldest first. Internal: no permission check. */
export async function loadRecordTables(db: Db): Promise<RecordTable[]> {
  const [tables, fields] = await Promise.all([
    db.selectFrom('app_tables').select(['id', 'name', 'sql_name']).orderBy('created_at').orderBy('id').execute(),
    db
      .selectFrom('app_fields')
      .select(['table_id', 'name', 'type', 'required', 'unique', 'reference_table_id'])
      .orderBy('table_id')
      .orderBy('position')
      .execute(),
  ]);
  const targets = new Map(tables.map((t) => [t.id, { id: t.id, name: t.name, sqlName: t.sql_name }]));
  return tables.map((table) => {
    const tableFields: RecordField[] = fields
      .filter((field) => field.table_id === table.id)
      .map((field) => ({
        name: field.name,
        type: field.type as FieldType,
        required: field.required,
        unique: field.unique,
        reference: field.reference_table_id ? (targets.get(field.reference_table_id) ?? null) : null,
      }));
    return {
      id: table.id,
      name: table.name,
      sqlName: table.sql_name,
      fields: tableFields,
      fieldsByName: new Map(tableFields.map((field) => [field.name, field])),
    };
  });
}

async function loadTableIndex(db: Db): Promise<Map<string, RecordTable>> {
  const index = new Map<string, RecordTable>();
  for (const table of await loadRecordTables(db)) {
    index.set(table.id, table);
    index.set(table.name.toLowerCase(), table);
  }
  return index;
}

async function loadSaveHooks(hooks: HookService): Promise<Map<string, SaveHooks>> {
  const byTable = new Map<string, SaveHooks>();
  for (const hook of await hooks.listHooks(systemPrincipal())) {
    if (!hook.tableId || (hook.type !== 'beforeSave' && hook.type !== 'afterSave')) continue;
    const entry = byTable.get(hook.tableId) ?? { beforeSave: [], afterSave: [], beforeSaveWrites: false };
    entry[hook.type].push(hook);
    if (hook.type === 'beforeSave') entry.beforeSaveWrites ||= namesCapability(hook.content, 'db');
    byTable.set(hook.tableId, entry);
  }
  return byTable;
}

/** Every role's rules on every table, by `tableId:roleId`. */
async function loadAccessRules(db: Db): Promise<Map<string, TableAccessRules>> {
  const rows = await db.selectFrom('table_access').select(['table_id', 'role_id', 'rules']).execute();
  return new Map(rows.map((row) => [`${row.table_id}:${row.role_id}`, storedRules(row.rules)]));
}

/** A condition within a scope's `where`. */
function within(condition: RawBuilder<unknown>, scope: RecordScope): RawBuilder<unknown> {
  return scope.where ? sql`${condition} and ${scope.where}` : condition;
}

/** The RETURNING item that aborts the statement when the written row is outside the scope's check (WITH CHECK). */
function checkReturned(scope: RecordScope, action: AccessAction): RawBuilder<unknown> {
  return scope.check ? sql`, trellis_access_check(${scope.check}, ${action}) as _checked` : sql``;
}

/** Records are the application's data: any signed-in user, integration or the system; never an MCP key. */
function requireRecordAccess(principal: Principal): void {
  if (principal.source === 'mcp') throw forbidden("MCP keys configure the application; they cannot read or write the records of its tables");
  if (principal.kind === 'user' && !principal.userId) throw forbidden('Records need a signed-in user or an integration token');
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
    throw badInput(`beforeSave hook '${hook.name}' left an invalid record: ${error.message}`, { ...error.details, hook: hook.name });
  }
}

/** The record and its row version (`xmin`, changed by every write of the row). */
async function selectRecordVersion(db: Db, table: RecordTable, id: string, scope: RecordScope): Promise<RecordVersion | undefined> {
  const result = await sql<Record<string, unknown>>`select ${selectList(table)}, xmin::text as _version from ${sql.table(table.sqlName)} where ${within(sql`_id = ${id}`, scope)}`.execute(db);
  return versioned(table, result.rows[0]);
}

function versioned(table: RecordTable, row: Record<string, unknown> | undefined): RecordVersion | undefined {
  return row ? { record: toRecordOutput(table, row), version: String(row._version) } : undefined;
}

async function selectRecord(db: Db, table: RecordTable, id: string, lock: boolean, scope: RecordScope): Promise<RecordOutput | undefined> {
  const forUpdate = lock ? sql` for update` : sql``;
  const result = await sql<Record<string, unknown>>`select ${selectList(table)} from ${sql.table(table.sqlName)} where ${within(sql`_id = ${id}`, scope)}${forUpdate}`.execute(db);
  const row = result.rows[0];
  return row ? toRecordOutput(table, row) : undefined;
}

async function insertRecord(trx: Db, table: RecordTable, id: string, values: RecordValues, author: string | null, scope: RecordScope): Promise<RecordVersion> {
  const fields = table.fields.filter((field) => field.name in values);
  const columns = sql.join([sql.ref('_id'), sql.ref('_created_by'), sql.ref('_updated_by'), ...fields.map((f) => sql.ref(f.name))]);
  const params = sql.join([sql`${id}`, sql`${author}`, sql`${author}`, ...fields.map((f) => sqlValue(f.type, values[f.name]))]);
  const result = await writeRow(table, () =>
    sql<Record<string, unknown>>`insert into ${sql.table(table.sqlName)} (${columns}) values (${params}) returning ${selectList(table)}, xmin::text as _version${checkReturned(scope, 'create')}`.execute(trx),
  );
  return versioned(table, result.rows[0])!;
}

async function updateRecordRow(
  trx: Db,
  table: RecordTable,
  id: string,
  values: RecordValues,
  author: string | null,
  scope: RecordScope,
  version?: string,
): Promise<RecordVersion | undefined> {
  const assignments = table.fields
    .filter((field) => field.name in values)
    .map((field) => sql`${sql.ref(field.name)} = ${sqlValue(field.type, values[field.name])}`);
  const set = sql.join([...assignments, sql`_updated_at = now()`, sql`_updated_by = ${author}`]);
  const result = await writeRow(table, () =>
    sql<Record<string, unknown>>`update ${sql.table(table.sqlName)} set ${set} where ${within(sql`_id = ${id}`, scope)}${version === undefined ? sql`` : sql` and xmin = ${version}::xid`} returning ${selectList(table)}, xmin::text as _version${checkReturned(scope, 'update')}`.execute(trx),
  );
  return versioned(table, result.rows[0]);
}

/** Runs an INSERT or UPDATE, turning a unique violation into CONFLICT naming the field. */
async function writeRow<T>(table: RecordTable, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isAccessCheckFailure(error)) {
      throw forbidden(`The ${table.name} record as written would be outside what your role may ${accessCheckAction(error)}`, { table: table.name });
    }
    const field = uniqueViolationField(table, error);
    if (!field) throw error;
    throw conflict(`data.${field.name}: another ${table.name} record already has this ${field.name}`, { field: `data.${field.name}` });
  }
}

const ACCESS_CHECK_FAILURE = /^trellis access check: (create|update) outside the rule/;

function isAccessCheckFailure(error: unknown): boolean {
  const pg = error as { code?: unknown; message?: unknown };
  return pg?.code === '42501' && typeof pg.message === 'string' && ACCESS_CHECK_FAILURE.test(pg.message);
}

function accessCheckAction(error: unknown): string {
  return ACCESS_CHECK_FAILURE.exec((error as { message: string }).message)?.[1] ?? 'write';
}

function uniqueViolationField(table: RecordTable, error: unknown): RecordField | undefined {
  const pg = error as { code?: unknown; detail?: unknown; constraint?: unknown };
  if (pg?.code !== '23505') return undefined;
  const column = typeof pg.detail === 'string' ? /^Key \("?(.+?)"?\)=/.exec(pg.detail)?.[1] : undefined;
  const constraint = typeof pg.constraint === 'string' ? pg.constraint : '';
  return table.fields.find((field) => field.unique && (field.name === column || constraint.endsWith(`_${field.name}_key`)));
}

/** Runs `work` in a transaction of its own and rolls it back: its result, nothing stored. */
async function rolledBack<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  let result: { value: T } | undefined;
  try {
    await db.transaction().execute(async (trx) => {
      result = { value: await work(trx) };
      throw SCRATCH_ROLLBACK;
    });
  } catch (error) {
    if (error !== SCRATCH_ROLLBACK || !result) throw error;
  }
  return result!.value;
}

/** Whether updates of `table` run its beforeSave hooks without a transaction (RecordService.updateUnlocked). */
function updatesUnlocked(table: RecordTable, hooks: SaveHooks): boolean {
  return hooks.beforeSave.length > 0 && !hooks.beforeSaveWrites && !table.fields.some((field) => field.reference);
}

function hasReferences(table: RecordTable, values: RecordValues): boolean {
  return table.fields.some((field) => field.reference && values[field.name] !== null && values[field.name] !== undefined);
}

/** Checks, inside the write's transaction, that every referenced `_id` exists (and keeps it until commit). */
async function assertReferencesExist(trx: Db, table: RecordTable, values: RecordValues): Promise<void> {
  const issues: RecordIssue[] = [];
  for (const field of table.fields) {
    const value = values[field.name];
    if (!field.reference || value === null || value === undefined) continue;
    const ids = [...new Set(field.type === 'multi-reference' ? (value as string[]) : [value as string])];
    if (!ids.length) continue;
    const found = await sql<{ _id: string }>`select _id from ${sql.table(field.reference.sqlName)} where _id = any(cast(${ids} as text[])) for key share`.execute(trx);
    const existing = new Set(found.rows.map((row) => row._id));
    const missing = ids.filter((id) => !existing.has(id));
    if (missing.length) {
      const list = missing.map((id) => `'${id}'`).join(', ');
      issues.push({ field: `data.${field.name}`, message: `no ${field.reference.name} record has _id ${list}` });
    }
  }
  if (issues.length) throw recordInputError(issues);
}
