import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The file PostgreSQL writes first in a data folder and that marks a folder as holding a database.
 * A template is copied with this file last, so a copy cut short is taken for a new folder again.
 */
const MARKER = 'PG_VERSION';

export interface CreateFolderOptions {
  /** Where templates are kept; default `node_modules/.cache/trellis/`. */
  cache?: string;
  /** Told each step of a slow creation (making the template: PostgreSQL's initdb, the migrations), and every 10 s while it lasts. */
  onProgress?: (message: string) => void;
}

/** How often a slow creation says it is still at work. */
const PROGRESS_TICK_MS = 10_000;

/**
 * Creates the embedded database of the new folder `folder` (which may exist, empty or holding the
 * remains of a creation cut short) as a copy of a migrated template made once per PGlite version,
 * settings and build (`node_modules/.cache/trellis/`): PGlite's initdb and the migrations take
 * seconds, a copy a fraction of one. The template is made in a child process (D27) and published
 * by a rename, so concurrent first starts never see half of one. Where there is no build or the
 * cache cannot be written (a read-only installation), the folder is made directly by that child.
 */
export async function createPGliteFolder(folder: string, conf: readonly string[], options: CreateFolderOptions = {}): Promise<void> {
  const { cache = defaultCache(), onProgress } = options;
  const script = templateScript();
  let template: string | undefined;
  try {
    if (script) template = await ensureTemplate(script, conf, cache, onProgress);
  } catch (error) {
    if (!isUnwritable(error)) throw error;
  }
  privateFolder(folder);
  if (template) {
    const marker = join(template, MARKER);
    try {
      cpSync(template, folder, { recursive: true, force: true, filter: (source) => source !== marker });
      copyFileSync(marker, join(folder, MARKER));
      return;
    } catch (error) {
      // A template this user may not read (made by another one): the folder is made without it.
      if (!isUnwritable(error)) throw error;
    }
  }
  // What a creation cut short left (no PG_VERSION, so never a database) must not meet initdb.
  for (const entry of readdirSync(folder)) rmSync(join(folder, entry), { recursive: true, force: true });
  return makeSlowly(() => makeDatabase(script, folder, conf, onProgress), onProgress);
}

/** Runs a creation that takes seconds to a minute, saying so before and every 10 s while it lasts. */
async function makeSlowly(make: () => Promise<void>, onProgress: ((message: string) => void) | undefined): Promise<void> {
  if (!onProgress) return make();
  onProgress("Making the embedded database: PostgreSQL's initdb and the migrations run once per installation (up to a minute)…");
  const started = Date.now();
  const ticker = setInterval(() => onProgress(`…still making the database (${Math.round((Date.now() - started) / 1000)} s)`), PROGRESS_TICK_MS);
  try {
    await make();
  } finally {
    clearInterval(ticker);
  }
}

/** The template folder for this build and `conf`, made first when missing. */
async function ensureTemplate(script: string, conf: readonly string[], cache: string, onProgress?: (message: string) => void): Promise<string> {
  const template = join(cache, templateName(script, conf));
  if (existsSync(join(template, MARKER))) {
    try {
      chmodSync(dirname(template), 0o700);
    } catch {
      // Made private by whoever made it, or read-only: the copy is taken as it is.
    }
    return template;
  }
  privateFolder(dirname(template));
  const staging = `${template}.${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await makeSlowly(() => makeDatabase(script, staging, conf, onProgress), onProgress);
    try {
      renameSync(staging, template);
    } catch (error) {
      // Another process published it first: theirs serves.
      if (!existsSync(join(template, MARKER))) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  pruneTemplates(cache, template);
  return template;
}

/** Removes the templates of earlier builds (and stagings left by a crash) an hour old or more. */
function pruneTemplates(cache: string, keep: string): void {
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    if (path === keep || !name.startsWith('pglite-')) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs >= 3_600_000) rmSync(path, { recursive: true, force: true });
    } catch {
      // Taken by another process meanwhile.
    }
  }
}

/** The templates' folder: beside the installed packages, gone with them. */
function defaultCache(): string {
  return join(dirname(dirname(pgliteRoot())), '.cache', 'trellis');
}

/** A template's name: what makes it, the PGlite version, the settings and the build's script. */
function templateName(script: string, conf: readonly string[]): string {
  const { version } = JSON.parse(readFileSync(join(pgliteRoot(), 'package.json'), 'utf8')) as { version: string };
  // The script names its chunks by their content hashes: a changed migration changes the script.
  const key = createHash('sha256').update(JSON.stringify([version, conf])).update(readFileSync(script)).digest('hex').slice(0, 16);
  return `pglite-${version}-${key}`;
}

function pgliteRoot(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  return entry.slice(0, entry.lastIndexOf(`${sep}dist${sep}`));
}

/** dist/pglite-template.js, seen from src/platform/db/ (tests) or from dist/chunks/ (the bundle). */
function templateScript(): string | undefined {
  for (const relative of ['../pglite-template.js', '../../../dist/pglite-template.js']) {
    const path = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(path)) return path;
  }
  return undefined;
}

/**
 * V8's settings for the child that makes a database. It runs PGlite's WebAssembly for a few seconds
 * and exits: with only the baseline compiler (Liftoff), V8 does not spend background threads
 * optimising code the child leaves before it pays off. initdb and the migrations took 5.5 CPU-s and
 * 3.7 s without, 3.4 CPU-s and 2.7-3.3 s with (docs/benchmarks.md, session 22). The server itself
 * runs with V8's defaults: it runs the same code for hours.
 */
const MAKER_FLAGS = ['--liftoff-only'];

/**
 * Creates the embedded database in `folder` in a short-lived child process, migrated when the
 * build's script is there. PGlite's initdb grows the WebAssembly memory to several hundred MB and
 * WebAssembly memory never shrinks: done in the server's process, its first start would idle at
 * three times the memory of every restart. Each line the script prints (its steps) goes to `onProgress`.
 */
function makeDatabase(script: string | undefined, folder: string, conf: readonly string[], onProgress?: (message: string) => void): Promise<void> {
  const bare = `const { PGlite } = await import(process.argv[1]); const db = await PGlite.create(process.argv[2], { postgresqlconf: JSON.parse(process.argv[3]) }); await db.close();`;
  const args = [
    ...MAKER_FLAGS,
    ...(script ? [script, folder, JSON.stringify(conf)] : ['--input-type=module', '-e', bare, createRequire(import.meta.url).resolve('@electric-sql/pglite'), folder, JSON.stringify(conf)]),
  ];
  privateFolder(folder);
  return new Promise<void>((resolve, reject) => {
    const child = execFile(process.execPath, args, { maxBuffer: 1024 * 1024 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`Could not create the embedded database in ${folder}: ${stderr.trim().split('\n').slice(-3).join(' ') || error.message}`));
      else resolve();
    });
    if (onProgress) child.stdout?.on('data', (chunk: Buffer) => String(chunk).split('\n').filter((line) => line.trim()).forEach((line) => onProgress(line.trim())));
  });
}

/**
 * Makes `folder` (and its missing parents) and gives it mode 0700: PGlite writes the database's
 * files readable and writable by every account (0666), so the folder that holds them is what keeps
 * other accounts of the machine out of the data, as PostgreSQL requires of its data directory.
 */
export function privateFolder(folder: string): void {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  chmodSync(folder, 0o700);
}

function isUnwritable(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOTDIR';
}
