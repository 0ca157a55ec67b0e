// Bundles src/ into dist/main.js, the sandbox's worker thread into dist/sandbox-worker.js, the maker of the embedded database's template into dist/pglite-template.js and the web pages into dist/web/. With --if-needed it does nothing when dist is newer than src.
import { buildWeb, webOutputs } from './build-web.mjs';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entries = {
  main: join(root, 'src', 'main.ts'),
  'sandbox-worker': join(root, 'src', 'runtime', 'sandbox-worker.ts'),
  'pglite-template': join(root, 'src', 'platform', 'db', 'template-main.ts'),
};

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds when dist is older than src (or always with `force`); `onBuild` is called first when it builds. */
export async function buildIfNeeded({ force = false, onBuild = () => {} } = {}) {
  const sources = Math.max(newestMtime(join(root, 'src')), statSync(join(root, 'package.json')).mtimeMs);
  const built = [...Object.keys(entries).map((name) => join(root, 'dist', `${name}.js`)), ...webOutputs()];
  if (!force && built.every((file) => existsSync(file) && statSync(file).mtimeMs >= sources)) return false;
  onBuild();
  // Build beside the target and rename: a process starting meanwhile never imports half a file.
  // esbuild is loaded only to build: a start with an up-to-date build does not pay for it.
  const { build } = await import('esbuild');
  const staging = join(root, 'dist', `.staging-${process.pid}`);
  mkdirSync(staging, { recursive: true });
  await build({
    entryPoints: entries,
    outdir: staging,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Bundling the pure-JavaScript dependencies halves module loading at start; packages that load
    // files beside themselves (WebAssembly) or are loaded only on demand stay external.
    external: ['@babel/parser', '@electric-sql/pglite', 'quickjs-emscripten', '@jitl/*', 'pg', 'nodemailer', 'esbuild', '@modelcontextprotocol/server'],
    sourcemap: true,
    // Shared code in chunks: the CLI's commands load the server's modules only when they need them.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    // Bundled CommonJS packages call require() for Node's built-ins.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  // Chunks first (their names are their hashes, so an old main.js keeps its own), then the worker:
  // a process importing the new main.js may start workers at once.
  mkdirSync(join(root, 'dist', 'chunks'), { recursive: true });
  const written = new Set(readdirSync(join(staging, 'chunks')));
  for (const file of written) renameSync(join(staging, 'chunks', file), join(root, 'dist', 'chunks', file));
  pruneChunks(written);
  for (const name of Object.keys(entries).reverse()) {
    renameSync(join(staging, `${name}.js.map`), join(root, 'dist', `${name}.js.map`));
    renameSync(join(staging, `${name}.js`), join(root, 'dist', `${name}.js`));
  }
  rmSync(staging, { recursive: true, force: true });
  await buildWeb();
  return true;
}

/** How long the chunks of an earlier build are kept for processes started from it (they import some lazily). */
const OLD_CHUNKS_KEPT_MS = 24 * 3600 * 1000;

/** Removes the chunks of earlier builds not written for a day: each build adds ~10 MB to dist/chunks. */
function pruneChunks(built) {
  const folder = join(root, 'dist', 'chunks');
  for (const file of readdirSync(folder)) {
    if (built.has(file)) continue;
    const path = join(folder, file);
    if (Date.now() - statSync(path).mtimeMs >= OLD_CHUNKS_KEPT_MS) rmSync(path, { force: true });
  }
}


// `node scripts/build.mjs` (npm run build) builds; with --if-needed only when src is newer than dist.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildIfNeeded({ force: !process.argv.includes('--if-needed') });
}
