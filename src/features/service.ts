import { writeTransaction } from '../platform/db/write.js';
import { resolveNamedRecord } from '../platform/references.js';
import { featureRoleIds } from '../access/feature-grants.js';
import { requirePermission, type Principal } from '../access/permissions.js';
import { recordAudit } from '../audit/writer.js';
import { assertValidCode } from '../authoring/code-edits.js';
import { applyPatches, unifiedDiff } from '../authoring/code-patches.js';
import { sha256Hex } from '../platform/crypto.js';
import type { PlatformContext } from '../platform/context.js';
import type { Db } from '../platform/db/index.js';
import type { Row } from '../platform/db/types.js';
import { conflict, notFound } from '../platform/errors.js';
import { assertDistinctName } from '../platform/names.js';
import { assertMaxBytes, parseInput } from '../platform/validation.js';
import type { FeatureSchema } from './graphql-documents.js';
import { featureCodeNeeds, validateFeatureCode, type CodeValidation, type Finding } from './jsx-validation.js';
import type { DataNeed } from '../tables/access-schema.js';
import { missingAccess } from '../tables/table-access.js';
import {
  FEATURE_CODE_MAX_BYTES,
  createFeatureInput,
  deleteFeatureInput,
  editFeatureCodeInput,
  listFeaturesInput,
  updateFeatureInput,
  type CreateFeatureInput,
  type DeleteFeatureInput,
  type EditFeatureCodeInput,
  type FeatureStatus,
  type ListFeaturesInput,
  type UpdateFeatureInput,
} from './schema.js';

export interface Feature {
  _id: string;
  name: string;
  description: string;
  customCode: string;
  status: FeatureStatus;
  version: number;
  publishedVersion: number | null;
  createdBy: string | null;
  updatedBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Ids of the roles that see the feature. */
  roleIds: string[];
}

/** A feature as a create left it, with what the code validator warned about (warnings never block a save). */
export interface CreatedFeature extends Feature {
  warnings: Finding[];
}

export interface FeatureVersion {
  version: number;
  status: FeatureStatus;
  customCode: string;
  codeSha256: string;
  authorId: string | null;
  createdAt: Date;
}

export interface FeatureUpdate {
  feature: Feature;
  /** The code before this update, for adapters that answer with a diff. */
  previousCode: string;
  /**
   * What the code validator warned about in the saved code (nothing of the code's own when it was not
   * changed), and, on every update, each role that sees the feature and lacks a rule its code needs.
   */
  warnings: Finding[];
}

type FeatureChanges = Pick<UpdateFeatureInput, 'name' | 'description' | 'customCode' | 'status'>;
type FeatureWrite = 'feature.update' | 'feature.edit';

const MAX_ID_LENGTH = 64;

export class FeatureService {
  /**
   * @param featureSchema the application's current schema, which the GraphQL documents of feature
   * code are checked against; read before a write's transaction (on the embedded database the
   * schema's own reads would wait for it).
   */
  constructor(
    private readonly ctx: PlatformContext,
    private readonly featureSchema: () => Promise<FeatureSchema>,
  ) {}

  /**
   * Checks feature code without saving or executing it, as every feature write does: syntax,
   * imports, runtime rules, and its GraphQL documents against the application's current schema.
   */
  async validateCode(principal: Principal, code: string, featureRef?: string): Promise<CodeValidation> {
    requirePermission(principal, 'config:read');
    const featureSchema = await this.featureSchema();
    const validation = validateFeatureCode(code, featureSchema);
    if (!featureRef || !validation.valid) return validation;
    const featureId = await resolveNamedRecord(this.ctx.db, 'features', featureRef);
    return { ...validation, warnings: [...validation.warnings, ...(await dataWarnings(this.ctx.db, featureId, code, featureSchema))] };
  }

  /**
   * The tables and actions a feature's current code needs (D32), from its GraphQL documents.
   * Internal: no permission check (granting the feature checks `roles:write`).
   */
  async dataNeeds(featureRef: string): Promise<DataNeed[]> {
    const featureId = await resolveNamedRecord(this.ctx.db, 'features', featureRef);
    const feature = await this.ctx.db.selectFrom('features').select('custom_code').where('id', '=', featureId).executeTakeFirst();
    return feature ? featureCodeNeeds(feature.custom_code, await this.featureSchema()) : [];
  }

  /** Features whose name or `_id` contains `query` (case-insensitive), ordered by name. */
  async listFeatures(principal: Principal, input: ListFeaturesInput = {}): Promise<Feature[]> {
    requirePermission(principal, 'config:read');
    const { query } = parseInput(listFeaturesInput, input);
    let select = this.ctx.db.selectFrom('features').selectAll().orderBy('name').orderBy('id');
    if (query) {
      const pattern = `%${escapeLike(query.toLowerCase())}%`;
      select = select.where((eb) =>
        eb.or([eb(eb.fn('lower', ['name']), 'like', pattern), eb(eb.fn('lower', ['id']), 'like', pattern)]),
      );
    }
    const rows = await select.execute();
    const roles = await roleIdsByFeature(this.ctx.db, rows.map((r) => r.id));
    return rows.map((row) => toFeature(row, roles.get(row.id) ?? []));
  }

  async getFeature(principal: Principal, featureId: string): Promise<Feature> {
    requirePermission(principal, 'config:read');
    return readFeature(this.ctx.db, featureId);
  }

  /** Every saved version of a feature, newest first. */
  async listFeatureVersions(principal: Principal, featureId: string): Promise<FeatureVersion[]> {
    requirePermission(principal, 'config:read');
    const id = await resolveNamedRecord(this.ctx.db, 'features', featureId);
    const rows = await this.ctx.db
      .selectFrom('feature_versions')
      .selectAll()
      .where('feature_id', '=', id)
      .orderBy('version', 'desc')
      .execute();
    return rows.map(toFeatureVersion);
  }

  /** The unified diff from version `from` to version `to` of a feature (either order). */
  async versionDiff(principal: Principal, featureRef: string, from: number, to: number): Promise<string> {
    requirePermission(principal, 'config:read');
    const id = await resolveNamedRecord(this.ctx.db, 'features', featureRef);
    const rows = await this.ctx.db
      .selectFrom('feature_versions')
      .select(['version', 'custom_code'])
      .where('feature_id', '=', id)
      .where('version', 'in', [from, to])
      .execute();
    const code = (version: number) => {
      const row = rows.find((candidate) => candidate.version === version);
      if (!row) throw notFound(`Version ${version} of feature`, id);
      return row.custom_code;
    };
    return unifiedDiff(`${id}.jsx`, code(from), code(to));
  }

  /**
   * Creates a feature as version 1, visible to the built-in `admin` role and the creator's role.
   * Throws BAD_INPUT (also for code the validator finds errors in), CONFLICT (taken `_id` or
   * name) or PAYLOAD_TOO_LARGE (code over 1 MB).
   */
  async createFeature(principal: Principal, input: CreateFeatureInput): Promise<CreatedFeature> {
    const data = parseInput(createFeatureInput, input);
    requirePermission(principal, 'features:write');
    const featureSchema = await this.featureSchema();
    const warnings = checkCode(data.customCode, featureSchema);
    return writeTransaction(this.ctx, async (trx) => {
      await assertNameFree(trx, data.name);
      const id = data._id ?? (await freeIdFor(trx, data.name));
      if (data._id && (await featureExists(trx, data._id))) {
        throw conflict(`_id: a feature with _id '${data._id}' already exists`, { field: '_id' });
      }
      const now = new Date();
      await trx
        .insertInto('features')
        .values({
          id,
          name: data.name,
          description: data.description,
          custom_code: data.customCode,
          status: data.status,
          version: 1,
          published_version: data.status === 'published' ? 1 : null,
          created_by: principal.userId,
          updated_by: principal.userId,
          updated_at: now,
        })
        .execute();
      const codeSha256 = await insertVersion(trx, principal, id, 1, data.customCode, data.status);
      await grantDefaultRoles(trx, principal, id);
      await recordAudit(trx, principal, {
        action: 'feature.create',
        resourceType: 'feature',
        resourceId: id,
        details: { name: data.name, status: data.status, version: 1, codeSha256 },
      });
      return { ...(await readFeature(trx, id)), warnings: [...warnings, ...(await dataWarnings(trx, id, data.customCode, featureSchema))] };
    });
  }

  /**
   * Saves changes to a feature. A change of code or status adds a version; publishing points
   * `publishedVersion` at it, a draft keeps the previous published version. New code is
   * validated like at creation.
   */
  async updateFeature(principal: Principal, input: UpdateFeatureInput): Promise<FeatureUpdate> {
    const data = parseInput(updateFeatureInput, input);
    requirePermission(principal, 'features:write');
    const featureSchema = await this.featureSchema();
    const warnings = data.customCode === undefined ? [] : checkCode(data.customCode, featureSchema);
    return writeTransaction(this.ctx, async (trx) => {
      const current = await lockFeature(trx, data._id);
      return withDataWarnings(trx, await saveFeature(trx, principal, current, data, 'feature.update', warnings), featureSchema);
    });
  }

  /**
   * Applies old_str/new_str patches to the code read under a row lock, so concurrent edits never
   * lose an update, then validates and saves the result exactly like updateFeature. A patch that
   * does not match exactly once, or a result with errors, rejects the edit and nothing is written.
   */
  async editFeatureCode(principal: Principal, input: EditFeatureCodeInput): Promise<FeatureUpdate> {
    const data = parseInput(editFeatureCodeInput, input);
    requirePermission(principal, 'features:write');
    const featureSchema = await this.featureSchema();
    return writeTransaction(this.ctx, async (trx) => {
      const current = await lockFeature(trx, data._id);
      const customCode = applyPatches(current.custom_code, data.patches);
      const warnings = checkCode(customCode, featureSchema);
      return withDataWarnings(trx, await saveFeature(trx, principal, current, { customCode, status: data.status }, 'feature.edit', warnings), featureSchema);
    });
  }

  /** Deletes a feature with its versions and role grants; menus that point at it are left alone. */
  async deleteFeature(principal: Principal, input: DeleteFeatureInput): Promise<boolean> {
    const data = parseInput(deleteFeatureInput, input);
    requirePermission(principal, 'config:delete');
    return writeTransaction(this.ctx, async (trx) => {
      const id = await resolveNamedRecord(trx, 'features', data._id);
      const feature = await trx.selectFrom('features').select(['id', 'name']).where('id', '=', id).forUpdate().executeTakeFirst();
      if (!feature) throw notFound('Feature', data._id);
      await trx.deleteFrom('features').where('id', '=', feature.id).execute();
      await recordAudit(trx, principal, {
        action: 'feature.delete',
        resourceType: 'feature',
        resourceId: feature.id,
        details: { name: feature.name },
      });
      return true;
    });
  }
}

/**
 * Warnings for each role that sees the feature but may not do what its GraphQL documents need
 * (its rule is NONE, D32): the feature would answer FORBIDDEN for its users.
 */
async function dataWarnings(db: Db, featureId: string, code: string, featureSchema: FeatureSchema): Promise<Finding[]> {
  const needs = featureCodeNeeds(code, featureSchema);
  const missing = await missingAccess(db, await featureRoleIds(db, featureId), needs);
  return missing.map(({ role, table, action }) => ({
    code: 'DATA_ACCESS_MISSING',
    message: `Role '${role}' sees this feature but may not ${action} ${table} records, which its GraphQL documents need: grant_feature_access gives its roles what is missing, or set the table's access.`,
  }));
}

async function withDataWarnings(db: Db, update: FeatureUpdate, featureSchema: FeatureSchema): Promise<FeatureUpdate> {
  const extra = await dataWarnings(db, update.feature._id, update.feature.customCode, featureSchema);
  return extra.length ? { ...update, warnings: [...update.warnings, ...extra] } : update;
}

/** The warnings of code that fits the size limit and has no validation error; throws otherwise. */
function checkCode(code: string, featureSchema: FeatureSchema): Finding[] {
  assertMaxBytes('customCode', code, FEATURE_CODE_MAX_BYTES, '1 MB');
  return assertValidCode('customCode', validateFeatureCode(code, featureSchema));
}


/** The feature `featureRef` names (its `_id` or name), locked for this transaction. */
async function lockFeature(trx: Db, featureRef: string): Promise<Row<'features'>> {
  const featureId = await resolveNamedRecord(trx, 'features', featureRef);
  const current = await trx.selectFrom('features').selectAll().where('id', '=', featureId).forUpdate().executeTakeFirst();
  if (!current) throw notFound('Feature', featureId);
  return current;
}

/** Writes already validated changes over the locked row `current`: the row, a version when code or status changed, the audit entry. */
async function saveFeature(
  trx: Db,
  principal: Principal,
  current: Row<'features'>,
  changes: FeatureChanges,
  action: FeatureWrite,
  warnings: Finding[],
): Promise<FeatureUpdate> {
  if (changes.name !== undefined && changes.name !== current.name) await assertNameFree(trx, changes.name, current.id);
  const code = changes.customCode ?? current.custom_code;
  const status = changes.status ?? current.status;
  const newVersion = code !== current.custom_code || status !== current.status;
  const version = newVersion ? current.version + 1 : current.version;
  await trx
    .updateTable('features')
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      custom_code: code,
      status,
      version,
      published_version: newVersion && status === 'published' ? version : current.published_version,
      updated_by: principal.userId,
      updated_at: new Date(),
    })
    .where('id', '=', current.id)
    .execute();
  const codeSha256 = newVersion ? await insertVersion(trx, principal, current.id, version, code, status) : sha256Hex(code);
  await recordAudit(trx, principal, {
    action,
    resourceType: 'feature',
    resourceId: current.id,
    details: {
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.description !== undefined ? { descriptionChanged: true } : {}),
      status,
      version,
      codeSha256,
    },
  });
  return { feature: await readFeature(trx, current.id), previousCode: current.custom_code, warnings };
}

/** Refuses a name another feature has, in any letter case, or that looks like one (D33); `exceptId` is the feature being renamed. */
async function assertNameFree(trx: Db, name: string, exceptId?: string): Promise<void> {
  let others = trx.selectFrom('features').select('name');
  if (exceptId) others = others.where('id', '!=', exceptId);
  assertDistinctName(name, (await others.execute()).map((feature) => feature.name), { what: 'feature', field: 'name' });
}

async function featureExists(trx: Db, id: string): Promise<boolean> {
  return (await trx.selectFrom('features').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** A slug of `name` that no feature uses yet: `my-feature`, else `my-feature-2`, `my-feature-3`... */
async function freeIdFor(trx: Db, name: string): Promise<string> {
  const base = slugify(name);
  const rows = await trx
    .selectFrom('features')
    .select('id')
    .where((eb) => eb.or([eb('id', '=', base), eb('id', 'like', `${escapeLike(base)}-%`)]))
    .execute();
  const taken = new Set(rows.map((r) => r.id));
  let candidate = base;
  for (let n = 2; taken.has(candidate); n++) {
    const suffix = `-${n}`;
    candidate = base.slice(0, MAX_ID_LENGTH - suffix.length).replace(/-+$/, '') + suffix;
  }
  return candidate;
}

function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, MAX_ID_LENGTH)
    .replace(/^-+|-+$/g, '');
  return slug.length >= 2 ? slug : `feature${slug ? `-${slug}` : ''}`;
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

async function insertVersion(
  trx: Db,
  principal: Principal,
  featureId: string,
  version: number,
  code: string,
  status: FeatureStatus,
): Promise<string> {
  const codeSha256 = sha256Hex(code);
  await trx
    .insertInto('feature_versions')
    .values({ feature_id: featureId, version, custom_code: code, status, code_sha256: codeSha256, author_id: principal.userId })
    .execute();
  return codeSha256;
}

async function grantDefaultRoles(trx: Db, principal: Principal, featureId: string): Promise<void> {
  const admin = await trx.selectFrom('roles').select('id').where('name', '=', 'admin').where('builtin', '=', true).executeTakeFirst();
  const creator = principal.userId
    ? await trx.selectFrom('users').select('role_id').where('id', '=', principal.userId).executeTakeFirst()
    : undefined;
  const roleIds = [...new Set([admin?.id, creator?.role_id].filter((id): id is string => id !== undefined))];
  if (!roleIds.length) return;
  await trx
    .insertInto('role_features')
    .values(roleIds.map((roleId) => ({ role_id: roleId, feature_id: featureId })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

async function readFeature(db: Db, featureRef: string): Promise<Feature> {
  const featureId = await resolveNamedRecord(db, 'features', featureRef);
  const row = await db.selectFrom('features').selectAll().where('id', '=', featureId).executeTakeFirst();
  if (!row) throw notFound('Feature', featureId);
  return toFeature(row, await featureRoleIds(db, featureId));
}

async function roleIdsByFeature(db: Db, featureIds: string[]): Promise<Map<string, string[]>> {
  const byFeature = new Map<string, string[]>();
  if (!featureIds.length) return byFeature;
  const rows = await db
    .selectFrom('role_features')
    .select(['feature_id', 'role_id'])
    .where('feature_id', 'in', featureIds)
    .orderBy('role_id')
    .execute();
  for (const row of rows) byFeature.set(row.feature_id, [...(byFeature.get(row.feature_id) ?? []), row.role_id]);
  return byFeature;
}

function toFeature(row: Row<'features'>, roleIds: string[]): Feature {
  return {
    _id: row.id,
    name: row.name,
    description: row.description,
    customCode: row.custom_code,
    status: row.status,
    version: row.version,
    publishedVersion: row.published_version,
    createdBy: row.created_by,
    updatedBy: row.updated_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    roleIds,
  };
}

function toFeatureVersion(row: Row<'feature_versions'>): FeatureVersion {
  return {
    version: row.version,
    status: row.status,
    customCode: row.custom_code,
    codeSha256: row.code_sha256,
    authorId: row.author_id,
    createdAt: row.created_at,
  };
}
