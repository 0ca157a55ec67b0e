import { recordAudit } from '../audit/writer.js';
import type { PlatformContext } from '../platform/context.js';
import type { Db } from '../platform/db/index.js';
import { writeTransaction } from '../platform/db/write.js';
import { resolveNamedRecord } from '../platform/references.js';
import { parseInput } from '../platform/validation.js';
import type { DataGrantReport, DataNeed } from '../tables/access-schema.js';
import { requirePermission, type Principal } from './permissions.js';
import { grantFeatureAccessInput, type GrantFeatureAccessInput } from './schema.js';

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

/** Which roles see which features, and what a grant gives them of the tables the feature needs. */
export class FeatureGrantService {
  /**
   * @param dataGrants what granting a feature does to the data access of its roles (D32); without
   * it a grant changes only which features roles see.
   */
  constructor(
    private readonly ctx: PlatformContext,
    private readonly dataGrants?: FeatureDataGrants,
  ) {}

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

  /** The roles that see a feature, named by its _id or its name (NOT_FOUND when there is none). */
  async featureRoles(principal: Principal, featureRef: string): Promise<string[]> {
    requirePermission(principal, 'config:read');
    return featureRoleIds(this.ctx.db, await resolveNamedRecord(this.ctx.db, 'features', featureRef));
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
      const ids = [...new Set(resolvedRoles)];
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
}

/** Ids of the roles that see `featureId`, in order. Internal: no permission check. */
export async function featureRoleIds(db: Db, featureId: string): Promise<string[]> {
  const rows = await db.selectFrom('role_features').select('role_id').where('feature_id', '=', featureId).orderBy('role_id').execute();
  return rows.map((r) => r.role_id);
}
