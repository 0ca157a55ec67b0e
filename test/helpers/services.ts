import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { inject } from 'vitest';
import type { Principal } from '../../src/access/permissions.js';
import { loadConfig } from '../../src/config.js';
import { openServices } from '../../src/server.js';
import type { Services } from '../../src/services.js';
import { TEST_ENV } from './env.js';
import { createPostgresDatabase, usingPostgres } from './server.js';

export interface TestServices {
  readonly services: Services;
  /** The owner, as a signed-in builder session carries them. */
  readonly owner: Principal;
  close(): Promise<void>;
}

/**
 * The services of a deployment in this process, without HTTP: for the domain's rules, asserted on
 * the service functions every adapter calls (issue 24). The data is a copy of the embedded template
 * folder (or, in the PostgreSQL suite, of the template database), as for `startTestServer`; what crosses the wire
 * (status codes, media types, MCP and GraphQL shapes) stays in the end-to-end tests.
 */
export async function startTestServices(extraEnv: Record<string, string> = {}): Promise<TestServices> {
  const dataDir = mkdtempSync(join(tmpdir(), 'trellis-services-'));
  const env: Record<string, string> = { ...TEST_ENV, TRELLIS_DATA_DIR: dataDir, ...extraEnv };
  let dropDatabase = async () => {};
  if (usingPostgres) {
    const database = await createPostgresDatabase(inject('postgresTemplate'));
    env.TRELLIS_DATABASE_URL = database.url;
    dropDatabase = database.drop;
  } else {
    cpSync(inject('pgliteTemplate'), dataDir, { recursive: true });
  }
  const opened = await openServices(loadConfig(env), pino({ level: 'silent' }));
  const { services } = opened;
  const ownerRow = await services.ctx.db.selectFrom('users').select('id').where('is_owner', '=', true).executeTakeFirstOrThrow();
  return {
    services,
    owner: await services.access.principalForUser(ownerRow.id, 'graphql'),
    close: async () => {
      await services.hookRuntime.close();
      await opened.close();
      await dropDatabase();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
