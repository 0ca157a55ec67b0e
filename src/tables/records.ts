import { sql } from 'kysely';
import type { Principal } from '../access/permissions.js';
import type { HookDb } from '../hooks/run-contract.js';
import type { PlatformContext } from '../platform/context.js';
import { newId } from '../platform/crypto.js';
import type { Db } from '../platform/db/index.js';
import { TrellisError, conflict, forbidden, notFound } from '../platform/errors.js';
import { ReadCache, ReadValue } from '../platform/read-cache.js';
import { idSchema, parseInput } from '../platform/validation.js';
import { assertWritable, recordScope, withoutHidden, type RecordScope } from './access-rules.js';
import { NO_ACCESS, type AccessAction, type TableAccessRules } from './access-schema.js';
import { fieldValues, filterCondition, orderBy, selectList, toRecordOutput } from './record-query.js';
import { isPlainObject, recordQueryInput, validateRecordData, type RecordOutput, type RecordPage, type RecordQueryInput, type RecordTable, type RecordValues } from './record-schema.js';
import {
  assertReferencesExist,
  insertRecord,
  loadAccessRules,
  loadTableIndex,
  rolledBack,
  selectRecord,
  selectRecordVersion,
  updateRecordRow,
  within,
} from './record-sql.js';
import { RECORD_VERSIONS_MAX, versionKey, type RecordVersion } from './record-versions.js';
import {
  hasReferences,
  inTransaction,
  NO_HOOKS,
  SavePipeline,
  updatesUnlocked,
  type SaveContext,
  type SaveHooks,
} from './save-pipeline.js';
import { withFields } from '../platform/objects.js';

// src/graphql/schema-provider.ts reads the tables from here.
export { loadRecordTables } from './record-sql.js';

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
  /** The records this process wrote last, with their row versions (see `updateUnlocked`); forgotten at any configuration change. */
  private readonly versions: ReadCache<RecordVersion>;
  private readonly tables: ReadValue<Map<string, RecordTable>>;
  private readonly saves: SavePipeline;
  private readonly rules: ReadValue<Map<string, TableAccessRules>>;

  /** @param saveHooks the hooks and the runner of save hooks (services.ts builds it from HookService and HookRuntime). */
  constructor(
    private readonly ctx: PlatformContext,
    saveHooks: SaveHooks,
  ) {
    this.versions = new ReadCache(ctx.changes, { topics: ['config'], maxEntries: RECORD_VERSIONS_MAX, ttlMs: Number.POSITIVE_INFINITY });
    this.tables = new ReadValue(ctx.changes, { topics: ['config'] });
    this.saves = new SavePipeline(ctx, saveHooks, (principal, db) => this.hookDb(principal, db));
    this.rules = new ReadValue(ctx.changes, { topics: ['config'] });
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
   * The `db` capability handed to hook code: a HookDb (hooks/run-contract.ts) whose results keep
   * the record layer's types. Its writes run no hooks (a hook cannot trigger itself or another
   * hook) and, given `db`, join that transaction.
   */
  hookDb(author: Principal, db: Db = this.ctx.db) {
    // Hook code is the application's own: its `db` reaches every record, whoever the author is.
    const principal: Principal = author.dataRoles?.length ? withFields(author, { dataRoles: [] }) : author;
    return {
      find: (table, filter, options) => this.list(principal, table, withFields(isPlainObject(options) ? options : {}, { filter }) as RecordQueryInput, db),
      get: (table, id) => this.get(principal, table, id, db),
      create: (table, data) => this.createRecord(principal, table, data, { db, runHooks: false }),
      update: (table, id, data) => this.updateRecord(principal, table, id, data, { db, runHooks: false }),
      delete: (table, id) => this.delete(principal, table, id, { db }),
    } satisfies HookDb;
  }

  private async createRecord(principal: Principal, tableName: string, data: unknown, options: WriteOptions): Promise<RecordOutput> {
    requireRecordAccess(principal);
    const table = await this.table(options.db ?? this.ctx.db, tableName);
    const scope = await this.scope(principal, table, 'create');
    const values = validateRecordData(table, data, 'create');
    assertWritable(values, scope);
    const hooks = options.runHooks ? await this.saves.context(principal, table.id) : NO_HOOKS;
    const atomic = hooks.beforeSaveWrites || hasReferences(table, values);
    const generation = this.versions.generation();
    const created = await inTransaction(options.db ?? this.ctx.db, options.scratch, atomic, async (trx) => {
      const id = newId();
      const final = await this.saves.beforeSave(principal, table, hooks, { _id: id, ...values }, trx);
      await assertReferencesExist(trx, table, final);
      return insertRecord(trx, table, id, final, principal.userId, scope);
    });
    if (options.scratch) return withoutHidden(created.record, scope.hidden);
    if (updatesUnlocked(table, hooks)) this.versions.set(versionKey(table.id, created.record._id), created, generation);
    this.saves.afterSave(principal, hooks, created.record);
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
    const hooks = options.runHooks ? await this.saves.context(principal, table.id) : NO_HOOKS;
    if (!options.scratch && updatesUnlocked(table, hooks)) {
      const record = await this.updateUnlocked(principal, table, id, changes, hooks, scope);
      this.saves.afterSave(principal, hooks, record);
      return withoutHidden(record, scope.hidden);
    }
    const atomic = hooks.beforeSave.length > 0 || hasReferences(table, changes);
    const record = await inTransaction(executor, options.scratch, atomic, async (trx) => {
      let final = changes;
      if (hooks.beforeSave.length) {
        const existing = await selectRecord(trx, table, id, true, scope);
        if (!existing) throw await this.unreachable(principal, trx, table, id, 'update');
        final = await this.saves.beforeSave(principal, table, hooks, Object.assign({ _id: id }, fieldValues(table, existing), changes), trx);
      }
      await assertReferencesExist(trx, table, final);
      const updated = await updateRecordRow(trx, table, id, final, principal.userId, scope);
      if (!updated) throw await this.unreachable(principal, trx, table, id, 'update');
      return updated.record;
    });
    if (!options.scratch) this.saves.afterSave(principal, hooks, record);
    return withoutHidden(record, scope.hidden);
  }

  /**
   * An update whose beforeSave hooks cannot write (their code never names `db`) on a table without
   * references: the hooks run on the record with no transaction open, and the UPDATE applies only
   * if the row is still the version they saw (`xmin`). The record is the one this process last
   * wrote when it remembers it (`versions`), else it is read. When another write changed it
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
    const generation = this.versions.generation();
    // A remembered record may lie outside a bounded caller's rules: such a caller reads it anew.
    let remembered = scope.where ? undefined : this.versions.get(versionKey(table.id, id));
    for (let attempt = 1; ; ) {
      const existing = remembered ?? (await selectRecordVersion(db, table, id, scope));
      if (!existing) throw await this.unreachable(principal, db, table, id, 'update');
      const final = await this.saves.beforeSave(principal, table, hooks, Object.assign({ _id: id }, fieldValues(table, existing.record), changes), db);
      const updated = await updateRecordRow(db, table, id, final, principal.userId, scope, existing.version);
      if (updated) {
        this.versions.set(versionKey(table.id, id), updated, generation);
        return updated.record;
      }
      this.versions.delete(versionKey(table.id, id));
      if (remembered) remembered = undefined;
      else if (++attempt > UNLOCKED_UPDATE_ATTEMPTS) throw conflict(`${table.name} '${id}' kept changing during the save; try again`);
    }
  }

  /** What `action` reaches of `table` for the principal (D32); FORBIDDEN when a rule it needs is NONE. */
  private async scope(principal: Principal, table: RecordTable, action: AccessAction): Promise<RecordScope> {
    if (!principal.dataRoles?.length) return recordScope(principal, table, action, () => NO_ACCESS);
    const rules = await this.rules.load(() => loadAccessRules(this.ctx.db));
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
    const index = await this.tables.load(() => loadTableIndex(db));
    const table = index.get(key) ?? index.get(key.toLowerCase());
    if (!table) throw notFound('Table', key);
    return table;
  }
}

/** Records are the application's data: any signed-in user, integration or the system; never an MCP key. */
function requireRecordAccess(principal: Principal): void {
  if (principal.source === 'mcp') throw forbidden("MCP keys configure the application; they cannot read or write the records of its tables");
  if (principal.kind === 'user' && !principal.userId) throw forbidden('Records need a signed-in user or an integration token');
}
