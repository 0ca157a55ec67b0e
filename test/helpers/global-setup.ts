import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config.js';
import { ensureApplication } from '../../src/access/bootstrap.js';
import { openDatabase } from '../../src/platform/db/index.js';
import { buildIfNeeded } from '../../scripts/build.mjs';
import { TEST_ENV } from './env.js';

/**
 * Creates one migrated, bootstrapped database: an embedded data folder, or in the PostgreSQL suite
 * a database on the local server. Each test server starts from a copy (a copied folder, or
 * `create database … template`), which opens in a fraction of a second where migrating a new one
 * takes a second or more.
 */
export default async function setup(project: TestProject) {
  await buildIfNeeded();
  if (process.env.TRELLIS_TEST_DATABASE === 'postgres') return postgresTemplate(project);
  const template = mkdtempSync(join(tmpdir(), 'trellis-template-'));
  const config = loadConfig({ ...TEST_ENV, TRELLIS_DATA_DIR: template });
  const database = await openDatabase({ databaseUrl: undefined, dataDir: template });
  await ensureApplication(database.db, config);
  await database.close();
  project.provide('pgliteTemplate', template);
  return () => rmSync(template, { recursive: true, force: true });
}

/** The PostgreSQL suite's template database, migrated and bootstrapped as the embedded folder is; dropped at the end. */
async function postgresTemplate(project: TestProject) {
  const adminUrl = process.env.TRELLIS_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `trellis_test_template_${process.pid}`;
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await admin(`drop database if exists ${name} with (force)`);
  await admin(`create database ${name}`);
  const databaseUrl = adminUrl.replace(/\/[^/]*$/, `/${name}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'trellis-template-'));
  const config = loadConfig({ ...TEST_ENV, TRELLIS_DATA_DIR: dataDir, TRELLIS_DATABASE_URL: databaseUrl });
  const database = await openDatabase({ databaseUrl, dataDir });
  await ensureApplication(database.db, config);
  // No connection may stay open to it: `create database … template` refuses a template in use.
  await database.close();
  rmSync(dataDir, { recursive: true, force: true });
  project.provide('postgresTemplate', name);
  return () => admin(`drop database if exists ${name} with (force)`);
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    postgresTemplate: string;
  }
}
