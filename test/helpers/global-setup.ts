import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config.js';
import { ensureApplication } from '../../src/access/bootstrap.js';
import { openDatabase } from '../../src/platform/db/index.js';
import { buildIfNeeded } from '../../scripts/build.mjs';
import { TEST_ENV } from './env.js';

/**
 * Creates one migrated, bootstrapped embedded data folder; each test server starts from a copy,
 * which opens in a fraction of a second where a new folder takes seconds.
 */
export default async function setup(project: TestProject) {
  await buildIfNeeded();
  if (process.env.TRELLIS_TEST_DATABASE === 'postgres') return;
  const template = mkdtempSync(join(tmpdir(), 'trellis-template-'));
  const config = loadConfig({ ...TEST_ENV, TRELLIS_DATA_DIR: template });
  const database = await openDatabase({ databaseUrl: undefined, dataDir: template });
  await ensureApplication(database.db, config);
  await database.close();
  project.provide('pgliteTemplate', template);
  return () => rmSync(template, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
  }
}
