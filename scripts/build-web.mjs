// Bundles the web pages (src/web/) for the browser into dist/web/<page>/, one esbuild build per page.
// Each page lists its entry points; a page whose entries do not exist yet is skipped.
import { build } from 'esbuild';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'src', 'web');

/** The pages and their entry points (name -> source file), relative to src/web/. */
export const WEB_PAGES = {
  // The designer (GET /): one entry; the editor is a separate chunk loaded where it is used.
  designer: { main: 'designer/main.tsx' },
};

/** Builds every page into dist/web/<page>/ (staged beside it, then renamed into place). */
export async function buildWeb() {
  for (const [page, entries] of Object.entries(WEB_PAGES)) {
    const entryPoints = Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, join(web, file)]));
    if (!Object.values(entryPoints).every((file) => existsSync(file))) continue;
    const target = join(root, 'dist', 'web', page);
    const staging = `${target}.staging-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    const result = await build({
      entryPoints,
      outdir: staging,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'browser',
      target: ['chrome120', 'firefox120', 'safari17'],
      jsx: 'automatic',
      minify: true,
      entryNames: '[name]',
      chunkNames: 'chunks/[name]-[hash]',
      assetNames: 'assets/[name]-[hash]',
      define: { 'process.env.NODE_ENV': '"production"' },
      metafile: true,
      legalComments: 'none',
      logLevel: 'warning',
    });
    writeFileSync(join(staging, 'meta.json'), JSON.stringify(result.metafile));
    rmSync(target, { recursive: true, force: true });
    renameSync(staging, target);
  }
}
