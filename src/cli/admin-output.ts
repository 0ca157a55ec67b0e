import type { User } from '../access/service.js';
import type { IntegrationKey } from '../integrations/service.js';
import type { BackupManifest } from '../platform/backup.js';
import type { OutboxPage } from '../application/mail-outbox.js';
import type { RestoredBackup, WrittenBackup } from './backup.js';
import type { ListedMcpApiKey } from './commands.js';

/**
 * What the list, revoke, backup and restore commands print for people: aligned columns, one row
 * per item. Never a raw key or a hash: the answers they read carry neither. Dates may arrive as
 * ISO strings from a server.
 */

type When = Date | string | null;

export function describeUsers(users: User[]): string {
  if (users.length === 0) return 'No users.';
  return table(
    ['EMAIL', 'ROLE', 'STATE', 'OWNER', '_ID', 'CREATED'],
    users.map((user) => [user.email, user.roleName, user.disabled ? 'disabled' : 'enabled', user.isOwner ? 'owner' : '-', user._id, iso(user.createdAt)]),
  );
}

export function describeUserChange(user: User): string {
  return `User ${user.email} (_id ${user._id}, role ${user.roleName}) is ${user.disabled ? 'disabled: their sessions ended and their MCP keys stop working' : 'enabled'}`;
}

export function describeNewOwner(user: User): string {
  return `User ${user.email} (_id ${user._id}, role ${user.roleName}) is now the owner; the former owner was told by e-mail`;
}

export function describeKeys(keys: ListedMcpApiKey[]): string {
  if (keys.length === 0) return 'No MCP keys.';
  return table(
    ['_ID', 'NAME', 'PREFIX', 'OWNER', 'SCOPES', 'EXPIRES', 'LAST USED', 'STATE'],
    keys.map((key) => [
      key._id,
      key.name,
      `${key.keyPrefix}…`,
      key.userEmail ?? key.userId,
      key.scopes.join(','),
      iso(key.expiresAt),
      key.lastUsedAt ? iso(key.lastUsedAt) : 'never',
      keyState(key),
    ]),
  );
}

export function describeRevokedKey(key: ListedMcpApiKey): string {
  return `Revoked MCP key '${key.name}' (_id ${key._id}, ${key.keyPrefix}…) of ${key.userEmail ?? key.userId} at ${iso(key.revokedAt)}; it no longer authenticates.`;
}

export function describeIntegrations(keys: IntegrationKey[]): string {
  if (keys.length === 0) return 'No integration keys.';
  return table(
    ['NAME', 'CLIENT ID', '_ID', 'CREATED'],
    keys.map((key) => [key.name, key.clientId, key._id, iso(key.createdAt)]),
  );
}

export function describeRevokedIntegration(revoked: { clientId: string; name: string | null }): string {
  return `Revoked integration key '${revoked.name ?? revoked.clientId}' (${revoked.clientId}); it and its access tokens no longer work.`;
}

export function describeOutbox(page: OutboxPage): string {
  if (page.items.length === 0) return 'No e-mails match.';
  const lines = table(
    ['_ID', 'STATE', 'TO', 'SUBJECT', 'ATTEMPTS', 'CREATED', 'LAST ERROR'],
    page.items.map((mail) => [mail._id, mail.state, mail.to, mail.subject, String(mail.attempts), iso(mail.createdAt), mail.lastError ?? '-']),
  );
  return page.nextCursor ? `${lines}\nMore e-mails: --before ${page.nextCursor}` : lines;
}

export function describeWrittenBackup(written: WrittenBackup): string {
  return [
    `Backed up ${describeManifest(written.manifest)}`,
    `to ${written.file} (${megabytes(written.bytes)}, SHA-256 ${written.sha256}).`,
    written.manifest.secret === 'included'
      ? 'The file holds the deployment secret that encrypts environment variables: keep it as safe as the data folder.'
      : 'The deployment secret is TRELLIS_SECRET, which the file does not hold: keep it with the backup.',
  ].join('\n');
}

export function describeRestoredBackup(restored: RestoredBackup): string {
  return [
    `Restored ${describeManifest(restored.manifest)}`,
    `into ${restored.dataDir}. Start it with \`trellis serve\` (TRELLIS_DATA_DIR=${restored.dataDir}).`,
    ...(restored.manifest.secret === 'TRELLIS_SECRET'
      ? ['The backup was taken with TRELLIS_SECRET set: start the server with the same TRELLIS_SECRET, or environment variables cannot be decrypted.']
      : []),
  ].join('\n');
}

function describeManifest(manifest: BackupManifest): string {
  const application = manifest.application ? `'${manifest.application.name}'` : 'the data folder';
  return `${application} as of ${manifest.createdAt} (Trellis ${manifest.trellisVersion}, PostgreSQL ${manifest.postgresVersion}, schema ${manifest.schemaVersion ?? 'none'})`;
}

function keyState(key: ListedMcpApiKey): string {
  if (key.revokedAt) return 'revoked';
  return new Date(key.expiresAt).getTime() <= Date.now() ? 'expired' : 'active';
}

/** Rows under a header, each column as wide as its widest cell. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  return [header, ...rows].map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n');
}

function iso(value: When): string {
  return value === null ? '-' : new Date(value).toISOString();
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
