import { writeTransaction } from '../platform/db/write.js';
import { requireAdmin, type Principal } from '../access/permissions.js';
import { recordAudit } from '../audit/writer.js';
import type { PlatformContext } from '../platform/context.js';
import type { AppSettings } from '../platform/db/types.js';
import { ReadCache } from '../platform/read-cache.js';
import { parseInput } from '../platform/validation.js';
import { updateSettingsInput, type UpdateSettingsInput } from './schema.js';

export interface Application {
  _id: string;
  name: string;
  corsOrigins: string[];
  theme: AppSettings['theme'];
}

/** The one application of this deployment: its name, allowed CORS origins and theme. */
export class ApplicationService {
  private readonly origins: ReadCache<ReadonlySet<string>>;

  constructor(private readonly ctx: PlatformContext) {
    this.origins = new ReadCache(ctx.changes);
  }

  /**
   * Whether a browser `Origin` is one of the allowed CORS origins, from a cache read again after
   * every configuration change (so a settings change applies at once).
   */
  async allowsOrigin(origin: string): Promise<boolean> {
    const cached = this.origins.get('origins');
    if (cached) return cached.has(origin);
    const generation = this.origins.generation();
    const { corsOrigins } = await this.read();
    const origins = new Set(corsOrigins.flatMap(serializedOrigin));
    this.origins.set('origins', origins, generation);
    return origins.has(origin);
  }

  /** Any signed-in caller may read it: the theme is part of the authoring guide. */
  async get(_principal: Principal): Promise<Application> {
    return this.read();
  }

  async read(): Promise<Application> {
    const row = await this.ctx.db.selectFrom('app').selectAll().where('id', '=', this.ctx.appId).executeTakeFirstOrThrow();
    return { _id: row.id, name: row.name, corsOrigins: row.settings.corsOrigins, theme: row.settings.theme };
  }

  /** Changes the name, allowed origins or theme (admin only); theme maps are merged key by key. */
  async update(principal: Principal, input: UpdateSettingsInput): Promise<Application> {
    requireAdmin(principal);
    const data = parseInput(updateSettingsInput, input);
    await writeTransaction(this.ctx, async (trx) => {
      const row = await trx.selectFrom('app').selectAll().where('id', '=', this.ctx.appId).forUpdate().executeTakeFirstOrThrow();
      const settings: AppSettings = {
        corsOrigins: data.corsOrigins ?? row.settings.corsOrigins,
        theme: {
          colors: { ...row.settings.theme.colors, ...data.themeColors },
          shell: { ...row.settings.theme.shell, ...data.shellVariables },
        },
      };
      await trx
        .updateTable('app')
        .set({ name: data.name ?? row.name, settings: JSON.stringify(settings) })
        .where('id', '=', row.id)
        .execute();
      await recordAudit(trx, principal, { action: 'app.update', resourceType: 'app', resourceId: row.id, details: data });
    });
    return this.read();
  }
}

/** An origin as a browser sends it: lower-case scheme and host, no default port. */
function serializedOrigin(origin: string): string[] {
  try {
    return [new URL(origin).origin];
  } catch {
    return [];
  }
}
