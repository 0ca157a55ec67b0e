import { writeTransaction } from '../platform/db/write.js';
import { requirePermission, type Principal } from '../access/permissions.js';
import { recordAudit } from '../audit/writer.js';
import type { PlatformContext } from '../platform/context.js';
import { newId } from '../platform/crypto.js';
import type { Db } from '../platform/db/index.js';
import type { MenuEntry, Row } from '../platform/db/types.js';
import { badInput, notFound } from '../platform/errors.js';
import { assertDistinctName } from '../platform/names.js';
import { parseInput } from '../platform/validation.js';
import { MENU_PATH_PREFIX, deleteMenuInput, upsertMenuInput, type DeleteMenuInput, type UpsertMenuInput } from './schema.js';

export interface Menu {
  _id: string;
  name: string;
  entries: MenuEntry[];
  position: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface UpsertMenuResult {
  menu: Menu;
  /** True when no menu of that name existed before. */
  created: boolean;
}

export class MenuService {
  constructor(private readonly ctx: PlatformContext) {}

  /** Menus ordered by position, then name. */
  async listMenus(principal: Principal): Promise<Menu[]> {
    requirePermission(principal, 'config:read');
    const rows = await this.ctx.db.selectFrom('menus').selectAll().orderBy('position').orderBy('name').execute();
    return rows.map(toMenu);
  }

  /** Creates the menu, or replaces the entries of the menu with the same name (case-insensitive). */
  async upsertMenu(principal: Principal, input: UpsertMenuInput): Promise<UpsertMenuResult> {
    const data = parseInput(upsertMenuInput, input);
    requirePermission(principal, 'menus:write');
    return writeTransaction(this.ctx, async (trx) => {
      await assertFeaturesExist(trx, data.entries);
      const existing = await trx
        .selectFrom('menus')
        .selectAll()
        .where((eb) => eb(eb.fn('lower', ['name']), '=', data.name.toLowerCase()))
        .forUpdate()
        .executeTakeFirst();
      if (!existing) await assertNoLookalikeMenu(trx, data.name);
      const id = existing?.id ?? newId();
      const entries = JSON.stringify(data.entries);
      if (existing) {
        await trx
          .updateTable('menus')
          .set({ entries, ...(data.position !== undefined ? { position: data.position } : {}), updated_at: new Date() })
          .where('id', '=', id)
          .execute();
      } else {
        await trx
          .insertInto('menus')
          .values({ id, name: data.name, entries, position: data.position ?? 0, updated_at: new Date() })
          .execute();
      }
      await recordAudit(trx, principal, {
        action: existing ? 'menu.replace' : 'menu.create',
        resourceType: 'menu',
        resourceId: id,
        details: { name: existing?.name ?? data.name, paths: data.entries.map((e) => e.path) },
      });
      const menu = await trx.selectFrom('menus').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      return { menu: toMenu(menu), created: !existing };
    });
  }

  async deleteMenu(principal: Principal, input: DeleteMenuInput): Promise<boolean> {
    const data = parseInput(deleteMenuInput, input);
    requirePermission(principal, 'menus:write');
    return writeTransaction(this.ctx, async (trx) => {
      const menu = await trx.selectFrom('menus').select(['id', 'name']).where('id', '=', data._id).forUpdate().executeTakeFirst();
      if (!menu) throw notFound('Menu', data._id);
      await trx.deleteFrom('menus').where('id', '=', menu.id).execute();
      await recordAudit(trx, principal, { action: 'menu.delete', resourceType: 'menu', resourceId: menu.id, details: { name: menu.name } });
      return true;
    });
  }
}

/** A new menu may not look like another (D33); a name equal in any letter case replaces that menu instead. */
async function assertNoLookalikeMenu(trx: Db, name: string): Promise<void> {
  const menus = await trx.selectFrom('menus').select('name').execute();
  assertDistinctName(name, menus.map((menu) => menu.name), { what: 'menu', field: 'name' });
}

async function assertFeaturesExist(trx: Db, entries: readonly MenuEntry[]): Promise<void> {
  const featureIds = entries.map((entry) => entry.path.slice(MENU_PATH_PREFIX.length));
  if (!featureIds.length) return;
  const found = await trx.selectFrom('features').select('id').where('id', 'in', [...new Set(featureIds)]).execute();
  const known = new Set(found.map((f) => f.id));
  const missing = featureIds.findIndex((id) => !known.has(id));
  if (missing >= 0) {
    const field = `entries.${missing}.path`;
    throw badInput(`${field}: feature '${featureIds[missing]}' does not exist`, { field });
  }
}

function toMenu(row: Row<'menus'>): Menu {
  return {
    _id: row.id,
    name: row.name,
    entries: row.entries,
    position: row.position,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
