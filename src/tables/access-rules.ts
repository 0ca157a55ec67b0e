import { sql, type RawBuilder } from 'kysely';
import type { DataRole, Principal } from '../access/permissions.js';
import { forbidden } from '../platform/errors.js';
import { ACCESS_ACTIONS, NO_ACCESS, USER_VALUES, type AccessAction, type AccessRule, type TableAccessRules } from './access-schema.js';
import { filterCondition } from './record-query.js';
import { isPlainObject, isSystemField, recordInputError, type RecordIssue, type RecordTable } from './record-schema.js';

/**
 * Data access by role (D32): for each table and non-admin role, a rule per action. Enforced by the
 * record layer as part of its SQL, the way PostgreSQL's row level security does: `read` bounds
 * what exists for the caller, `update` and `delete` reach only records inside both `read` and their
 * own rule, and a created or updated row must satisfy the rule it was written under.
 */
/** Rules as read back from storage, tolerant of a missing list. */
export function storedRules(value: unknown): TableAccessRules {
  const rules = (typeof value === 'string' ? JSON.parse(value) : value) as Partial<TableAccessRules>;
  return {
    read: rules.read ?? NO_ACCESS.read,
    create: rules.create ?? NO_ACCESS.create,
    update: rules.update ?? NO_ACCESS.update,
    delete: rules.delete ?? NO_ACCESS.delete,
    hiddenFields: rules.hiddenFields ?? [],
    readOnlyFields: rules.readOnlyFields ?? [],
  };
}

const SAMPLE_USER: UserValues = { '$user._id': 'sample-user-id', '$user.email': 'sample@example.com', '$user.role': 'sample-role' };

/**
 * Checks rules against the table they are for: field lists name its fields, a FILTER compiles like
 * any filter (with sample `$user` values). Throws BAD_INPUT naming the part, e.g.
 * `access.0.read.filter.amount.gte: must be a number`.
 */
export function assertRulesFitTable(table: RecordTable, rules: TableAccessRules, path: string): void {
  const issues: RecordIssue[] = [];
  for (const list of ['hiddenFields', 'readOnlyFields'] as const) {
    rules[list].forEach((name, index) => {
      if (isSystemField(name)) issues.push({ field: `${path}.${list}.${index}`, message: `'${name}' is a system field; only the table's own fields can be listed` });
      else if (!table.fieldsByName.has(name)) issues.push({ field: `${path}.${list}.${index}`, message: `'${name}' is not a field of table '${table.name}'` });
    });
  }
  if (issues.length) throw recordInputError(issues);
  for (const action of ACCESS_ACTIONS) {
    const rule = rules[action];
    if (rule.level !== 'FILTER') continue;
    const filterPath = `${path}.${action}.filter`;
    const vague = vagueCondition(rule.filter, filterPath);
    if (vague) throw recordInputError([vague]);
    filterCondition(table, substituteUser(rule.filter, SAMPLE_USER).value, { path: filterPath });
  }
}

/**
 * A part of a rule's filter that would match every record: the filter language ignores a null
 * operand and an empty object, which in a query is a convenience and in a rule a silent ALL.
 */
function vagueCondition(filter: unknown, path: string): RecordIssue | undefined {
  if (filter === null || filter === undefined) return { field: path, message: 'is null: a rule needs a condition (isNull: true matches empty values); use level ALL for every record' };
  if (Array.isArray(filter)) {
    if (!filter.length) return { field: path, message: 'is an empty list: it would match every record; use level ALL for that' };
    for (const [index, item] of filter.entries()) {
      const issue = vagueCondition(item, `${path}.${index}`);
      if (issue) return issue;
    }
    return undefined;
  }
  if (!isPlainObject(filter)) return undefined;
  const entries = Object.entries(filter);
  if (!entries.length) return { field: path, message: 'is empty: it would match every record; use level ALL for that' };
  for (const [key, value] of entries) {
    const issue = vagueCondition(value, `${path}.${key}`);
    if (issue) return issue;
  }
  return undefined;
}

type UserValues = Record<(typeof USER_VALUES)[number], string>;

/** The caller's values for `$user.*`, or null when no user is named (an integration without `x-userid`). */
function userValues(principal: Principal): UserValues | null {
  if (!principal.userId) return null;
  return { '$user._id': principal.userId, '$user.email': principal.userEmail ?? '', '$user.role': principal.userRole ?? '' };
}

/** Replaces `$user.*` strings anywhere in a filter; `missing` when one is named and there is no user. */
function substituteUser(value: unknown, user: UserValues | null): { value: unknown; missing: boolean } {
  let missing = false;
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string' && (USER_VALUES as readonly string[]).includes(node)) {
      if (!user) missing = true;
      return user ? user[node as keyof UserValues] : node;
    }
    if (Array.isArray(node)) return node.map(walk);
    if (isPlainObject(node)) return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, walk(item)]));
    return node;
  };
  const result = walk(value);
  return { value: result, missing };
}

/** What one action may reach of a table's records for a principal; `where` and `check` null: every record. */
export interface RecordScope {
  /** Records the action reaches (read's rule, and the action's own for update and delete). */
  where: RawBuilder<unknown> | null;
  /** What a written row must satisfy (create and update). */
  check: RawBuilder<unknown> | null;
  hidden: ReadonlySet<string>;
  readOnly: ReadonlySet<string>;
}

/** The scope of a principal bound by no role: everything. */
export const UNBOUNDED_SCOPE: RecordScope = Object.freeze({ where: null, check: null, hidden: new Set<string>(), readOnly: new Set<string>() });

/** Finds a role's rules on a table; NO_ACCESS when none are written. */
export type RulesLookup = (tableId: string, roleId: string) => TableAccessRules;

/**
 * The scope of `action` on `table` for `principal`: every bounding role's rules at once (their
 * intersection). Throws FORBIDDEN naming the table, the action and the role when a rule is NONE
 * (and for update/delete when `read` is: what cannot be read cannot be reached).
 */
export function recordScope(principal: Principal, table: RecordTable, action: AccessAction, rules: RulesLookup): RecordScope {
  const roles = principal.dataRoles;
  if (!roles?.length) return UNBOUNDED_SCOPE;
  const user = userValues(principal);
  const where: RawBuilder<unknown>[] = [];
  const check: RawBuilder<unknown>[] = [];
  const hidden = new Set<string>();
  const readOnly = new Set<string>();
  for (const role of roles) {
    const roleRules = rules(table.id, role.id);
    const own = ruleFor(roleRules, action, role, table);
    if (action !== 'create') pushCondition(where, ruleFor(roleRules, 'read', role, table, action), table, user);
    if (action === 'update' || action === 'delete') pushCondition(where, own, table, user);
    if (action === 'create' || action === 'update') pushCondition(check, own, table, user);
    for (const name of roleRules.hiddenFields) hidden.add(name);
    for (const name of roleRules.readOnlyFields) readOnly.add(name);
  }
  return { where: conjunction(where), check: conjunction(check), hidden, readOnly };
}

function ruleFor(rules: TableAccessRules, action: AccessAction, role: DataRole, table: RecordTable, forAction: AccessAction = action): AccessRule {
  const rule = rules[action];
  if (rule.level !== 'NONE') return rule;
  const because = forAction === action ? '' : `, so it cannot ${forAction} them either`;
  throw forbidden(`Role '${role.name}' may not ${action} ${table.name} records${because}`, { table: table.name, action: forAction, role: role.name });
}

function pushCondition(into: RawBuilder<unknown>[], rule: AccessRule, table: RecordTable, user: UserValues | null): void {
  if (rule.level === 'ALL') return;
  if (rule.level === 'OWN') {
    into.push(user ? sql`${sql.ref('_created_by')} = ${user['$user._id']}` : sql`false`);
    return;
  }
  const { value, missing } = substituteUser(rule.filter, user);
  // A rule naming the user matches nothing for a caller with no user, never everything.
  into.push(missing ? sql`false` : filterCondition(table, value, { path: 'rule' }));
}

function conjunction(parts: RawBuilder<unknown>[]): RawBuilder<unknown> | null {
  if (!parts.length) return null;
  return parts.length === 1 ? parts[0]! : sql`(${sql.join(parts, sql` and `)})`;
}

/** A record as the caller may see it: hidden fields read as null. */
export function withoutHidden<T extends Record<string, unknown>>(record: T, hidden: ReadonlySet<string>): T {
  if (!hidden.size) return record;
  const copy: Record<string, unknown> = { ...record };
  for (const name of hidden) if (name in copy) copy[name] = null;
  return copy as T;
}

/** Refuses data that names a read-only field, naming each. */
export function assertWritable(data: Record<string, unknown>, scope: RecordScope, path = 'data'): void {
  if (!scope.readOnly.size) return;
  const issues = Object.keys(data)
    .filter((name) => scope.readOnly.has(name) && data[name] !== undefined)
    .map((name) => ({ field: `${path}.${name}`, message: 'is read-only for your role' }));
  if (issues.length) throw recordInputError(issues);
}
