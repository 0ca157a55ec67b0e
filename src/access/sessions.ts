import { recordAudit } from '../audit/writer.js';
import type { PlatformContext } from '../platform/context.js';
import { hashPassword, randomSecret, sha256Hex, verifyPassword } from '../platform/crypto.js';
import { writeTransaction } from '../platform/db/write.js';
import { badInput, unauthenticated } from '../platform/errors.js';
import { parseInput } from '../platform/validation.js';
import { describeAccountChange, mailAccountChange } from './accounts.js';
import { isAdminRole, rolePermissions, type Principal } from './permissions.js';
import { changePasswordInput, loginInput, type ChangePasswordInput } from './schema.js';
import { findUserWithRole } from './users.js';

export const SESSION_TOKEN_PREFIX = 'trs_';

export interface Session {
  token: string;
  expires_in: number;
  token_type: 'Bearer';
}

/** Signing in and out with a password, and the principal of a session token or of a user. */
export class SessionService {
  constructor(private readonly ctx: PlatformContext) {}

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
    const user = await findUserWithRole(this.ctx.db, principal.userId);
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
    const user = await findUserWithRole(this.ctx.db, userId);
    if (!user || user.disabled) throw unauthenticated();
    return userPrincipal(user.id, user.email, { id: user.role_id, name: user.role_name, permissions: user.role_permissions }, source);
  }
}

/** The principal of a signed-in user; a role without `admin` bounds the user's records by its rules (D32). */
function userPrincipal(
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

/** Spends the time of a real check so that unknown e-mails answer as slowly as wrong passwords. */
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
async function burnPasswordCheck(password: string): Promise<false> {
  await verifyPassword(password, DUMMY_HASH);
  return false;
}
