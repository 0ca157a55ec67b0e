import { writeTransaction } from '../platform/db/write.js';
import {
  ADMIN_ONLY_SCOPES,
  SCOPES,
  requireAdmin,
  requirePermission,
  rolePermissions,
  type Permission,
  type Principal,
  type Scope,
} from '../access/permissions.js';
import { recordAudit } from '../audit/writer.js';
import { newId, randomSecret, sha256Hex } from '../platform/crypto.js';
import type { PlatformContext } from '../platform/context.js';
import { ReadCache } from '../platform/read-cache.js';
import type { Db } from '../platform/db/index.js';
import type { Row } from '../platform/db/types.js';
import { badInput, forbidden, notFound, unauthenticated } from '../platform/errors.js';
import { parseInput } from '../platform/validation.js';
import { createMcpApiKeyInput, revokeMcpApiKeyInput, type CreateMcpApiKeyInput } from './schema.js';

/** The fixed prefix of every raw MCP key (docs/spec.md 2.1: `<KEY_PREFIX>_<random>`). */
export const MCP_KEY_PREFIX = 'trellis_';
/** How many leading characters of the raw key are kept visible as `keyPrefix`. */
const VISIBLE_PREFIX_LENGTH = 12;
/** `last_used_at` is written at most this often per key, so a busy key does not write on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** An MCP key as every answer shows it: never the raw key, never its hash. */
export interface McpApiKey {
  _id: string;
  name: string;
  keyPrefix: string;
  scopes: string[];
  expiresAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
  /** The user the key acts as. */
  userId: string;
}

/** The answer to a key creation: the only place the raw key ever appears. */
export interface CreatedMcpApiKey {
  apiKey: string;
  key: McpApiKey;
}

export interface ResolvedMcpKey {
  keyId: string;
  principal: Principal;
}

interface KeyOwner {
  id: string;
  email: string;
  disabled: boolean;
  permissions: Set<Permission>;
}

interface CachedKey {
  resolved: ResolvedMcpKey | undefined;
  expiresAt: number;
  lastTouched: number;
}

const KEY_CACHE_MAX = 10_000;

export class KeyService {
  /** Resolved keys; revocations, user and role changes clear it at once on every replica (ChangeBus 'auth'). */
  private readonly cache: ReadCache<CachedKey>;

  constructor(private readonly ctx: PlatformContext) {
    this.cache = new ReadCache(ctx.changes, { topics: ['auth'], maxEntries: KEY_CACHE_MAX });
  }

  /** Creates a key for the signed-in caller, who needs the 'ai_designer' permission. */
  async createMcpApiKey(principal: Principal, input: CreateMcpApiKeyInput): Promise<CreatedMcpApiKey> {
    const data = parseInput(createMcpApiKeyInput, input);
    requirePermission(principal, 'ai_designer');
    if (!principal.userId) throw forbidden('An MCP key belongs to a user: sign in as the user who will own it');
    requireGrantable(data.scopes, principal.isAdmin, 'you are not an admin');
    return this.insertKey(principal, principal.userId, data);
  }

  /**
   * Creates a key owned by `userId` on an admin's behalf (the CLI). The user must exist, be enabled
   * and hold 'ai_designer'; admin-only scopes need that user to be an admin.
   */
  async createMcpApiKeyForUser(principal: Principal, userId: string, input: CreateMcpApiKeyInput): Promise<CreatedMcpApiKey> {
    const data = parseInput(createMcpApiKeyInput, input);
    requireAdmin(principal);
    const owner = await loadKeyOwner(this.ctx.db, userId);
    if (!owner) throw notFound('User', userId);
    if (owner.disabled) throw badInput(`user: ${owner.email} is disabled`, { field: 'user' });
    if (!owner.permissions.has('ai_designer')) {
      throw forbidden(`The role of ${owner.email} lacks the 'ai_designer' permission`, { missingPermission: 'ai_designer' });
    }
    requireGrantable(data.scopes, owner.permissions.has('admin'), `${owner.email} is not an admin`);
    return this.insertKey(principal, owner.id, data);
  }

  /** The caller's own keys, newest first, revoked and expired ones included. */
  /** The caller's keys; with `all`, every key of the application (admins only). */
  async listMcpApiKeys(principal: Principal, options: { all?: boolean } = {}): Promise<McpApiKey[]> {
    if (options.all) requireAdmin(principal);
    else if (!principal.userId) return [];
    let query = this.ctx.db.selectFrom('mcp_api_keys').selectAll().where('app_id', '=', this.ctx.appId);
    if (!options.all) query = query.where('user_id', '=', principal.userId!);
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map(toMcpApiKey);
  }

  /** Revokes a key of the caller (or any key, for an admin). Revoking twice keeps the first time. */
  async revokeMcpApiKey(principal: Principal, keyId: string): Promise<McpApiKey> {
    const { _id } = parseInput(revokeMcpApiKeyInput, { _id: keyId });
    const key = await writeTransaction(this.ctx, async (trx) => {
      const row = await trx
        .selectFrom('mcp_api_keys')
        .selectAll()
        .where('id', '=', _id)
        .where('app_id', '=', this.ctx.appId)
        .forUpdate()
        .executeTakeFirst();
      if (!row || (row.user_id !== principal.userId && !principal.isAdmin)) throw notFound('MCP API key', _id);
      if (row.revoked_at) return toMcpApiKey(row);
      const revoked = await trx
        .updateTable('mcp_api_keys')
        .set({ revoked_at: new Date() })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordAudit(trx, principal, {
        action: 'mcp_key.revoke',
        resourceType: 'mcp_api_key',
        resourceId: row.id,
        details: { name: row.name, keyPrefix: row.key_prefix, userId: row.user_id },
      });
      return toMcpApiKey(revoked);
    });
    await this.ctx.changes.publish('auth');
    return key;
  }

  /**
   * The principal an MCP request acts as. Permissions are evaluated now: the key's scopes that the
   * user's current role still grants, admin-only scopes only while the user is an admin. Throws the
   * generic UNAUTHENTICATED for an unknown, expired, revoked or foreign key, a disabled user, or a
   * key left with no permission at all.
   */
  async resolveMcpKey(rawKey: string): Promise<ResolvedMcpKey> {
    if (!rawKey.startsWith(MCP_KEY_PREFIX)) throw unauthenticated();
    const hash = sha256Hex(rawKey);
    const now = Date.now();
    const entry = await this.cache.load(hash, () => this.loadKey(hash, now), now);
    if (!entry.resolved || entry.expiresAt <= now) throw unauthenticated();
    if (now - entry.lastTouched >= LAST_USED_RESOLUTION_MS) {
      entry.lastTouched = now;
      await this.touch(entry.resolved.keyId);
    }
    return entry.resolved;
  }

  /** Reads a key and its user now; a key that cannot authenticate is cached as such too. */
  private async loadKey(hash: string, now: number): Promise<CachedKey> {
    const row = await this.ctx.db.selectFrom('mcp_api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
    const refused: CachedKey = { resolved: undefined, expiresAt: 0, lastTouched: now };
    if (!row || row.revoked_at || row.app_id !== this.ctx.appId) return refused;
    const owner = await loadKeyOwner(this.ctx.db, row.user_id);
    if (!owner || owner.disabled) return refused;
    const permissions = effectiveScopes(row.scopes, owner.permissions);
    if (permissions.size === 0) return refused;
    return {
      resolved: {
        keyId: row.id,
        principal: { kind: 'user', userId: owner.id, label: owner.email, isAdmin: false, permissions, source: 'mcp', credentialId: row.id },
      },
      expiresAt: row.expires_at.getTime(),
      lastTouched: row.last_used_at?.getTime() ?? 0,
    };
  }

  private async touch(keyId: string): Promise<void> {
    await this.ctx.db.updateTable('mcp_api_keys').set({ last_used_at: new Date() }).where('id', '=', keyId).execute();
  }

  private async insertKey(
    principal: Principal,
    userId: string,
    data: { name: string; scopes: Scope[]; expiresInDays: number },
  ): Promise<CreatedMcpApiKey> {
    const apiKey = MCP_KEY_PREFIX + randomSecret();
    const scopes = SCOPES.filter((scope) => data.scopes.includes(scope));
    const id = newId();
    const expiresAt = new Date(Date.now() + data.expiresInDays * DAY_MS);
    return writeTransaction(this.ctx, async (trx) => {
      const row = await trx
        .insertInto('mcp_api_keys')
        .values({
          id,
          app_id: this.ctx.appId,
          user_id: userId,
          name: data.name,
          key_prefix: apiKey.slice(0, VISIBLE_PREFIX_LENGTH),
          key_hash: sha256Hex(apiKey),
          scopes: JSON.stringify(scopes),
          expires_at: expiresAt,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordAudit(trx, principal, {
        action: 'mcp_key.create',
        resourceType: 'mcp_api_key',
        resourceId: id,
        details: { name: data.name, keyPrefix: row.key_prefix, scopes, userId, expiresAt: expiresAt.toISOString() },
      });
      return { apiKey, key: toMcpApiKey(row) };
    });
  }
}

/** The key's scopes that the user's role grants now; admin-only scopes only for a current admin. */
export function effectiveScopes(keyScopes: readonly string[], rolePermissionSet: ReadonlySet<Permission>): Set<Permission> {
  const isAdmin = rolePermissionSet.has('admin');
  return new Set(
    SCOPES.filter((scope) => keyScopes.includes(scope) && rolePermissionSet.has(scope) && (isAdmin || !ADMIN_ONLY_SCOPES.has(scope))),
  );
}

function requireGrantable(scopes: readonly Scope[], ownerIsAdmin: boolean, reason: string): void {
  if (ownerIsAdmin) return;
  const adminOnly = scopes.find((scope) => ADMIN_ONLY_SCOPES.has(scope));
  if (adminOnly) {
    throw forbidden(`The scope '${adminOnly}' can only be granted to an admin, and ${reason}`, { scope: adminOnly });
  }
}

async function loadKeyOwner(db: Db, userId: string): Promise<KeyOwner | undefined> {
  const row = await db
    .selectFrom('users as u')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .select(['u.id', 'u.email', 'u.disabled', 'r.permissions'])
    .where('u.id', '=', userId)
    .executeTakeFirst();
  return row && { id: row.id, email: row.email, disabled: row.disabled, permissions: rolePermissions(row.permissions) };
}

function toMcpApiKey(row: Row<'mcp_api_keys'>): McpApiKey {
  return {
    _id: row.id,
    name: row.name,
    keyPrefix: row.key_prefix,
    scopes: row.scopes,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    createdAt: row.created_at,
    userId: row.user_id,
  };
}
