import { recordAudit } from '../audit/writer.js';
import type { PlatformContext } from '../platform/context.js';
import { newId } from '../platform/crypto.js';
import type { Db } from '../platform/db/index.js';
import type { Row } from '../platform/db/types.js';
import { writeTransaction } from '../platform/db/write.js';
import { badInput, conflict, forbidden, notFound } from '../platform/errors.js';
import { assertDistinctName } from '../platform/names.js';
import { resolveNamedRecord } from '../platform/references.js';
import { parseInput } from '../platform/validation.js';
import { assertMayChangeAccount, mailAccountChange } from './accounts.js';
import { isAdminRole, isPermission, requireAdmin, requirePermission, type Permission, type Principal } from './permissions.js';
import { createRoleInput, deleteRoleInput, updateRoleInput, type CreateRoleInput, type UpdateRoleInput } from './schema.js';

/** Built-in roles created on first start. */
export const DEFAULT_ROLES = [
  { name: 'admin', description: 'Full control of the application', permissions: ['admin'] },
  {
    name: 'designer',
    description: 'Builds features, tables and menus; may create MCP keys',
    permissions: ['config:read', 'features:write', 'tables:write', 'menus:write', 'ai_designer'],
  },
  { name: 'viewer', description: 'Reads the configuration', permissions: ['config:read'] },
] as const;

export interface Role {
  _id: string;
  name: string;
  description: string;
  /** What the role grants; a stored name this version does not know is left out. */
  permissions: Permission[];
  builtin: boolean;
}

/** The roles and their permissions; a change of a role's `admin` permission is e-mailed to its users. */
export class RoleService {
  constructor(private readonly ctx: PlatformContext) {}

  async listRoles(principal: Principal): Promise<Role[]> {
    requirePermission(principal, 'config:read');
    const rows = await this.ctx.db.selectFrom('roles').selectAll().orderBy('created_at').orderBy('name').execute();
    return rows.map(toRole);
  }

  async createRole(principal: Principal, input: CreateRoleInput): Promise<Role> {
    requireAdmin(principal);
    const data = parseInput(createRoleInput, input);
    return writeTransaction(this.ctx, async (trx) => {
      const roles = await trx.selectFrom('roles').select('name').execute();
      assertDistinctName(data.name, roles.map((role) => role.name), { what: 'role', field: 'name' });
      const id = newId();
      await trx
        .insertInto('roles')
        .values({ id, name: data.name, description: data.description, permissions: JSON.stringify(unique(data.permissions)) })
        .execute();
      await recordAudit(trx, principal, {
        action: 'role.create',
        resourceType: 'role',
        resourceId: id,
        details: { name: data.name, permissions: data.permissions },
      });
      return toRole(await trx.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
    });
  }

  async updateRole(principal: Principal, input: UpdateRoleInput): Promise<Role> {
    requireAdmin(principal);
    const data = parseInput(updateRoleInput, input);
    const updated = await writeTransaction(this.ctx, async (trx) => {
      const roleId = await resolveNamedRecord(trx, 'roles', data._id);
      const role = await trx.selectFrom('roles').selectAll().where('id', '=', roleId).forUpdate().executeTakeFirst();
      if (!role) throw notFound('Role', data._id);
      if (data.permissions) {
        if (role.builtin && role.name === 'admin' && !data.permissions.includes('admin')) {
          throw forbidden("The built-in 'admin' role keeps the 'admin' permission");
        }
      }
      const holders = data.permissions ? await adminFlipHolders(trx, principal, role, data.permissions) : [];
      await trx
        .updateTable('roles')
        .set({
          ...(data.description !== undefined ? { description: data.description } : {}),
          ...(data.permissions ? { permissions: JSON.stringify(unique(data.permissions)) } : {}),
        })
        .where('id', '=', role.id)
        .execute();
      await recordAudit(trx, principal, {
        action: 'role.update',
        resourceType: 'role',
        resourceId: role.id,
        details: { name: role.name, ...(data.permissions ? { permissions: data.permissions } : {}) },
      });
      const line = `Role: "${role.name}" ${isAdminRole(role.permissions) ? 'lost' : 'gained'} the admin permission`;
      for (const holder of holders) await mailAccountChange(trx, principal, holder.email, [line]);
      return toRole(await trx.selectFrom('roles').selectAll().where('id', '=', role.id).executeTakeFirstOrThrow());
    });
    await this.ctx.changes.publish('auth');
    return updated;
  }

  async deleteRole(principal: Principal, roleId: string): Promise<boolean> {
    requireAdmin(principal);
    const { _id } = parseInput(deleteRoleInput, { _id: roleId });
    const deleted = await writeTransaction(this.ctx, async (trx) => {
      const role = await trx.selectFrom('roles').selectAll().where('id', '=', _id).forUpdate().executeTakeFirst();
      if (!role) throw notFound('Role', _id);
      if (role.builtin) throw forbidden(`The built-in role '${role.name}' cannot be deleted`);
      const holder = await trx.selectFrom('users').select('id').where('role_id', '=', role.id).executeTakeFirst();
      if (holder) throw conflict(`Role '${role.name}' is still assigned to users`);
      const integration = await trx.selectFrom('integration_keys').select('name').where('role_id', '=', role.id).orderBy('name').executeTakeFirst();
      if (integration) throw conflict(`Role '${role.name}' is the data access of integration key '${integration.name}'; delete that key first`);
      await trx.deleteFrom('roles').where('id', '=', role.id).execute();
      await recordAudit(trx, principal, { action: 'role.delete', resourceType: 'role', resourceId: role.id, details: { name: role.name } });
      return true;
    });
    await this.ctx.changes.publish('auth');
    return deleted;
  }
}

/** The role with this `_id` or name, for a user's `role` field; BAD_INPUT naming `role` when there is none. */
export async function resolveRole(trx: Db, idOrName: string): Promise<Row<'roles'>> {
  const role = await trx
    .selectFrom('roles')
    .selectAll()
    .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
    .executeTakeFirst();
  if (!role) throw badInput(`role: no role with _id or name '${idOrName}'`, { field: 'role' });
  return role;
}

/**
 * The users of `role` whose accounts gain or lose `admin` when its permissions become
 * `permissions` (each must be one `principal` may change), locked for the write; empty when the
 * role keeps or keeps lacking `admin`.
 */
async function adminFlipHolders(trx: Db, principal: Principal, role: Row<'roles'>, permissions: readonly string[]) {
  const wasAdmin = isAdminRole(role.permissions);
  if (wasAdmin === isAdminRole(permissions)) return [];
  const holders = await trx.selectFrom('users').select(['id', 'email', 'is_owner']).where('role_id', '=', role.id).forUpdate().execute();
  for (const holder of holders) assertMayChangeAccount(principal, { id: holder.id, isOwner: holder.is_owner }, wasAdmin);
  return holders;
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

function toRole(row: Row<'roles'>): Role {
  return { _id: row.id, name: row.name, description: row.description, permissions: row.permissions.filter(isPermission), builtin: row.builtin };
}
