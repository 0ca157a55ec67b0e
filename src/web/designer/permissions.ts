// The role permissions as the designer shows them, each with what it allows: the scopes of
// src/access/permissions.ts in its order (their meanings are docs/spec.md 5.1's), then admin and ai_designer.

export interface PermissionMeaning {
  permission: string;
  /** What the permission lets a role do, in one short phrase. */
  allows: string;
}

export const PERMISSION_MEANINGS: readonly PermissionMeaning[] = [
  { permission: 'config:read', allows: 'See features, hooks, tables, menus, roles, variable names and the GraphQL schema' },
  { permission: 'features:write', allows: 'Create and change features' },
  { permission: 'tables:write', allows: 'Create tables, change their details and add fields' },
  { permission: 'menus:write', allows: 'Create and replace menus' },
  { permission: 'hooks:write', allows: 'Create and change hooks: code that runs on the server' },
  { permission: 'roles:write', allows: "Choose which roles see each feature and reach each table's records" },
  { permission: 'env:write', allows: 'Create and change environment variables' },
  { permission: 'config:delete', allows: 'Delete features, hooks and tables' },
  { permission: 'admin', allows: 'Everything, including users, roles and every record' },
  { permission: 'ai_designer', allows: 'Create MCP keys for an AI client' },
];

/** Every role permission, in the order above. */
export const PERMISSIONS: readonly string[] = PERMISSION_MEANINGS.map((meaning) => meaning.permission);


/** Every permission, in the order above: what an admin holds. */
export const ALL_PERMISSIONS: readonly string[] = PERMISSION_MEANINGS.map((meaning) => meaning.permission);
