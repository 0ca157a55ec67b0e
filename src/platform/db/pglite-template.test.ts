import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from './migrations.js';
import { createPGliteFolder } from './pglite-template.js';

const CONF = ['shared_buffers = 16MB', 'wal_buffers = 1MB'];
const root = mkdtempSync(join(tmpdir(), 'trellis-template-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The migrations recorded in the database of `folder`, opened as the server opens it. */
async function migrationsOf(folder: string): Promise<string[]> {
  const pglite = await PGlite.create(folder, { postgresqlconf: CONF });
  try {
    const { rows } = await pglite.query<{ name: string }>('select name from trellis_migrations order by name');
    return rows.map((row) => row.name);
  } finally {
    await pglite.close();
  }
}

describe.skipIf(process.env.TRELLIS_TEST_DATABASE === 'postgres')('createPGliteFolder', () => {
  const cache = join(root, 'cache');

  it('makes one migrated template for concurrent first starts, telling each step, copies it into each folder silently and prunes templates of earlier builds', async () => {
    mkdirSync(cache, { recursive: true });
    const hourAgo = new Date(Date.now() - 2 * 3_600_000);
    for (const name of ['pglite-0.0.1-earlier', 'pglite-0.0.2-recent']) mkdirSync(join(cache, name));
    utimesSync(join(cache, 'pglite-0.0.1-earlier'), hourAgo, hourAgo);

    const folders = [1, 2].map((n) => join(root, `data-${n}`, 'pgdata'));
    // The first start of an installation tells each step of making the template.
    const told: string[] = [];
    await Promise.all(folders.map((folder, n) => createPGliteFolder(folder, CONF, { cache, onProgress: n === 0 ? (message) => told.push(message) : undefined })));
    // On a slow machine it also says, every few seconds, that it is still at work.
    const ticks = told.filter((message) => message.startsWith('…still'));
    for (const tick of ticks) expect(tick).toMatch(/^…still making the database \(\d+ s\)$/);
    expect(told.filter((message) => !ticks.includes(message))).toEqual([
      "Making the embedded database: PostgreSQL's initdb and the migrations run once per installation (up to a minute)…",
      expect.stringMatching(/^PostgreSQL initialised \(initdb\) in \d+\.\d s$/),
      expect.stringMatching(/^Tables of Trellis created \(migrations\) in \d+\.\d s$/),
    ]);

    const templates = readdirSync(cache).filter((name) => name !== 'pglite-0.0.2-recent');
    expect(templates).toHaveLength(1);
    expect(templates[0]).toMatch(/^pglite-\d+\.\d+\.\d+-[0-9a-f]{16}$/);
    expect(existsSync(join(cache, 'pglite-0.0.2-recent'))).toBe(true);
    for (const folder of folders) expect(await migrationsOf(folder)).toEqual(Object.keys(MIGRATIONS).sort());
    // The template and each copy are closed to other accounts (PGlite writes its files 0666).
    const modeOf = (path: string) => statSync(path).mode & 0o777;
    expect([cache, ...folders].map(modeOf)).toEqual([0o700, 0o700, 0o700]);
    // A cache an earlier version left open is closed at the next copy.
    // It copies the template without a word.
    chmodSync(cache, 0o755);
    told.length = 0;
    await createPGliteFolder(join(root, 'data-3', 'pgdata'), CONF, { cache, onProgress: (message) => told.push(message) });
    expect(told).toEqual([]);
    expect([cache, join(root, 'data-3', 'pgdata')].map(modeOf)).toEqual([0o700, 0o700]);
  });

  it('makes anew a folder holding the remains of a creation cut short (files but no PG_VERSION)', async () => {
    const folder = join(root, 'cut-short', 'pgdata');
    mkdirSync(join(folder, 'base'), { recursive: true });
    writeFileSync(join(folder, 'postgresql.conf'), 'half written');
    await createPGliteFolder(folder, CONF, { cache });
    expect(existsSync(join(folder, 'PG_VERSION'))).toBe(true);
    expect(await migrationsOf(folder)).toEqual(Object.keys(MIGRATIONS).sort());
  });

  it('makes the database directly when the cache cannot be written, over the remains of a creation cut short', async () => {
    const blocked = join(root, 'not-a-folder');
    writeFileSync(blocked, '');
    const folder = join(root, 'uncached', 'pgdata');
    // With the remains of a creation cut short, which initdb must not meet.
    mkdirSync(join(folder, 'base', '1'), { recursive: true });
    writeFileSync(join(folder, 'postgresql.conf'), 'half written');
    await createPGliteFolder(folder, CONF, { cache: join(blocked, 'cache') });
    expect(await migrationsOf(folder)).toEqual(Object.keys(MIGRATIONS).sort());
  });
});
