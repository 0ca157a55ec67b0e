// Bundles the web pages (src/web/) for the browser into dist/web/<page>/, one esbuild build per page,
// and writes each page's index.html. A page whose entry does not exist yet is skipped.
import { build } from 'esbuild';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'src', 'web');

/**
 * The pages: entry (relative to src/web/), title, and format. The designer and the shell are ES
 * modules split into chunks (the editor is loaded where it is used); the feature frame is one
 * classic script, because its opaque origin would make a module script a cross-origin request.
 */
export const WEB_PAGES = {
  designer: { entry: 'designer/main.tsx', title: 'Trellis designer', format: 'esm' },
  app: { entry: 'app/main.ts', title: 'Application', format: 'esm' },
  frame: { entry: 'frame/main.tsx', title: 'Feature', format: 'iife' },
};

/** The index.html of a page: its stylesheet and script under /web/<page>/. */
function indexHtml(page, { title, format }, hasCss) {
  const base = `/web/${page}`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${title}</title>`,
    hasCss ? `<link rel="stylesheet" href="${base}/main.css">` : '',
    format === 'esm' ? `<script type="module" src="${base}/main.js"></script>` : `<script src="${base}/main.js" defer></script>`,
    '</head>',
    '<body><div id="root"></div></body>',
    '</html>',
    '',
  ]
    .filter(Boolean)
    .join('\n');
}

/** Builds every page into dist/web/<page>/ (staged beside it, then renamed into place). */
export async function buildWeb() {
  for (const [page, options] of Object.entries(WEB_PAGES)) {
    const entry = join(web, options.entry);
    if (!existsSync(entry)) continue;
    const target = join(root, 'dist', 'web', page);
    const staging = `${target}.staging-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    const esm = options.format === 'esm';
    const result = await build({
      entryPoints: { main: entry },
      outdir: staging,
      bundle: true,
      splitting: esm,
      format: options.format,
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
    writeFileSync(join(staging, 'index.html'), indexHtml(page, options, existsSync(join(staging, 'main.css'))));
    rmSync(target, { recursive: true, force: true });
    renameSync(staging, target);
  }
}

/** The files a built page must have; build.mjs rebuilds when one is missing or older than src/. */
export function webOutputs() {
  return Object.entries(WEB_PAGES)
    .filter(([, options]) => existsSync(join(web, options.entry)))
    .flatMap(([page]) => [join(root, 'dist', 'web', page, 'main.js'), join(root, 'dist', 'web', page, 'index.html')]);
}
