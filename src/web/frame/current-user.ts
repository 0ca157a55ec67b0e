// The signed-in user as a feature sees it: the data the host sent, and `can`, built here because
// functions cannot cross postMessage.
import { TABLE_ACTIONS, type FrameTableAccess, type FrameUser, type TableAction } from '../shared/frame-protocol.js';

export interface CurrentUser extends FrameUser {
  /**
   * Whether the user may do `action` ('read', 'create', 'update' or 'delete') with records of
   * `table` (its name in any letter case, or its _id): any level but NONE. False for an unknown
   * table or action. The server enforces the rules either way; this only shapes the page.
   *
   * @example user.can('Orders', 'delete') ? <Button>Delete</Button> : null
   */
  can(table: string, action: string): boolean;
}

/** The user `useCurrentUser()` returns for what the host sent (a host that sent no access grants nothing). */
export function currentUserFrom(user: FrameUser): CurrentUser {
  const tableAccess: FrameTableAccess[] = Array.isArray(user.tableAccess) ? user.tableAccess : [];
  const can = (table: string, action: string): boolean => {
    const wanted = String(action).toLowerCase();
    if (!(TABLE_ACTIONS as readonly string[]).includes(wanted)) return false;
    const entry = findTable(tableAccess, String(table));
    return entry !== undefined && entry[wanted as TableAction] !== 'NONE';
  };
  return Object.freeze({ ...user, tableAccess, can });
}

function findTable(tableAccess: FrameTableAccess[], table: string): FrameTableAccess | undefined {
  const name = table.toLowerCase();
  return tableAccess.find((entry) => entry.tableId === table) ?? tableAccess.find((entry) => entry.table.toLowerCase() === name);
}
