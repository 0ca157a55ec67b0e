// Data access by role as the designer shows it: the builder GraphQL's TableAccess, the words for its
// levels, and a one-line summary of a role's access to a table.
import { TABLE_ACTIONS, type AccessLevel, type TableAction } from '../shared/frame-protocol.js';

export { TABLE_ACTIONS, type AccessLevel, type TableAction };

export const ACCESS_LEVELS: readonly AccessLevel[] = ['NONE', 'OWN', 'FILTER', 'ALL'];

export interface AccessRule {
  level: AccessLevel;
  /** FILTER only: conditions in the generated filter language. */
  filter: Record<string, unknown> | null;
}

/** One non-admin role's rules on a table (builder GraphQL's `TableAccess`). */
export type TableAccess = { roleId: string; roleName: string; hiddenFields: string[]; readOnlyFields: string[] } & Record<TableAction, AccessRule>;

/** The selection of `TableAccess` that fills `TableAccess`. */
export const TABLE_ACCESS_SELECTION = `roleId roleName ${TABLE_ACTIONS.map((action) => `${action} { level filter }`).join(' ')} hiddenFields readOnlyFields`;

/** The level picker's words. */
export const LEVEL_LABELS: Record<AccessLevel, string> = { NONE: 'None', OWN: 'Own records', FILTER: 'Filter', ALL: 'All' };

const LEVEL_WORDS: Record<AccessLevel, string> = { NONE: 'none', OWN: 'own', FILTER: 'filtered', ALL: 'all' };

export const ACTION_LABELS: Record<TableAction, string> = { read: 'Read', create: 'Create', update: 'Update', delete: 'Delete' };

export function isAdminRole(role: { permissions: readonly string[] }): boolean {
  return role.permissions.includes('admin');
}

/** "read all, create own, update none, delete none; hidden: amount; read-only: status", or "no access". */
export function accessSummary(access: Pick<TableAccess, TableAction | 'hiddenFields' | 'readOnlyFields'>): string {
  const levels = TABLE_ACTIONS.map((action) => access[action].level);
  if (levels.every((level) => level === 'NONE')) return 'no access';
  const parts = [TABLE_ACTIONS.map((action) => `${action} ${LEVEL_WORDS[access[action].level]}`).join(', ')];
  if (access.hiddenFields.length) parts.push(`hidden: ${access.hiddenFields.join(', ')}`);
  if (access.readOnlyFields.length) parts.push(`read-only: ${access.readOnlyFields.join(', ')}`);
  return parts.join('; ');
}
