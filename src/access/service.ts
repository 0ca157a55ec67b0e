import { writeTransaction } from '../platform/db/write.js';
import { resolveNamedRecord } from '../platform/references.js';
import { recordAudit } from '../audit/writer.js';
import { hashPassword, newId, randomSecret, sha256Hex, verifyPassword } from '../platform/crypto.js';
import type { PlatformContext } from '../platform/context.js';
import type { Db } from '../platform/db/index.js';
import type { Row } from '../platform/db/types.js';
import type { DataGrantReport, DataNeed } from '../tables/access-schema.js';
import { badInput, conflict, forbidden, notFound, unauthenticated } from '../platform/errors.js';
import { assertDistinctName } from '../platform/names.js';
import { parseInput } from '../platform/validation.js';
import { assertMayChangeAccount, describeAccountChange, mailAccountChange, transferOwnership, type AccountChange } from './accounts.js';
import {
  requireAdmin,
  requirePermission,
  rolePermissions,
  type Principal,
} from './permissions.js';
import {
  changePasswordInput,
  createRoleInput,
  createUserInput,
  grantFeatureAccessInput,
  loginInput,
  transferOwnershipInput,
  updateRoleInput,
  updateUserInput,
  type ChangePasswordInput,
  type CreateRoleInput,
  type CreateUserInput,
  type GrantFeatureAccessInput,
  type TransferOwnershipInput,
  type UpdateRoleInput,
  type UpdateUserInput,
} from './schema.js';

export const SESSION_TOKEN_PREFIX = 'trs_';

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

export interface User {
  _id: string;
  email: string;
  name: string;
  roleId: string;
  roleName: string;
  isOwner: boolean;
  disabled: boolean;
  createdAt: Date;
}

export interface Role {
  _id: string;
  name: string;
  description: string;
  permissions: string[];
  builtin: boolean;
}

export interface Session {
  token: string;
  expires_in: number;
  token_type: 'Bearer';
}

type UserWithRole = Row<'users'> & { role_name: string; role_permissions: string[] };

/** What granting a feature does to its roles' data access (D32); services.ts gives it. */
export interface FeatureDataGrants {
  /** The tables and actions the feature's code needs; read before the grant's transaction. */
  needs(featureRef: string): Promise<DataNeed[]>;
  /** Gives each role the missing rules among `needs`, in the grant's transaction. */
  grant(trx: Db, principal: Principal, roleIds: readonly string[], needs: readonly DataNeed[]): Promise<DataGrantReport>;
}

/** The answer of a feature grant: who sees it now, and what changed in their data access. */
export interface FeatureGrant {
  roleIds: string[];
  dataAccess: DataGrantReport;
}

export class AccessService {
  /**
   * @param dataGrants what granting a feature does to the data access of its roles (D32); without
   * it a grant changes only which features roles see.
   */
  constructor(
    private readonly ctx: PlatformContext,
    private readonly dataGrants?: FeatureDataGrants,
  ) {}

  /** Exchanges e-mail and password for a session token. Every failure is the same 401. */
  async login(input: unknown): Promise<Session> {
    const { email, password } = parseInput(loginInput, input);
    const user = await this.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', email.trim().toLowerCase())
      .executeTakeFirst();
    const valid = user ? await verifyPassword(password, user.password_hash) : await burnPasswordCheck(password);
    if (!user || !valid || user.disabled) throw unauthenticated();
    const token = SESSION_TOKEN_PREFIX + randomSecret();
    const ttl = this.ctx.config.sessionTtlSeconds;
    await this.ctx.db
      .insertInto('user_sessions')
      .values({ token_hash: sha256Hex(token), user_id: user.id, expires_at: new Date(Date.now() + ttl * 1000) })
      .execute();
    return { token, expires_in: ttl, token_type: 'Bearer' };
  }

  /**
   * Changes the signed-in user's own password after checking the current one; ends every session
   * of the user (a stolen one included) and answers with a new session for the caller.
   */
  async changeOwnPassword(principal: Principal, input: ChangePasswordInput): Promise<Session> {
    if (principal.kind !== 'user' || !principal.userId) throw unauthenticated();
    const data = parseInput(changePasswordInput, input);
    const user = await this.findUserWithRole(this.ctx.db, principal.userId);
    if (!user || user.disabled) throw unauthenticated();
    if (!(await verifyPassword(data.currentPassword, user.password_hash))) {
      throw badInput('currentPassword: is not your current password', { field: 'currentPassword' });
    }
    const passwordHash = await hashPassword(data.newPassword);
    const token = SESSION_TOKEN_PREFIX + randomSecret();
    const ttl = this.ctx.config.sessionTtlSeconds;
    await writeTransaction(this.ctx, async (trx) => {
      await trx.updateTable('users').set({ password_hash: passwordHash, updated_at: new Date() }).where('id', '=', user.id).execute();
      await trx.deleteFrom('user_sessions').where('user_id', '=', user.id).execute();
      await trx.insertInto('user_sessions').values({ token_hash: sha256Hex(token), user_id: user.id, expires_at: new Date(Date.now() + ttl * 1000) }).execute();
      await recordAudit(trx, principal, { action: 'user.password.change', resourceType: 'user', resourceId: user.id, details: { passwordChanged: true } });
      if (isAdminRole(user.role_permissions)) await mailAccountChange(trx, principal, user.email, describeAccountChange({ password: 'current' }));
    });
    await this.ctx.changes.publish('auth');
    return { token, expires_in: ttl, token_type: 'Bearer' };
  }

  /** Ends the session of `token`; unknown tokens are ignored. */
  async logout(token: string): Promise<void> {
    await this.ctx.db.deleteFrom('user_sessions').where('token_hash', '=', sha256Hex(token)).execute();
  }

  /** The principal of a session token, with the user's permissions as they are now. */
  async authenticateSession(token: string, source: Principal['source'] = 'graphql'): Promise<Principal> {
    const row = await this.ctx.db
      .selectFrom('user_sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .innerJoin('roles as r', 'r.id', 'u.role_id')
      .select(['u.id', 'u.email', 'u.disabled', 'u.role_id', 's.expires_at', 'r.permissions', 'r.name as role_name'])
      .where('s.token_hash', '=', sha256Hex(token))
      .executeTakeFirst();
    if (!row || row.disabled || row.expires_at.getTime() <= Date.now()) throw unauthenticated();
    return userPrincipal(row.id, row.email, { id: row.role_id, name: row.role_name, permissions: row.permissions }, source);
  }

  /** Loads a user's principal by id (used for `x-userid` and keys); throws when absent or disabled. */
  async principalForUser(userId: string, source: Principal['source']): Promise<Principal> {
    const user = await this.findUserWithRole(this.ctx.db, userId);
    if (!user || user.disabled) throw unauthenticated();
    return userPrincipal(user.id, user.email, { id: user.role_id, name: user.role_name, permissions: user.role_permissions }, source);
  }

  async listUsers(principal: Principal): Promise<User[]> {
    requireAdmin(principal);
    const rows = await this.usersQuery(this.ctx.db).orderBy('u.created_at').orderBy('u.email').execute();
    return rows.map(toUser);
  }

  async getUser(principal: Principal, userId: string): Promise<User> {
    if (principal.userId !== userId) requireAdmin(principal);
    const row = await this.findUserWithRole(this.ctx.db, userId);
    if (!row) throw notFound('User', userId);
    return toUser(row);
  }

  async findUserByEmail(principal: Principal, email: string): Promise<User> {
    requireAdmin(principal);
    const row = await this.usersQuery(this.ctx.db).where('u.email', '=', email.trim().toLowerCase()).executeTakeFirst();
    if (!row) throw notFound('User', email);
    return toUser(row);
  }

  async createUser(principal: Principal, input: CreateUserInput): Promise<User> {
    requireAdmin(principal);
    const data = parseInput(createUserInput, input);
    const passwordHash = await hashPassword(data.password);
    return writeTransaction(this.ctx, async (trx) => {
      const role = await this.resolveRole(trx, data.role);
      const taken = await trx.selectFrom('users').select('id').where('email', '=', data.email).executeTakeFirst();
      if (taken) throw conflict(`A user with e-mail '${data.email}' already exists`, { field: 'email' });
      if (data.name) assertDistinctName(data.name, await otherDisplayNames(trx), USER_NAME);
      const id = newId();
      await trx
        .insertInto('users')
        .values({ id, email: data.email, name: data.name, password_hash: passwordHash, role_id: role.id, updated_at: new Date() })
        .execute();
      await recordAudit(trx, principal, {
        action: 'user.create',
        resourceType: 'user',
        resourceId: id,
        details: { email: data.email, role: role.name },
      });
      return toUser((await this.findUserWithRole(trx, id))!);
    });
  }

  async updateUser(principal: Principal, input: UpdateUserInput): Promise<User> {
    requireAdmin(principal);
    const data = parseInput(updateUserInput, input);
    const passwordHash = data.password === undefined ? undefined : await hashPassword(data.password);
    const updated = await writeTransaction(this.ctx, async (trx) => {
      const user = await this.findUserWithRole(trx, data._id, true);
      if (!user) throw notFound('User', data._id);
      const role = data.role === undefined ? undefined : await this.resolveRole(trx, data.role);
      const wasAdmin = isAdminRole(user.role_permissions);
      const takesAdmin = (role !== undefined && !isAdminRole(role.permissions)) || data.disabled === true;
      assertMayChangeAccount(principal, { id: user.id, isOwner: user.is_owner }, takesAdmin);
      if (takesAdmin && wasAdmin) await assertAnotherActiveAdmin(trx, user.id);
      if (data.name && data.name !== user.name) assertDistinctName(data.name, await otherDisplayNames(trx, user.id), USER_NAME);
      await trx
        .updateTable('users')
        .set({
          ...(data.name !== undefined ? { name: data.name } : {}),
          ...(role ? { role_id: role.id } : {}),
          ...(data.disabled !== undefined ? { disabled: data.disabled } : {}),
          ...(passwordHash ? { password_hash: passwordHash } : {}),
          updated_at: new Date(),
        })
        .where('id', '=', user.id)
        .execute();
      if (data.disabled === true || passwordHash) {
        await trx.deleteFrom('user_sessions').where('user_id', '=', user.id).execute();
      }
      await recordAudit(trx, principal, {
        action: 'user.update',
        resourceType: 'user',
        resourceId: user.id,
        details: {
          ...(data.name !== undefined ? { name: data.name } : {}),
          ...(role ? { role: role.name, previousRole: user.role_name } : {}),
          ...(data.disabled !== undefined ? { disabled: data.disabled } : {}),
          ...(passwordHash ? { passwordChanged: true } : {}),
        },
      });
      if (wasAdmin || (role !== undefined && isAdminRole(role.permissions))) {
        await mailAccountChange(trx, principal, user.email, describeAccountChange(accountChange(principal, user, data, role)));
      }
      return toUser((await this.findUserWithRole(trx, user.id))!);
    });
    await this.ctx.changes.publish('auth');
    return updated;
  }

  /**
   * Makes another enabled admin the owner: the owner hands their ownership on, or the operator
   * (system principal) gives it as the recovery path. Both sides are e-mailed; the transfer is
   * audited. See `transferOwnership` in accounts.ts for what it throws.
   */
  async transferOwnership(principal: Principal, input: TransferOwnershipInput): Promise<User> {
    requireAdmin(principal);
    const { userId } = parseInput(transferOwnershipInput, input);
    return writeTransaction(this.ctx, async (trx) => {
      await transferOwnership(trx, principal, userId);
      return toUser((await this.findUserWithRole(trx, userId))!);
    });
  }

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
    const deleted = await writeTransaction(this.ctx, async (trx) => {
      const role = await trx.selectFrom('roles').selectAll().where('id', '=', roleId).forUpdate().executeTakeFirst();
      if (!role) throw notFound('Role', roleId);
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

  /** Lets the given roles see a feature (adds to those that already do). */
  async grantFeatureAccess(principal: Principal, input: GrantFeatureAccessInput): Promise<string[]> {
    return (await this.grantFeature(principal, input)).roleIds;
  }

  /**
   * Lets the given roles see a feature and gives each what the feature's GraphQL documents need of
   * the tables (D32): ALL where its rule is NONE, never widening a rule already set. Answers every
   * role that now sees the feature and what changed in their data access.
   */
  async grantFeature(principal: Principal, input: GrantFeatureAccessInput): Promise<FeatureGrant> {
    requirePermission(principal, 'roles:write');
    const data = parseInput(grantFeatureAccessInput, input);
    const needs = this.dataGrants ? await this.dataGrants.needs(data.featureId) : [];
    let dataAccess: DataGrantReport = { granted: [], leftNarrower: [] };
    const roleIds = await this.changeFeatureAccess(principal, data.featureId, data.roleIds, 'grant', async (trx, granted) => {
      if (this.dataGrants) dataAccess = await this.dataGrants.grant(trx, principal, granted, needs);
    });
    return { roleIds, dataAccess };
  }

  /** Stops the given roles from seeing a feature. */
  async revokeFeatureAccess(principal: Principal, input: GrantFeatureAccessInput): Promise<string[]> {
    requirePermission(principal, 'roles:write');
    const data = parseInput(grantFeatureAccessInput, input);
    return this.changeFeatureAccess(principal, data.featureId, data.roleIds, 'revoke');
  }

  /** Ids of the roles that see `featureId`. */
  async featureRoles(principal: Principal, featureId: string): Promise<string[]> {
    requirePermission(principal, 'config:read');
    return featureRoleIds(this.ctx.db, featureId);
  }

  private async changeFeatureAccess(
    principal: Principal,
    featureId: string,
    roleIds: string[],
    mode: 'grant' | 'revoke',
    alsoInTransaction?: (trx: Db, roleIds: string[]) => Promise<void>,
  ): Promise<string[]> {
    return writeTransaction(this.ctx, async (trx) => {
      const resolvedFeature = await resolveNamedRecord(trx, 'features', featureId);
      const resolvedRoles: string[] = [];
      for (const role of roleIds) resolvedRoles.push(await resolveNamedRecord(trx, 'roles', role));
      const ids = unique(resolvedRoles);
      if (mode === 'grant' && ids.length) {
        await trx
          .insertInto('role_features')
          .values(ids.map((roleId) => ({ role_id: roleId, feature_id: resolvedFeature })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
      if (mode === 'revoke' && ids.length) {
        await trx.deleteFrom('role_features').where('feature_id', '=', resolvedFeature).where('role_id', 'in', ids).execute();
      }
      await recordAudit(trx, principal, {
        action: `feature.access.${mode}`,
        resourceType: 'feature',
        resourceId: resolvedFeature,
        details: { roleIds: ids },
      });
      await alsoInTransaction?.(trx, ids);
      return featureRoleIds(trx, resolvedFeature);
    });
  }

  private async resolveRole(trx: Db, idOrName: string): Promise<Row<'roles'>> {
    const role = await trx
      .selectFrom('roles')
      .selectAll()
      .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
      .executeTakeFirst();
    if (!role) throw badInput(`role: no role with _id or name '${idOrName}'`, { field: 'role' });
    return role;
  }

  private usersQuery(db: Db) {
    return db
      .selectFrom('users as u')
      .innerJoin('roles as r', 'r.id', 'u.role_id')
      .selectAll('u')
      .select(['r.name as role_name', 'r.permissions as role_permissions']);
  }

  private async findUserWithRole(db: Db, userId: string, lock = false): Promise<UserWithRole | undefined> {
    let query = this.usersQuery(db).where('u.id', '=', userId);
    if (lock) query = query.forUpdate('u');
    return query.executeTakeFirst();
  }
}

export async function featureRoleIds(db: Db, featureId: string): Promise<string[]> {
  const rows = await db.selectFrom('role_features').select('role_id').where('feature_id', '=', featureId).orderBy('role_id').execute();
  return rows.map((r) => r.role_id);
}

/** The principal of a signed-in user; a role without `admin` bounds the user's records by its rules (D32). */
export function userPrincipal(
  userId: string,
  email: string,
  role: { id: string; name: string; permissions: readonly string[] },
  source: Principal['source'],
): Principal {
  const permissions = rolePermissions(role.permissions);
  const isAdmin = permissions.has('admin');
  return {
    kind: 'user',
    userId,
    userEmail: email,
    userRole: role.name,
    label: email,
    isAdmin,
    permissions,
    source,
    dataRoles: isAdmin ? [] : [{ id: role.id, name: role.name }],
  };
}

async function assertAnotherActiveAdmin(trx: Db, exceptUserId: string): Promise<void> {
  const admins = await trx
    .selectFrom('users as u')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .select(['u.id', 'r.permissions'])
    .where('u.disabled', '=', false)
    .where('u.id', '!=', exceptUserId)
    .execute();
  if (!admins.some((a) => a.permissions.includes('admin'))) {
    throw conflict('The application must keep at least one enabled admin');
  }
}

const USER_NAME = { what: 'user', field: 'name' } as const;

function isAdminRole(permissions: readonly string[]): boolean {
  return rolePermissions(permissions).has('admin');
}

/** Users' display names but `exceptUserId`'s, for the name rule; an empty name clashes with nothing. */
async function otherDisplayNames(trx: Db, exceptUserId?: string): Promise<string[]> {
  let query = trx.selectFrom('users').select('name').where('name', '!=', '');
  if (exceptUserId) query = query.where('id', '!=', exceptUserId);
  return (await query.execute()).map((row) => row.name);
}

/** What `updateUser` changes on `user`, as the account e-mail lists it: only what differs. */
function accountChange(principal: Principal, user: UserWithRole, data: UpdateUserInput, role: Row<'roles'> | undefined): AccountChange {
  const change: AccountChange = {};
  if (data.name !== undefined && data.name !== user.name) change.name = data.name;
  if (role && role.id !== user.role_id) change.role = { from: user.role_name, to: role.name };
  if (data.disabled !== undefined && data.disabled !== user.disabled) change.disabled = data.disabled;
  if (data.password !== undefined) change.password = principal.userId === user.id ? 'self' : 'other';
  return change;
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

/** Spends the time of a real check so that unknown e-mails answer as slowly as wrong passwords. */
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
async function burnPasswordCheck(password: string): Promise<false> {
  await verifyPassword(password, DUMMY_HASH);
  return false;
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

function toUser(row: UserWithRole): User {
  return {
    _id: row.id,
    email: row.email,
    name: row.name,
    roleId: row.role_id,
    roleName: row.role_name,
    isOwner: row.is_owner,
    disabled: row.disabled,
    createdAt: row.created_at,
  };
}

function toRole(row: Row<'roles'>): Role {
  return { _id: row.id, name: row.name, description: row.description, permissions: row.permissions, builtin: row.builtin };
}
