import { writeTransaction } from '../platform/db/write.js';
import { sql } from 'kysely';
import { requireAdmin, type Principal } from '../access/permissions.js';
import { recordAudit } from '../audit/writer.js';
import { newId, randomSecret, safeEqual, sha256Hex } from '../platform/crypto.js';
import type { PlatformContext } from '../platform/context.js';
import type { Row } from '../platform/db/types.js';
import { conflict, notFound, unauthenticated } from '../platform/errors.js';
import { parseInput } from '../platform/validation.js';
import {
  createIntegrationKeyInput,
  deleteIntegrationKeyInput,
  type CreateIntegrationKeyInput,
  type DeleteIntegrationKeyInput,
} from './schema.js';

export const CLIENT_ID_PREFIX = 'trc_';
export const INTEGRATION_KEY_PREFIX = 'trik_';
/** Compared against when the clientId is unknown, so that both failures take the same time. */
const ABSENT_HASH = sha256Hex('trellis: no such integration');

/** An integration key as every answer shows it: never the apiKey, never its hash. */
export interface IntegrationKey {
  _id: string;
  name: string;
  clientId: string;
  createdAt: Date;
}

/** The answer to an integration key creation: the only place the apiKey ever appears. */
export interface CreatedIntegrationKey {
  clientId: string;
  apiKey: string;
  integration: IntegrationKey;
}

export class IntegrationService {
  constructor(private readonly ctx: PlatformContext) {}

  /** Creates client credentials for an external integration (admin only); names are unique ignoring case. */
  async createIntegrationKey(principal: Principal, input: CreateIntegrationKeyInput): Promise<CreatedIntegrationKey> {
    const { name } = parseInput(createIntegrationKeyInput, input);
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
      const row = await trx
        .insertInto('integration_keys')
        .values({ id: newId(), app_id: this.ctx.appId, name, client_id: clientId, key_hash: sha256Hex(apiKey), created_by: principal.userId })
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordAudit(trx, principal, {
        action: 'integration_key.create',
        resourceType: 'integration_key',
        resourceId: row.id,
        details: { name, clientId },
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
}

function toIntegrationKey(row: Row<'integration_keys'>): IntegrationKey {
  return { _id: row.id, name: row.name, clientId: row.client_id, createdAt: row.created_at };
}
