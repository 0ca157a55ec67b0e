import { recordAudit } from '../audit/writer.js';
import type { Db } from '../platform/db/index.js';
import { conflict, forbidden, notFound } from '../platform/errors.js';
import { enqueueMail } from '../platform/mail.js';
import { rolePermissions, type Principal } from './permissions.js';

/**
 * Who may change an admin's account, and who hears of it (D33): the owner's account changes only
 * by the owner or by the operator at the machine; ownership moves only by an explicit transfer;
 * every change to an admin account is e-mailed to that account in the write's transaction.
 */

export const ACCOUNT_CHANGED_SUBJECT = 'Your Trellis account was changed';
export const OWNERSHIP_GAINED_SUBJECT = 'You are now the owner of the Trellis application';
export const OWNERSHIP_LOST_SUBJECT = 'You are no longer the owner of the Trellis application';

/** An account as these rules read it. */
export interface AccountRef {
  id: string;
  isOwner: boolean;
}

/**
 * Throws unless `principal` may change `account`: anyone with the right permission may change an
 * account that is not an owner's; an owner's account changes only by that owner or the operator
 * (system principal, the CLI on the machine: the recovery path). The owner stays an enabled admin
 * until they hand ownership on, so that hook announcements and recovery always reach someone.
 *
 * @param takesAdmin the change disables the account or takes the `admin` permission from it.
 * @throws FORBIDDEN when someone else changes an owner's account; CONFLICT when an owner would
 *   disable or demote themselves.
 */
export function assertMayChangeAccount(principal: Principal, account: AccountRef, takesAdmin: boolean): void {
  if (!account.isOwner || principal.kind === 'system') return;
  if (principal.userId !== account.id) {
    throw forbidden("Only the owner changes the owner's account; ownership moves only by a transfer the owner makes (transferOwnership)");
  }
  if (takesAdmin) throw conflict('The owner stays an enabled admin: transfer ownership to another admin first (transferOwnership)');
}

/** What one write changed on an account, as its e-mail lists it. */
export interface AccountChange {
  name?: string;
  role?: { from: string; to: string };
  disabled?: boolean;
  /** Changed with the current password (changeMyPassword), set by the account's user, or set by someone else. */
  password?: 'current' | 'self' | 'other';
}

const PASSWORD_LINES = {
  current: 'Password: changed with your current password; your other sessions ended.',
  self: 'Password: set by you without the current password; your sessions ended.',
  other: 'Password: set by someone else; your sessions ended.',
} as const;

/** The lines of the account e-mail for `change`; empty when nothing changed. */
export function describeAccountChange(change: AccountChange): string[] {
  return [
    ...(change.disabled === true ? ['Disabled: you can no longer sign in; your sessions ended and your MCP keys stopped working.'] : []),
    ...(change.disabled === false ? ['Enabled: you can sign in again.'] : []),
    ...(change.role ? [`Role: ${change.role.from} -> ${change.role.to}`] : []),
    ...(change.password ? [PASSWORD_LINES[change.password]] : []),
    ...(change.name !== undefined ? [`Name: "${change.name}"`] : []),
  ];
}

/** Queues the e-mail that tells `to` what `principal` changed on their account; call it in the write's transaction. */
export async function mailAccountChange(trx: Db, principal: Principal, to: string, lines: readonly string[]): Promise<void> {
  if (!lines.length) return;
  await enqueueMail(trx, { to, subject: ACCOUNT_CHANGED_SUBJECT, body: accountMailBody(principal, lines) });
}

/**
 * Makes `heirId` the owner. An owner hands their own ownership on; the operator (system
 * principal) makes `heirId` the only owner, the recovery path when no owner can act. Both sides
 * are e-mailed and the transfer is audited, in this transaction.
 *
 * @throws FORBIDDEN when `principal` is neither an owner nor the operator; NOT_FOUND for an
 *   unknown user; CONFLICT when the heir is not an enabled admin or already the owner.
 */
export async function transferOwnership(trx: Db, principal: Principal, heirId: string): Promise<void> {
  const owners = await trx.selectFrom('users').select(['id', 'email']).where('is_owner', '=', true).forUpdate().execute();
  if (principal.kind !== 'system' && !owners.some((owner) => owner.id === principal.userId)) {
    throw forbidden('Only the owner transfers ownership');
  }
  const heir = await lockHeir(trx, heirId);
  const giving = owners.filter((owner) => (principal.kind === 'system' ? owner.id !== heir.id : owner.id === principal.userId));
  if (heir.is_owner && (principal.userId === heir.id || !giving.length)) throw conflict(`userId: ${heir.email} is already the owner`, { field: 'userId' });
  if (giving.length) await trx.updateTable('users').set({ is_owner: false, updated_at: new Date() }).where('id', 'in', giving.map((owner) => owner.id)).execute();
  await trx.updateTable('users').set({ is_owner: true, updated_at: new Date() }).where('id', '=', heir.id).execute();
  await recordAudit(trx, principal, {
    action: 'user.ownership.transfer',
    resourceType: 'user',
    resourceId: heir.id,
    details: { to: heir.email, from: giving.map((owner) => owner.email) },
  });
  const gained = `Ownership: you are now the owner of the application${giving.length ? `, after ${giving.map((owner) => owner.email).join(', ')}` : ''}.`;
  await enqueueMail(trx, { to: heir.email, subject: OWNERSHIP_GAINED_SUBJECT, body: accountMailBody(principal, [gained]) });
  for (const owner of giving) {
    const lost = `Ownership: ${heir.email} is now the owner of the application; you stay an admin until the new owner changes that.`;
    await enqueueMail(trx, { to: owner.email, subject: OWNERSHIP_LOST_SUBJECT, body: accountMailBody(principal, [lost]) });
  }
}

async function lockHeir(trx: Db, heirId: string) {
  const heir = await trx
    .selectFrom('users as u')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .select(['u.id', 'u.email', 'u.disabled', 'u.is_owner', 'r.permissions'])
    .where('u.id', '=', heirId)
    .forUpdate('u')
    .executeTakeFirst();
  if (!heir) throw notFound('User', heirId);
  if (heir.disabled || !rolePermissions(heir.permissions).has('admin')) {
    throw conflict(`userId: ${heir.email} is not an enabled admin; enable them and give them an admin role first`, { field: 'userId' });
  }
  return heir;
}

function accountMailBody(principal: Principal, lines: readonly string[]): string {
  return [
    'Your Trellis admin account was changed:',
    '',
    ...lines.map((line) => `- ${line}`),
    '',
    `Changed by: ${actorLabel(principal)}`,
    `Source: ${principal.source}`,
    '',
    "If you did not make or expect this change, tell the application's owner at once.",
  ].join('\n');
}

/** Who made a change, as the account e-mail names them. */
function actorLabel(principal: Principal): string {
  if (principal.kind === 'system') return principal.source === 'cli' ? 'the operator (trellis CLI)' : 'the system';
  return principal.userEmail ?? principal.label;
}
