import { requirePermission, type Principal } from '../access/permissions.js';
import type { ApplicationService } from '../application/service.js';
import { MENU_PATH_PREFIX } from '../menus/schema.js';
import type { PlatformContext } from '../platform/context.js';
import { forbidden, notFound, unauthenticated } from '../platform/errors.js';
import { resolveNamedRecord } from '../platform/references.js';
import { assertMaxBytes, parseInput } from '../platform/validation.js';
import { colorCssVariable } from './authoring-guide.js';
import { compileFeature } from './compile.js';
import { FEATURE_CODE_MAX_BYTES, featureRefInput } from './schema.js';

export interface AppPageEntry {
  label: string;
  featureId: string;
  path: string;
}

export interface AppPage {
  name: string;
  /** CSS custom properties of the theme: one per colour, then the shell variables. */
  cssVariables: Record<string, string>;
  /** Menus with only the entries whose feature the user's role sees and that is published. */
  menus: { _id: string; name: string; entries: AppPageEntry[] }[];
  /** Every published feature the user's role sees, by name. */
  features: { _id: string; name: string; description: string }[];
  user: { _id: string; email: string; name: string; roleName: string; isAdmin: boolean };
}

/** Feature code compiled for the application page's frame. */
export interface RunnableFeature {
  _id: string;
  name: string;
  /** The version the script was compiled from (the published one, or the current draft for a preview). */
  version: number;
  codeSha256: string;
  script: string;
}

/**
 * The application page (`/app`): what the signed-in user's role sees, and the published code of
 * those features compiled for the browser. The role check is here, on the server: a user gets
 * no code of a feature their role does not see, whatever URL they open.
 */
export class AppPageService {
  constructor(
    private readonly ctx: PlatformContext,
    private readonly application: ApplicationService,
  ) {}

  async page(principal: Principal): Promise<AppPage> {
    const user = await this.signedInUser(principal);
    const [application, features, menus] = await Promise.all([
      this.application.read(),
      this.ctx.db
        .selectFrom('features')
        .innerJoin('role_features', 'role_features.feature_id', 'features.id')
        .select(['features.id', 'features.name', 'features.description'])
        .where('role_features.role_id', '=', user.roleId)
        .where('features.published_version', 'is not', null)
        .orderBy('features.name')
        .execute(),
      this.ctx.db.selectFrom('menus').selectAll().orderBy('position').orderBy('name').execute(),
    ]);
    const visible = new Set(features.map((feature) => feature.id));
    const cssVariables = {
      ...Object.fromEntries(Object.entries(application.theme.colors).map(([name, value]) => [colorCssVariable(name), value])),
      ...application.theme.shell,
    };
    return {
      name: application.name,
      cssVariables,
      menus: menus
        .map((menu) => ({
          _id: menu.id,
          name: menu.name,
          entries: menu.entries
            .map((entry) => ({ label: entry.label, featureId: entry.path.slice(MENU_PATH_PREFIX.length), path: entry.path }))
            .filter((entry) => visible.has(entry.featureId)),
        }))
        .filter((menu) => menu.entries.length > 0),
      features: features.map((feature) => ({ _id: feature.id, name: feature.name, description: feature.description })),
      user: { _id: user.id, email: user.email, name: user.name, roleName: user.roleName, isAdmin: principal.isAdmin },
    };
  }

  /**
   * The published version of a feature the user's role sees, compiled. A feature that does not
   * exist and one the role does not see get the same FORBIDDEN, naming neither it nor any other: the
   * application page tells its users nothing of the features their role does not see.
   */
  async publishedFeature(principal: Principal, ref: string): Promise<RunnableFeature> {
    const user = await this.signedInUser(principal);
    const { _id: featureRef } = parseInput(featureRefInput, { _id: ref });
    const feature = await this.ctx.db
      .selectFrom('features as f')
      .innerJoin('role_features as rf', (join) => join.onRef('rf.feature_id', '=', 'f.id').on('rf.role_id', '=', user.roleId))
      .select(['f.id', 'f.name', 'f.published_version'])
      .where((eb) => eb.or([eb('f.id', '=', featureRef), eb(eb.fn('lower', ['f.name']), '=', featureRef.toLowerCase())]))
      .orderBy((eb) => eb.case().when('f.id', '=', featureRef).then(0).else(1).end())
      .executeTakeFirst();
    if (!feature) throw forbidden(`Your role '${user.roleName}' sees no page '${featureRef}'`);
    const featureId = feature.id;
    if (feature.published_version === null) throw notFound('Published version of feature', feature.name);
    const version = await this.ctx.db
      .selectFrom('feature_versions')
      .select(['custom_code'])
      .where('feature_id', '=', featureId)
      .where('version', '=', feature.published_version)
      .executeTakeFirstOrThrow();
    return { _id: feature.id, name: feature.name, version: feature.published_version, ...(await compileFeature(version.custom_code)) };
  }

  /**
   * The current code of a feature (draft or not), or `customCode` the designer has not saved yet,
   * compiled for the designer's preview; needs `config:read`.
   */
  async previewFeature(principal: Principal, featureRef: string, customCode?: string): Promise<RunnableFeature> {
    requirePermission(principal, 'config:read');
    const featureId = await resolveNamedRecord(this.ctx.db, 'features', featureRef);
    const feature = await this.ctx.db.selectFrom('features').select(['id', 'name', 'version', 'custom_code']).where('id', '=', featureId).executeTakeFirst();
    if (!feature) throw notFound('Feature', featureRef);
    const code = customCode ?? feature.custom_code;
    assertMaxBytes('customCode', code, FEATURE_CODE_MAX_BYTES, '1 MB');
    return { _id: feature.id, name: feature.name, version: feature.version, ...(await compileFeature(code)) };
  }

  private async signedInUser(principal: Principal) {
    if (principal.kind !== 'user' || !principal.userId) throw unauthenticated();
    const user = await this.ctx.db
      .selectFrom('users')
      .innerJoin('roles', 'roles.id', 'users.role_id')
      .select(['users.id', 'users.email', 'users.name', 'users.role_id as roleId', 'roles.name as roleName'])
      .where('users.id', '=', principal.userId)
      .executeTakeFirst();
    if (!user) throw unauthenticated();
    return user;
  }
}
