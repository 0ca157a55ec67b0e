import { recordAudit } from '../audit/writer.js';
import type { PlatformContext } from '../platform/context.js';
import { hashPassword, newId } from '../platform/crypto.js';
import type { Db } from '../platform/db/index.js';
import type { Row } from '../platform/db/types.js';
import { writeTransaction } from '../platform/db/write.js';
import { conflict, notFound } from '../platform/errors.js';
import { assertDistinctName } from '../platform/names.js';
import { parseInput } from '../platform/validation.js';
import { assertMayChangeAccount, describeAccountChange, mailAccountChange, transferOwnership, type AccountChange } from './accounts.js';
import { isAdminRole, requireAdmin, type Principal } from './permissions.js';
import { resolveRole } from './roles.js';
import {
  createUserInput,
  transferOwnershipInput,
  updateUserInput,
  type CreateUserInput,
  type TransferOwnershipInput,
  type UpdateUserInput,
} from './schema.js';

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

/** A user's row with its role's name and permissions. */
export type UserWithRole = Row<'users'> & { role_name: string; role_permissions: string[] };

/** The application's user accounts: listed and changed by admins, each one readable by its own user. */
export class UserService {
  constructor(private readonly ctx: PlatformContext) {}

  async listUsers(principal: Principal): Promise<User[]> {
    requireAdmin(principal);
    const rows = await usersQuery(this.ctx.db).orderBy('u.created_at').orderBy('u.email').execute();
    return rows.map(toUser);
  }

  async getUser(principal: Principal, userId: string): Promise<User> {
    if (principal.userId !== userId) requireAdmin(principal);
    const row = await findUserWithRole(this.ctx.db, userId);
    if (!row) throw notFound('User', userId);
    return toUser(row);
  }

  async findUserByEmail(principal: Principal, email: string): Promise<User> {
    requireAdmin(principal);
    const row = await usersQuery(this.ctx.db).where('u.email', '=', email.trim().toLowerCase()).executeTakeFirst();
    if (!row) throw notFound('User', email);
    return toUser(row);
  }

  async createUser(principal: Principal, input: CreateUserInput): Promise<User> {
    requireAdmin(principal);
    const data = parseInput(createUserInput, input);
    const passwordHash = await hashPassword(data.password);
    return writeTransaction(this.ctx, async (trx) => {
      const role = await resolveRole(trx, data.role);
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
      return toUser((await findUserWithRole(trx, id))!);
    });
  }

  async updateUser(principal: Principal, input: UpdateUserInput): Promise<User> {
    requireAdmin(principal);
    const data = parseInput(updateUserInput, input);
    const passwordHash = data.password === undefined ? undefined : await hashPassword(data.password);
    const updated = await writeTransaction(this.ctx, async (trx) => {
      const user = await findUserWithRole(trx, data._id, true);
      if (!user) throw notFound('User', data._id);
      const role = data.role === undefined ? undefined : await resolveRole(trx, data.role);
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
      return toUser((await findUserWithRole(trx, user.id))!);
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
      return toUser((await findUserWithRole(trx, userId))!);
    });
  }
}

/** A user with their role; `lock` takes the user's row for update. Internal: no permission check. */
export async function findUserWithRole(db: Db, userId: string, lock = false): Promise<UserWithRole | undefined> {
  let query = usersQuery(db).where('u.id', '=', userId);
  if (lock) query = query.forUpdate('u');
  return query.executeTakeFirst();
}

function usersQuery(db: Db) {
  return db
    .selectFrom('users as u')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .selectAll('u')
    .select(['r.name as role_name', 'r.permissions as role_permissions']);
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
