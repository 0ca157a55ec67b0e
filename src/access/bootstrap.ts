import { sql } from 'kysely';
import type { Config } from '../config.js';
import { hashPassword, newId, randomSecret } from '../platform/crypto.js';
import type { Db } from '../platform/db/index.js';
import type { AppSettings } from '../platform/db/types.js';
import { DEFAULT_ROLES } from './roles.js';

export const DEFAULT_SETTINGS: AppSettings = {
  corsOrigins: [],
  theme: {
    colors: {
      primary: '#2563eb',
      primaryForeground: '#ffffff',
      background: '#ffffff',
      foreground: '#0f172a',
      muted: '#f1f5f9',
      mutedForeground: '#64748b',
      border: '#e2e8f0',
      danger: '#dc2626',
      success: '#16a34a',
    },
    shell: {
      '--shell-bg': 'var(--color-background)',
      '--shell-fg': 'var(--color-foreground)',
      '--shell-sidebar-bg': 'var(--color-muted)',
      '--shell-accent': 'var(--color-primary)',
      '--shell-radius': '0.5rem',
      '--shell-font': 'system-ui, sans-serif',
    },
  },
};

export interface BootstrapResult {
  appId: string;
  appName: string;
  /** Set only on the start that created the application. */
  owner?: { email: string; generatedPassword?: string };
}

/**
 * Creates the application, the default roles and the owner admin on first start. Several replicas
 * may start at once: an advisory lock makes exactly one of them do it.
 */
export async function ensureApplication(db: Db, config: Config): Promise<BootstrapResult> {
  const existing = await db.selectFrom('app').select(['id', 'name']).executeTakeFirst();
  if (existing) return { appId: existing.id, appName: existing.name };
  const generatedPassword = config.adminPassword ? undefined : randomSecret(12);
  const passwordHash = await hashPassword(config.adminPassword ?? generatedPassword!);
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(7246001)`.execute(trx);
    const raced = await trx.selectFrom('app').select(['id', 'name']).executeTakeFirst();
    if (raced) return { appId: raced.id, appName: raced.name };
    const appId = newId();
    await trx.insertInto('app').values({ id: appId, name: config.appName, settings: JSON.stringify(DEFAULT_SETTINGS) }).execute();
    const roleIds: Record<string, string> = {};
    for (const role of DEFAULT_ROLES) {
      roleIds[role.name] = newId();
      await trx
        .insertInto('roles')
        .values({
          id: roleIds[role.name]!,
          name: role.name,
          description: role.description,
          permissions: JSON.stringify(role.permissions),
          builtin: true,
        })
        .execute();
    }
    await trx
      .insertInto('users')
      .values({
        id: newId(),
        email: config.adminEmail,
        name: 'Owner',
        password_hash: passwordHash,
        role_id: roleIds.admin!,
        is_owner: true,
        updated_at: new Date(),
      })
      .execute();
    return {
      appId,
      appName: config.appName,
      owner: { email: config.adminEmail, ...(generatedPassword ? { generatedPassword } : {}) },
    };
  });
}
