import { writeTransaction } from '../platform/db/write.js';
import { sql } from 'kysely';
import { requireAdmin, rolePermissions, type DataRole, type Principal } from '../access/permissions.js';
import { recordAudit } from '../audit/writer.js';
import { newId, randomSecret, safeEqual, sha256Hex } from '../platform/crypto.js';
import type { PlatformContext } from '../platform/context.js';
import type { Row } from '../platform/db/types.js';
import { badInput, conflict, forbidden, notFound, toTrellisError, unauthenticated } from '../platform/errors.js';
import { ReadCache } from '../platform/read-cache.js';
import { resolveNamedRecord } from '../platform/references.js';
import { parseInput } from '../platform/validation.js';
import {
  IDENTITY_PROVIDER_CREDENTIALS_REFUSED,
  accessTokenRequestInput,
  createIntegrationKeyInput,
  deleteIntegrationKeyInput,
  type CreateIntegrationKeyInput,
  type DeleteIntegrationKeyInput,
} from './schema.js';

export const CLIENT_ID_PREFIX = 'trc_';
export const INTEGRATION_KEY_PREFIX = 'trik_';
/** The fixed prefix of every access token issued by `POST /api/auth/token`. */
export const ACCESS_TOKEN_PREFIX = 'tat_';
/** How long a resolved access token or acting user is trusted without a change notification. */
const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;
const MAX_USER_ID_LENGTH = 100;
/** Compared against when the clientId is unknown, so that both failures take the same time. */
const ABSENT_HASH = sha256Hex('trellis: no such integration');

/** An integration key as every answer shows it: never the apiKey, never its hash. */
export interface IntegrationKey {
  _id: string;
  name: string;
  clientId: string;
  /** The role whose data-access rules it acts with; null: every record of every table. */
  roleId: string | null;
  createdAt: Date;
}

/** The answer to an integration key creation: the only place the apiKey ever appears. */
export interface CreatedIntegrationKey {
  clientId: string;
  apiKey: string;
  integration: IntegrationKey;
}

/** The answer of the token endpoint, before the route names it as docs/spec.md 4.3 does. */
export interface IssuedAccessToken {
  accessToken: string;
  expiresIn: number;
}

/** The integration an access token was issued to, as far as a request needs it. */
export interface TokenIntegration {
  clientId: string;
  name: string;
  /** The key's role when it is not an admin role: its rules bound the integration's records. */
  dataRole: DataRole | null;
}

/** The user an integration acts for (`x-userid`). */
export interface ActingUser {
  id: string;
  email: string;
  /** The name of the user's role. */
  role: string;
  /** The user's role when it is not an admin role: its rules bound the records too. */
  dataRole: DataRole | null;
}

interface CachedToken {
  integration: TokenIntegration | undefined;
  expiresAt: number;
}

export class IntegrationService {
  /**
   * Resolved tokens and acting users. Deleting an integration key (a configuration write) and
   * user changes ('auth') clear both at once on every replica.
   */
  private readonly tokens: ReadCache<CachedToken>;
  private readonly users: ReadCache<ActingUser | null>;

  constructor(private readonly ctx: PlatformContext) {
    this.tokens = new ReadCache(ctx.changes, { ttlMs: CACHE_TTL_MS, maxEntries: CACHE_MAX });
    this.users = new ReadCache(ctx.changes, { ttlMs: CACHE_TTL_MS, maxEntries: CACHE_MAX });
  }

  /** Creates client credentials for an external integration (admin only); names are unique ignoring case. */
  async createIntegrationKey(principal: Principal, input: CreateIntegrationKeyInput): Promise<CreatedIntegrationKey> {
    const { name, roleId } = parseInput(createIntegrationKeyInput, input);
    requireAdmin(principal);
    const clientId = CLIENT_ID_PREFIX + randomSecret(12);
    const apiKey = INTEGRATION_KEY_PREFIX + randomSecret();
    return writeTransaction(this.ctx, async (trx) => {
      const taken = await trx
        .selectFrom('integration_keys')
        .select('name')
        .where(sql<string>`lower(name)`, '=', name.toLowerCase())
        .executeTakeFirst();
      if (taken) throw conflict(`An integration key named '${taken.name}' already exists`, { field: 'name' });
      const role = roleId ? await resolveNamedRecord(trx, 'roles', roleId) : null;
      const row = await trx
        .insertInto('integration_keys')
        .values({ id: newId(), app_id: this.ctx.appId, name, client_id: clientId, key_hash: sha256Hex(apiKey), created_by: principal.userId, role_id: role })
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordAudit(trx, principal, {
        action: 'integration_key.create',
        resourceType: 'integration_key',
        resourceId: row.id,
        details: { name, clientId, roleId: role },
      });
      return { clientId, apiKey, integration: toIntegrationKey(row) };
    });
  }

  /** Every integration key of the application, newest first (admin only). */
  async listIntegrationKeys(principal: Principal): Promise<IntegrationKey[]> {
    requireAdmin(principal);
    const rows = await this.ctx.db
      .selectFrom('integration_keys')
      .selectAll()
      .where('app_id', '=', this.ctx.appId)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map(toIntegrationKey);
  }

  /** Deletes an integration key and, in the same transaction, every access token issued to it. */
  async deleteIntegrationKey(principal: Principal, input: DeleteIntegrationKeyInput): Promise<boolean> {
    const { clientId } = parseInput(deleteIntegrationKeyInput, input);
    requireAdmin(principal);
    return writeTransaction(this.ctx, async (trx) => {
      const row = await trx
        .selectFrom('integration_keys')
        .selectAll()
        .where('client_id', '=', clientId)
        .where('app_id', '=', this.ctx.appId)
        .forUpdate()
        .executeTakeFirst();
      if (!row) throw notFound('Integration key', clientId);
      const tokens = await trx.deleteFrom('access_tokens').where('client_id', '=', clientId).executeTakeFirst();
      await trx.deleteFrom('integration_keys').where('id', '=', row.id).execute();
      await recordAudit(trx, principal, {
        action: 'integration_key.delete',
        resourceType: 'integration_key',
        resourceId: row.id,
        details: { name: row.name, clientId, accessTokensRevoked: Number(tokens.numDeletedRows) },
      });
      return true;
    });
  }

  /**
   * The integration that `clientId` and `apiKey` identify, for the token endpoint. Throws the
   * generic UNAUTHENTICATED when either is wrong; the hashes are compared in constant time.
   */
  async verifyIntegrationCredentials(clientId: string, apiKey: string): Promise<IntegrationKey> {
    const row = await this.ctx.db
      .selectFrom('integration_keys')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('app_id', '=', this.ctx.appId)
      .executeTakeFirst();
    const matches = safeEqual(sha256Hex(apiKey), row?.key_hash ?? ABSENT_HASH);
    if (!row || !matches) throw unauthenticated();
    return toIntegrationKey(row);
  }

  /**
   * Exchanges an integration key's `clientId` and `apiKey` for an opaque access token valid for
   * TRELLIS_TOKEN_TTL seconds; only the token's SHA-256 is stored. Throws BAD_INPUT for an identity
   * provider's `client_id`/`client_secret` or a malformed body, the generic UNAUTHENTICATED for
   * wrong credentials.
   */
  async issueAccessToken(input: unknown): Promise<IssuedAccessToken> {
    refuseIdentityProviderCredentials(input);
    const { clientId, apiKey } = parseInput(accessTokenRequestInput, input);
    const integration = await this.verifyIntegrationCredentials(clientId, apiKey);
    const accessToken = ACCESS_TOKEN_PREFIX + randomSecret();
    const expiresIn = this.ctx.config.tokenTtlSeconds;
    const now = Date.now();
    try {
      await this.ctx.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('access_tokens').where('client_id', '=', integration.clientId).where('expires_at', '<=', new Date(now)).execute();
        await trx
          .insertInto('access_tokens')
          .values({ token_hash: sha256Hex(accessToken), client_id: integration.clientId, expires_at: new Date(now + expiresIn * 1000) })
          .execute();
      });
    } catch (error) {
      // The integration key was deleted while its token was being issued.
      if (toTrellisError(error).code === 'CONFLICT') throw unauthenticated();
      throw error;
    }
    return { accessToken, expiresIn };
  }

  /**
   * The principal of a request bearing an access token: the integration, acting for the user
   * `actingUserId` names (`x-userid`) when given. Throws the generic UNAUTHENTICATED for an unknown
   * or expired token or a deleted integration, FORBIDDEN for an unknown or disabled acting user.
   */
  async principalForAccessToken(token: string, actingUserId?: string): Promise<Principal> {
    const integration = await this.resolveAccessToken(token);
    if (actingUserId === undefined) return integrationPrincipal(integration);
    return integrationPrincipal(integration, await this.actingUser(actingUserId));
  }

  private async resolveAccessToken(token: string): Promise<TokenIntegration> {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX)) throw unauthenticated();
    const hash = sha256Hex(token);
    let entry = this.tokens.get(hash);
    if (!entry) {
      const generation = this.tokens.generation();
      entry = await this.loadToken(hash);
      this.tokens.set(hash, entry, generation);
    }
    if (!entry.integration || entry.expiresAt <= Date.now()) throw unauthenticated();
    return entry.integration;
  }

  private async loadToken(hash: string): Promise<CachedToken> {
    const row = await this.ctx.db
      .selectFrom('access_tokens as t')
      .innerJoin('integration_keys as k', 'k.client_id', 't.client_id')
      .leftJoin('roles as r', 'r.id', 'k.role_id')
      .select(['k.client_id', 'k.name', 't.expires_at', 'r.id as role_id', 'r.name as role_name', 'r.permissions as role_permissions'])
      .where('t.token_hash', '=', hash)
      .where('k.app_id', '=', this.ctx.appId)
      .executeTakeFirst();
    if (!row) return { integration: undefined, expiresAt: 0 };
    const dataRole = row.role_id && row.role_name ? nonAdminRole(row.role_id, row.role_name, row.role_permissions ?? []) : null;
    return { integration: { clientId: row.client_id, name: row.name, dataRole }, expiresAt: row.expires_at.getTime() };
  }

  private async actingUser(userId: string): Promise<ActingUser> {
    let user = userId.length > MAX_USER_ID_LENGTH ? null : this.users.get(userId);
    if (user === undefined) {
      const generation = this.users.generation();
      const row = await this.ctx.db
        .selectFrom('users as u')
        .innerJoin('roles as r', 'r.id', 'u.role_id')
        .select(['u.id', 'u.email', 'u.disabled', 'r.id as role_id', 'r.name as role', 'r.permissions'])
        .where('u.id', '=', userId)
        .executeTakeFirst();
      user = row && !row.disabled ? { id: row.id, email: row.email, role: row.role, dataRole: nonAdminRole(row.role_id, row.role, row.permissions) } : null;
      this.users.set(userId, user, generation);
    }
    if (!user) throw forbidden(`x-userid: user '${userId}' does not exist or is disabled`, { field: 'x-userid' });
    return user;
  }
}

/**
 * The principal of an integration: no builder permission (integrations reach the application's
 * generated operations only), author `actingUser` when the request names one through `x-userid`.
 */
export function integrationPrincipal(
  integration: TokenIntegration,
  actingUser?: ActingUser,
  source: Principal['source'] = 'graphql',
): Principal {
  const label = `integration ${integration.name} (${integration.clientId})`;
  return {
    kind: 'integration',
    userId: actingUser?.id ?? null,
    ...(actingUser ? { userEmail: actingUser.email, userRole: actingUser.role } : {}),
    label: actingUser ? `${label} for ${actingUser.email}` : label,
    isAdmin: false,
    permissions: new Set(),
    source,
    credentialId: integration.clientId,
    via: integration.name,
    // x-userid never widens access: both roles' rules hold at once.
    dataRoles: [integration.dataRole, actingUser?.dataRole].filter((role): role is DataRole => role != null),
  };
}

/** The role as a bound on records, or null for an admin role (admins reach every record). */
function nonAdminRole(id: string, name: string, permissions: readonly string[]): DataRole | null {
  return rolePermissions(permissions).has('admin') ? null : { id, name };
}

/** Refuses the credentials of an identity provider, which API 2.10.0 stopped accepting. */
function refuseIdentityProviderCredentials(input: unknown): void {
  if (typeof input !== 'object' || input === null) return;
  const field = ['client_id', 'client_secret'].find((name) => name in input);
  if (field) throw badInput(IDENTITY_PROVIDER_CREDENTIALS_REFUSED, { field });
}

function toIntegrationKey(row: Row<'integration_keys'>): IntegrationKey {
  return { _id: row.id, name: row.name, clientId: row.client_id, roleId: row.role_id, createdAt: row.created_at };
}
