import { writeTransaction } from '../platform/db/write.js';
import { requirePermission, type Principal } from '../access/permissions.js';
import { recordAudit } from '../audit/writer.js';
import type { PlatformContext } from '../platform/context.js';
import { newId } from '../platform/crypto.js';
import type { Row } from '../platform/db/types.js';
import { notFound } from '../platform/errors.js';
import { assertMaxBytes, parseInput } from '../platform/validation.js';
import {
  ENV_VALUE_MAX_BYTES,
  deleteEnvironmentVariableInput,
  setEnvironmentVariableInput,
  type DeleteEnvironmentVariableInput,
  type SetEnvironmentVariableInput,
} from './schema.js';

/** An environment variable as every API shows it: the name, never the value. */
export interface EnvironmentVariable {
  _id: string;
  name: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface SetEnvironmentVariableResult extends EnvironmentVariable {
  /** True when the variable did not exist before. */
  created: boolean;
}

export class EnvVarService {
  constructor(private readonly ctx: PlatformContext) {}

  /** Names and timestamps only. */
  async listEnvironmentVariables(principal: Principal): Promise<EnvironmentVariable[]> {
    requirePermission(principal, 'config:read');
    const rows = await this.ctx.db.selectFrom('env_vars').select(['id', 'name', 'created_at', 'updated_at']).orderBy('name').execute();
    return rows.map(toEnvironmentVariable);
  }

  /** Creates or updates a variable; the value is stored encrypted and never returned or audited. */
  async setEnvironmentVariable(principal: Principal, input: SetEnvironmentVariableInput): Promise<SetEnvironmentVariableResult> {
    const data = parseInput(setEnvironmentVariableInput, input);
    requirePermission(principal, 'env:write');
    assertMaxBytes('value', data.value, ENV_VALUE_MAX_BYTES, '64 KB');
    const ciphertext = this.ctx.secretBox.encrypt(data.value);
    return writeTransaction(this.ctx, async (trx) => {
      const existing = await trx.selectFrom('env_vars').select('id').where('name', '=', data.name).forUpdate().executeTakeFirst();
      const id = existing?.id ?? newId();
      if (existing) {
        await trx
          .updateTable('env_vars')
          .set({ value_ciphertext: ciphertext, updated_by: principal.userId, updated_at: new Date() })
          .where('id', '=', id)
          .execute();
      } else {
        await trx
          .insertInto('env_vars')
          .values({
            id,
            name: data.name,
            value_ciphertext: ciphertext,
            created_by: principal.userId,
            updated_by: principal.userId,
            updated_at: new Date(),
          })
          .execute();
      }
      await recordAudit(trx, principal, {
        action: existing ? 'env.update' : 'env.create',
        resourceType: 'env_var',
        resourceId: id,
        details: { name: data.name },
      });
      const row = await trx.selectFrom('env_vars').select(['id', 'name', 'created_at', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow();
      return { ...toEnvironmentVariable(row), created: !existing };
    });
  }

  async deleteEnvironmentVariable(principal: Principal, input: DeleteEnvironmentVariableInput): Promise<boolean> {
    const data = parseInput(deleteEnvironmentVariableInput, input);
    requirePermission(principal, 'env:write');
    return writeTransaction(this.ctx, async (trx) => {
      const row = await trx.selectFrom('env_vars').select('id').where('name', '=', data.name).forUpdate().executeTakeFirst();
      if (!row) throw notFound('Environment variable', data.name);
      await trx.deleteFrom('env_vars').where('id', '=', row.id).execute();
      await recordAudit(trx, principal, { action: 'env.delete', resourceType: 'env_var', resourceId: row.id, details: { name: data.name } });
      return true;
    });
  }
}

/**
 * Every variable's decrypted value by name, for the hook runtime. Internal: no permission check
 * and exposed by no API.
 */
export async function decryptEnvironment(ctx: PlatformContext): Promise<Record<string, string>> {
  const rows = await ctx.db.selectFrom('env_vars').select(['name', 'value_ciphertext']).execute();
  return Object.fromEntries(rows.map((row) => [row.name, ctx.secretBox.decrypt(row.value_ciphertext)]));
}

function toEnvironmentVariable(row: Pick<Row<'env_vars'>, 'id' | 'name' | 'created_at' | 'updated_at'>): EnvironmentVariable {
  return { _id: row.id, name: row.name, createdAt: row.created_at, updatedAt: row.updated_at };
}
