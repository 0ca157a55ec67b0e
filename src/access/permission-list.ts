// The role permissions and the MCP scopes, with what each allows: pure data, read by the server and
// bundled into the designer (src/web/designer), so that both show and check the same list.

/** The scopes of the spec (docs/spec.md 5.1), in the order tools and docs list them. */
export const SCOPES = [
  'config:read',
  'features:write',
  'tables:write',
  'menus:write',
  'hooks:write',
  'roles:write',
  'env:write',
  'config:delete',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Scopes that only an admin may grant, and that work only while the key's user is an admin. */
export const ADMIN_ONLY_SCOPES: ReadonlySet<Scope> = new Set(['hooks:write', 'roles:write', 'env:write', 'config:delete']);

/** Role permissions: every scope, plus `admin` and `ai_designer` (may create MCP keys). */
export const PERMISSIONS = [...SCOPES, 'admin', 'ai_designer'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** What each permission lets a role do, in one short phrase, as the designer's Roles section shows it. */
export const PERMISSION_MEANINGS: Readonly<Record<Permission, string>> = {
  'config:read': 'See features, hooks, tables, menus, roles, variable names and the GraphQL schema',
  'features:write': 'Create and change features',
  'tables:write': 'Create tables, change their details and add fields',
  'menus:write': 'Create and replace menus',
  'hooks:write': 'Create and change hooks: code that runs on the server',
  'roles:write': "Choose which roles see each feature and reach each table's records",
  'env:write': 'Create and change environment variables',
  'config:delete': 'Delete features, hooks and tables',
  admin: 'Everything, including users, roles and every record',
  ai_designer: 'Create MCP keys for an AI client',
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}
