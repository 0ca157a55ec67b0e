import type { Db } from '../platform/db/index.js';
import { forbidden } from '../platform/errors.js';
import { PERMISSIONS, isPermission, type Permission } from './permission-list.js';

export { ADMIN_ONLY_SCOPES, PERMISSIONS, isPermission, isScope, type Permission, type Scope, SCOPES } from './permission-list.js';

/** Who is calling: carried into every service function, which checks permission itself. */
export interface Principal {
  readonly kind: 'user' | 'system' | 'integration';
  /** The user recorded as author; null for the system and for integrations without `x-userid`. */
  readonly userId: string | null;
  /** That user's e-mail when authentication read it (sessions, `x-userid`), as hooks see the author. */
  readonly userEmail?: string;
  /** That user's role name when authentication read it, as hooks see the author. */
  readonly userRole?: string;
  readonly label: string;
  readonly isAdmin: boolean;
  /** Effective permissions for this request. */
  readonly permissions: ReadonlySet<Permission>;
  /** Which adapter the call came through, for the audit trail. */
  readonly source: 'graphql' | 'mcp' | 'cli' | 'webhook' | 'system';
  /** The MCP key or integration client the call authenticated with. */
  readonly credentialId?: string;
  /** The id of the HTTP request (its `x-request-id`), recorded with MCP audit entries and hook runs. */
  readonly requestId?: string;
  /** The base URL the request reached (TRELLIS_PUBLIC_URL, else its scheme and Host), for absolute URLs in answers. */
  readonly baseUrl?: string;
  /**
   * Called by `recordAudit` inside each configuration write's transaction, after the write's own
   * entry: an MCP tool call writes its entry there, so that the write and its audit commit together.
   */
  readonly onAudit?: AuditCallback;
  /**
   * The roles whose data-access rules bound this principal's records, all of them at once (a user's
   * role, an integration key's role, both with `x-userid`). Empty or absent: every record (admins,
   * the system, hook code's `db`, an integration key created without a role). D32.
   */
  readonly dataRoles?: readonly DataRole[];
  /** The integration key's name when an integration acts (with or without `x-userid`), as hooks see it. */
  readonly via?: string;
}

/** A role whose data-access rules bound a principal's records. */
export interface DataRole {
  readonly id: string;
  readonly name: string;
}

/** What a write's transaction tells the caller's audit: the transaction and the write's event details. */
export type AuditCallback = (trx: Db, details: Readonly<Record<string, unknown>>) => Promise<void>;

/** The operator: the CLI on the machine that holds the data, and start-up tasks. */
export function systemPrincipal(source: Principal['source'] = 'system'): Principal {
  return { kind: 'system', userId: null, label: 'system', isAdmin: true, permissions: new Set(PERMISSIONS), source };
}

/**
 * An inbound webhook call (docs/spec.md 5.4): anonymous, so it writes records with no author and holds no
 * configuration permission; record access is all its code gets, through `db`.
 */
export function webhookPrincipal(hookName: string, requestId?: string): Principal {
  return { kind: 'system', userId: null, label: `webhook ${hookName}`, isAdmin: false, permissions: new Set(), source: 'webhook', requestId };
}

/** Throws FORBIDDEN unless the principal holds `permission`. */
export function requirePermission(principal: Principal, permission: Permission): void {
  if (!principal.permissions.has(permission)) {
    throw forbidden(`This action needs the '${permission}' permission`, { missingPermission: permission });
  }
}

export function requireAdmin(principal: Principal): void {
  if (!principal.isAdmin) throw forbidden("This action needs the 'admin' permission", { missingPermission: 'admin' });
}

/** Permissions of a role as stored, with `admin` implying every permission. */
export function rolePermissions(stored: readonly string[]): Set<Permission> {
  if (stored.includes('admin')) return new Set(PERMISSIONS);
  return new Set(stored.filter(isPermission));
}

/** Whether a role with these stored permissions makes its users admins. */
export function isAdminRole(permissions: readonly string[]): boolean {
  return rolePermissions(permissions).has('admin');
}
