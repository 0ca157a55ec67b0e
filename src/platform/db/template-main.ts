// The entry of dist/pglite-template.js, run in a short-lived child process by createPGliteFolder:
// `node dist/pglite-template.js <folder> <postgresqlconf as JSON>` creates a migrated embedded
// database in <folder>. PGlite's initdb grows the WebAssembly memory to several hundred MB, which
// never shrinks: done in the server's process, its first start would idle at three times the
// memory of every restart.
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { migrateToLatest } from './migrations.js';
import { PGliteDialect } from './pglite-dialect.js';

const [folder, conf] = process.argv.slice(2);
if (!folder || !conf) {
  console.error('usage: node pglite-template.js <folder> <postgresqlconf as JSON>');
  process.exit(2);
}
// Each step on a line of its own: the server's first start shows them as they come.
const started = performance.now();
const pglite = await PGlite.create(folder, { postgresqlconf: JSON.parse(conf) as string[] });
process.stdout.write(`PostgreSQL initialised (initdb) in ${seconds(started)}\n`);
const migrating = performance.now();
const db = new Kysely<unknown>({ dialect: new PGliteDialect(pglite) });
await migrateToLatest(db);
await db.destroy();
await pglite.close();
process.stdout.write(`Tables of Trellis created (migrations) in ${seconds(migrating)}\n`);

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}
