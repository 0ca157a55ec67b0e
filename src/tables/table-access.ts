import type { Principal } from '../access/permissions.js';
import { rolePermissions } from '../access/permissions.js';
import { recordAudit } from '../audit/writer.js';
import type { Db } from '../platform/db/index.js';
import { badInput, conflict } from '../platform/errors.js';
import { resolveNamedRecord } from '../platform/references.js';
import { assertRulesFitTable, storedRules } from './access-rules.js';
import { ACCESS_ACTIONS, FULL_ACCESS, NO_ACCESS, type AccessAction, type AccessLevel, type DataGrant, type DataGrantReport, type DataNeed, type ParsedRoleTableAccess, type TableAccessRules } from './access-schema.js';
import { isPlainObject } from './record-schema.js';
import { loadRecordTables } from './record-sql.js';

/** One non-admin role's rules on a table, as builder GraphQL and MCP show them. */
export interface TableAccess extends TableAccessRules {
  roleId: string;
  roleName: string;
}

interface RoleRow {
  id: string;
  name: string;
  permissions: string[];
}

async function nonAdminRoles(db: Db): Promise<RoleRow[]> {
  const roles = await db.selectFrom('roles').select(['id', 'name', 'permissions']).orderBy('created_at').orderBy('name').execute();
  return roles.filter((role) => !rolePermissions(role.permissions).has('admin'));
}

/**
 * Every non-admin role's rules on each of `tableIds` (NONE where none are written), by table id.
 * Admin roles are not listed: they always reach every record.
 */
export async function loadTableAccess(db: Db, tableIds: readonly string[]): Promise<Map<string, TableAccess[]>> {
  const result = new Map<string, TableAccess[]>(tableIds.map((id) => [id, []]));
  if (!tableIds.length) return result;
  const [roles, rows] = await Promise.all([
    nonAdminRoles(db),
    db.selectFrom('table_access').select(['table_id', 'role_id', 'rules']).where('table_id', 'in', tableIds).execute(),
  ]);
  const written = new Map(rows.map((row) => [`${row.table_id}:${row.role_id}`, storedRules(row.rules)]));
  for (const tableId of tableIds) {
    result.set(
      tableId,
      roles.map((role) => ({ roleId: role.id, roleName: role.name, ...(written.get(`${tableId}:${role.id}`) ?? NO_ACCESS) })),
    );
  }
  return result;
}

/**
 * Writes roles' rules on a table, each checked against the table's fields, and audits each change
 * in the caller's transaction. An admin role is refused: admins always have ALL.
 *
 * @throws BAD_INPUT naming the entry (`access.0.read.filter.amount: ...`), NOT_FOUND for an unknown role.
 */
export async function writeTableAccess(
  trx: Db,
  principal: Principal,
  tableId: string,
  entries: readonly ParsedRoleTableAccess[],
  pathOf: (index: number) => string = (index) => `access.${index}`,
): Promise<TableAccess[]> {
  const table = (await loadRecordTables(trx)).find((candidate) => candidate.id === tableId)!;
  const written: TableAccess[] = [];
  for (const [index, entry] of entries.entries()) {
    const { roleId: roleRef, ...rules } = entry;
    const path = pathOf(index);
    const role = await roleRow(trx, roleRef);
    if (rolePermissions(role.permissions).has('admin')) {
      throw badInput(`${path === 'access' ? 'roleId' : `${path}.roleId`}: '${role.name}' is an admin role; admins always reach every record`, { field: `${path}.roleId` });
    }
    assertRulesFitTable(table, rules, path);
    await upsertRules(trx, table.id, role.id, rules);
    await recordAudit(trx, principal, {
      action: 'table.access.set',
      resourceType: 'table',
      resourceId: table.id,
      details: { name: table.name, roleId: role.id, role: role.name, ...levels(rules), hiddenFields: rules.hiddenFields, readOnlyFields: rules.readOnlyFields },
    });
    written.push({ roleId: role.id, roleName: role.name, ...rules });
  }
  return written;
}

/** A new table's first rules: ALL for the creator's role when it is not an admin role (others start at NONE). */
export async function writeCreatorAccess(trx: Db, principal: Principal, tableId: string): Promise<void> {
  if (!principal.userId) return;
  const creator = await trx
    .selectFrom('users as u')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .select(['r.id', 'r.permissions'])
    .where('u.id', '=', principal.userId)
    .executeTakeFirst();
  if (!creator || rolePermissions(creator.permissions).has('admin')) return;
  await upsertRules(trx, tableId, creator.id, FULL_ACCESS);
}

async function roleRow(trx: Db, ref: string): Promise<RoleRow> {
  const id = await resolveNamedRecord(trx, 'roles', ref);
  return trx.selectFrom('roles').select(['id', 'name', 'permissions']).where('id', '=', id).forShare().executeTakeFirstOrThrow();
}

async function upsertRules(trx: Db, tableId: string, roleId: string, rules: TableAccessRules): Promise<void> {
  const value = JSON.stringify(rules);
  await trx
    .insertInto('table_access')
    .values({ table_id: tableId, role_id: roleId, rules: value, updated_at: new Date() })
    .onConflict((oc) => oc.columns(['table_id', 'role_id']).doUpdateSet({ rules: value, updated_at: new Date() }))
    .execute();
}

function levels(rules: TableAccessRules): Record<string, AccessLevel> {
  return { read: rules.read.level, create: rules.create.level, update: rules.update.level, delete: rules.delete.level };
}

/**
 * Gives each non-admin role among `roleIds` what `needs` asks of it (D32): ALL where its rule is
 * NONE, never widening a rule already set (OWN and FILTER are reported as left narrower). Audited
 * like any change of rules, in the caller's transaction.
 */
export async function grantNeededAccess(trx: Db, principal: Principal, roleIds: readonly string[], needs: readonly DataNeed[]): Promise<DataGrantReport> {
  const report: DataGrantReport = { granted: [], leftNarrower: [] };
  if (!needs.length || !roleIds.length) return report;
  const roles = (await nonAdminRoles(trx)).filter((role) => roleIds.includes(role.id));
  const tables = [...new Map(needs.map((need) => [need.tableId, need.table])).entries()];
  for (const role of roles) {
    for (const [tableId, table] of tables) {
      const current = await currentRules(trx, tableId, role.id);
      const next: TableAccessRules = { ...current };
      const granted: DataGrant[] = [];
      for (const need of needs.filter((candidate) => candidate.tableId === tableId)) {
        const level = current[need.action].level;
        const entry = { roleId: role.id, role: role.name, table, action: need.action };
        if (level === 'NONE') {
          next[need.action] = { level: 'ALL' };
          granted.push({ ...entry, level: 'ALL' });
        } else if (level !== 'ALL') {
          report.leftNarrower.push({ ...entry, level });
        }
      }
      if (!granted.length) continue;
      await upsertRules(trx, tableId, role.id, next);
      await recordAudit(trx, principal, {
        action: 'table.access.set',
        resourceType: 'table',
        resourceId: tableId,
        details: { name: table, roleId: role.id, role: role.name, ...levels(next), hiddenFields: next.hiddenFields, readOnlyFields: next.readOnlyFields, reason: 'feature grant' },
      });
      report.granted.push(...granted);
    }
  }
  return report;
}

/** The needs each non-admin role among `roleIds` lacks (its rule is NONE), for warnings. */
export async function missingAccess(db: Db, roleIds: readonly string[], needs: readonly DataNeed[]): Promise<Omit<DataGrant, 'level'>[]> {
  if (!needs.length || !roleIds.length) return [];
  const roles = (await nonAdminRoles(db)).filter((role) => roleIds.includes(role.id));
  const missing: Omit<DataGrant, 'level'>[] = [];
  for (const role of roles) {
    for (const need of needs) {
      const rules = await currentRules(db, need.tableId, role.id);
      if (rules[need.action].level === 'NONE') missing.push({ roleId: role.id, role: role.name, table: need.table, action: need.action });
    }
  }
  return missing;
}

async function currentRules(db: Db, tableId: string, roleId: string): Promise<TableAccessRules> {
  const row = await db.selectFrom('table_access').select('rules').where('table_id', '=', tableId).where('role_id', '=', roleId).executeTakeFirst();
  return row ? storedRules(row.rules) : NO_ACCESS;
}

/** How one role's rules on a table name a field: in its lists, and in the FILTER of which actions. */
export interface FieldInRules {
  roleId: string;
  roleName: string;
  hidden: boolean;
  readOnly: boolean;
  filters: AccessAction[];
}

/** Every role whose rules on the table name `field`. */
export async function fieldInRules(db: Db, tableId: string, field: string): Promise<FieldInRules[]> {
  return (await writtenRules(db, tableId)).flatMap(({ roleId, roleName, rules }) => {
    const found = {
      roleId,
      roleName,
      hidden: rules.hiddenFields.includes(field),
      readOnly: rules.readOnlyFields.includes(field),
      filters: ACCESS_ACTIONS.filter((action) => rules[action].level === 'FILTER' && filterNames(rules[action].filter, field)),
    };
    return found.hidden || found.readOnly || found.filters.length ? [found] : [];
  });
}

/**
 * Follows a field's rename in every role's rules on the table, in the caller's transaction: the
 * hidden and read-only lists and the field names of FILTER conditions. Each changed role is audited.
 */
export async function renameFieldInRules(trx: Db, principal: Principal, table: { id: string; name: string }, from: string, to: string): Promise<void> {
  for (const { roleId, roleName, rules } of await writtenRules(trx, table.id)) {
    const rename = (name: string) => (name === from ? to : name);
    const next: TableAccessRules = {
      ...rules,
      hiddenFields: rules.hiddenFields.map(rename),
      readOnlyFields: rules.readOnlyFields.map(rename),
    };
    for (const action of ACCESS_ACTIONS) {
      const rule = rules[action];
      if (rule.level === 'FILTER') next[action] = { level: 'FILTER', filter: renameInFilter(rule.filter, from, to) as Record<string, unknown> };
    }
    if (JSON.stringify(next) === JSON.stringify(rules)) continue;
    await upsertRules(trx, table.id, roleId, next);
    await auditRules(trx, principal, table, { id: roleId, name: roleName }, next, `field '${from}' renamed to '${to}'`);
  }
}

/**
 * Takes a deleted field out of every role's hidden and read-only lists, in the caller's
 * transaction (audited). A FILTER that names it cannot be kept without changing what it matches.
 *
 * @throws CONFLICT naming the role and the action while a rule's filter names the field.
 */
export async function removeFieldFromRules(trx: Db, principal: Principal, table: { id: string; name: string }, field: string): Promise<void> {
  const uses = await fieldInRules(trx, table.id, field);
  const filtering = uses.find((use) => use.filters.length);
  if (filtering) {
    throw conflict(`The ${filtering.filters[0]} rule of role '${filtering.roleName}' on '${table.name}' filters on '${field}': change that rule first`, {
      field: 'field',
      role: filtering.roleName,
      action: filtering.filters[0],
    });
  }
  for (const { roleId, roleName, rules } of await writtenRules(trx, table.id)) {
    if (!rules.hiddenFields.includes(field) && !rules.readOnlyFields.includes(field)) continue;
    const next = { ...rules, hiddenFields: rules.hiddenFields.filter((name) => name !== field), readOnlyFields: rules.readOnlyFields.filter((name) => name !== field) };
    await upsertRules(trx, table.id, roleId, next);
    await auditRules(trx, principal, table, { id: roleId, name: roleName }, next, `field '${field}' deleted`);
  }
}

/**
 * After a field changed type: every role's FILTER on the table still fits it (an operator the new
 * type takes, a value of the new type).
 *
 * @throws CONFLICT naming the role, the action and what no longer fits.
 */
export async function assertRulesFitChangedTable(trx: Db, tableId: string): Promise<void> {
  const table = (await loadRecordTables(trx)).find((candidate) => candidate.id === tableId)!;
  for (const { roleName, rules } of await writtenRules(trx, tableId)) {
    try {
      assertRulesFitTable(table, rules, 'rule');
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw conflict(`A data-access rule of role '${roleName}' on '${table.name}' no longer fits the field: ${reason}; change that rule first`, { field: 'type', role: roleName });
    }
  }
}

async function writtenRules(db: Db, tableId: string): Promise<{ roleId: string; roleName: string; rules: TableAccessRules }[]> {
  const rows = await db
    .selectFrom('table_access as a')
    .innerJoin('roles as r', 'r.id', 'a.role_id')
    .select(['a.role_id', 'r.name', 'a.rules'])
    .where('a.table_id', '=', tableId)
    .orderBy('r.name')
    .execute();
  return rows.map((row) => ({ roleId: row.role_id, roleName: row.name, rules: storedRules(row.rules) }));
}

async function auditRules(trx: Db, principal: Principal, table: { id: string; name: string }, role: { id: string; name: string }, rules: TableAccessRules, reason: string): Promise<void> {
  await recordAudit(trx, principal, {
    action: 'table.access.set',
    resourceType: 'table',
    resourceId: table.id,
    details: { name: table.name, roleId: role.id, role: role.name, ...levels(rules), hiddenFields: rules.hiddenFields, readOnlyFields: rules.readOnlyFields, reason },
  });
}

/** A filter's field names are the keys of its objects; `_and` and `_or` hold lists of filters. */
function renameInFilter(filter: unknown, from: string, to: string): unknown {
  if (Array.isArray(filter)) return filter.map((item) => renameInFilter(item, from, to));
  if (!isPlainObject(filter)) return filter;
  return Object.fromEntries(
    Object.entries(filter).map(([key, value]) => (key === '_and' || key === '_or' ? [key, renameInFilter(value, from, to)] : [key === from ? to : key, value])),
  );
}

function filterNames(filter: unknown, field: string): boolean {
  if (Array.isArray(filter)) return filter.some((item) => filterNames(item, field));
  if (!isPlainObject(filter)) return false;
  return Object.entries(filter).some(([key, value]) => (key === '_and' || key === '_or' ? filterNames(value, field) : key === field));
}
