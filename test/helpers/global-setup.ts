import { chmodSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
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
  const removeScratch = useScratchFolder();
  await buildIfNeeded();
  if (process.env.TRELLIS_TEST_DATABASE === 'postgres') {
    const dropTemplate = await postgresTemplate(project);
    return async () => {
      await dropTemplate();
      removeScratch();
    };
  }
  const template = mkdtempSync(join(tmpdir(), 'trellis-template-'));
  const config = loadConfig({ ...TEST_ENV, TRELLIS_DATA_DIR: template });
  const database = await openDatabase({ databaseUrl: undefined, dataDir: template });
  await ensureApplication(database.db, config);
  await database.close();
  project.provide('pgliteTemplate', template);
  return () => {
    rmSync(template, { recursive: true, force: true });
    removeScratch();
  };
}

/** Room the suite's files need at most at once: data folders of ~40 MB, backups, browser profiles. */
const SCRATCH_ROOM = 2 * 1024 ** 3;

/**
 * Points the temporary folder of the suite (this process's, its workers', every process they start,
 * Chromium's) at a new folder in memory, /dev/shm, when it has room: each test server starts from a
 * copy of the template folder (1 100 files) and removes it at the end, which took 0.5-0.9 s on this
 * disk and takes 0.15 s there; the database's writes are as real, without waiting for a disk.
 * TRELLIS_TEST_TMPDIR chooses another folder (the system's own: `TRELLIS_TEST_TMPDIR=/tmp`).
 * Returns what removes it, with whatever a test left in it.
 */
function useScratchFolder(): () => void {
  const base = process.env.TRELLIS_TEST_TMPDIR ?? (roomIn('/dev/shm') >= SCRATCH_ROOM ? '/dev/shm' : undefined);
  if (!base) return () => {};
  const scratch = mkdtempSync(join(base, 'trellis-tests-'));
  // As /tmp: other users (the private PostgreSQL servers run as postgres) reach their own folders in it.
  chmodSync(scratch, 0o1777);
  // Workers and the processes they start inherit the environment: os.tmpdir() reads TMPDIR.
  process.env.TMPDIR = scratch;
  return () => rmSync(scratch, { recursive: true, force: true });
}

function roomIn(folder: string): number {
  try {
    const stats = statfsSync(folder);
    return stats.bavail * stats.bsize;
  } catch {
    return 0;
  }
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
