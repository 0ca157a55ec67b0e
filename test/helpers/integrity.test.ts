import { closeSync, cpSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { pgliteFolder } from '../../src/platform/db/index.js';
import { verifyPGliteIntegrity } from './integrity.js';
import { usingPostgres } from './server.js';

const PAGE = 8192;

let dataDir: string;
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

function copyOfTemplate(): string {
  dataDir = mkdtempSync(join(tmpdir(), 'trellis-integrity-'));
  cpSync(inject('pgliteTemplate'), dataDir, { recursive: true });
  return dataDir;
}

/** Runs `statements` on the embedded database of `dir`, and returns the file of each relation named in `files`. */
async function onDatabase(dir: string, statements: string, files: string[] = []): Promise<string[]> {
  const pglite = await PGlite.create(pgliteFolder(dir));
  try {
    await pglite.exec(statements);
    const paths = await Promise.all(files.map(async (name) => (await pglite.query<{ path: string }>('select pg_relation_filepath($1::text::regclass) as path', [name])).rows[0]!.path));
    return paths.map((path) => join(pgliteFolder(dir), path));
  } finally {
    await pglite.close();
  }
}

function overwrite(file: string, offset: number): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, Buffer.alloc(64, 0xab), 0, 64, offset);
  } finally {
    closeSync(fd);
  }
}

describe.runIf(!usingPostgres)('verifyPGliteIntegrity', () => {
  it('checks every btree index and table of a sound folder, finds nothing, and leaves no extension behind', async () => {
    const dir = copyOfTemplate();
    const report = await verifyPGliteIntegrity(dir);
    expect(report.problems).toEqual([]);
    expect(report.indexes).toContain('public.users_email_key');
    expect(report.indexes).toContain('public.features_name');
    expect(report.tables).toContain('public.users');
    expect(report.tables).not.toContain('pg_catalog.pg_class');
    const pglite = await PGlite.create(pgliteFolder(dir));
    expect((await pglite.query(`select 1 from pg_extension where extname = 'amcheck'`)).rows).toEqual([]);
    await pglite.close();
  });

  it('reports damaged pages of an index and of a table, and an index that misses rows of its table', async () => {
    const dir = copyOfTemplate();
    const [index, table] = await onDatabase(
      dir,
      `create table bytes (id int primary key, body text);
       insert into bytes select n, repeat('x', 50) || n from generate_series(1, 2000) n;
       create function shifted(n int) returns int immutable language sql return n + 1;
       create table keys (id int);
       insert into keys select generate_series(1, 100);
       create index keys_shifted on keys (shifted(id));
       create or replace function shifted(n int) returns int immutable language sql return n + 2;`,
      ['bytes_pkey', 'bytes'],
    );
    overwrite(index!, PAGE + 3000);
    overwrite(table!, 3 * PAGE + 4000);
    const report = await verifyPGliteIntegrity(dir);
    expect(report.problems).toEqual([
      expect.stringMatching(/^public\.bytes_pkey: invalid page in block 1 of relation/),
      expect.stringMatching(/^public\.keys_shifted: heap tuple \(0,1\) from table "keys" lacks matching index tuple/),
      expect.stringMatching(/^public\.bytes: invalid page in block 3 of relation/),
    ]);
  });
});
