// Bundles the web pages (src/web/) for the browser into dist/web/<page>/, one esbuild build per page,
// writes each page's index.html, and compressed copies (.br, .gz) of its text files. A page whose
// entry does not exist yet is skipped.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join, dirname, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'src', 'web');

/**
 * The pages: entry (relative to src/web/), title, and format. The designer and the shell are ES
 * modules split into chunks (the editor is loaded where it is used); the feature frame is one
 * classic script, because its opaque origin would make a module script a cross-origin request.
 */
export const WEB_PAGES = {
  // First: the pages that embed it are built with its version.
  frame: {
    entry: 'frame/main.tsx',
    title: 'Feature',
    format: 'iife',
    // The frame document carries its script inline (see frameHtml); these load only for a feature that imports them.
    extraEntries: { 'date-fns': 'frame/modules/date-fns.ts', 'lodash-es': 'frame/modules/lodash-es.ts' },
  },
  designer: { entry: 'designer/main.tsx', title: 'Trellis designer', format: 'esm', loading: 'Loading the designer…' },
  app: { entry: 'app/main.ts', title: 'Application', format: 'esm', loading: 'Loading the application…' },
};

/** The index.html of a page: its stylesheet and script under /web/<page>/. */
function indexHtml(page, { title, format, loading }, hasCss) {
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
    // What shows before the script has run (a slow network): the page says it is on its way.
    `<body><div id="root">${loading ? `<p class="boot" role="status">${loading}</p>` : ''}</div></body>`,
    '</html>',
    '',
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * The frame document with its script inline. A sandboxed frame has an opaque origin, and the
 * browser caches nothing such an origin requests: a script file would be fetched and compiled on
 * every load. The document itself is requested by the embedding page and cached under a URL that
 * carries its version (/app/frame?v=<version>). Its CSP allows this script by its hash.
 */
function frameHtml(script) {
  const inline = script.replaceAll('</script', '<\\/script');
  const scriptHash = createHash('sha256').update(inline).digest('base64');
  const html = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Feature</title>',
    '</head>',
    '<body><div id="root"></div>',
    `<script>${inline}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
  const version = createHash('sha256').update(html).digest('hex').slice(0, 16);
  return { html, scriptHash, version };
}

/** Builds every page into dist/web/<page>/ (staged beside it, then renamed into place). */
export async function buildWeb() {
  const { build } = await import('esbuild');
  let frameVersion = 'none';
  for (const [page, options] of Object.entries(WEB_PAGES)) {
    const entry = join(web, options.entry);
    if (!existsSync(entry)) continue;
    const target = join(root, 'dist', 'web', page);
    const staging = `${target}.staging-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    const esm = options.format === 'esm';
    const result = await build({
      entryPoints: { main: entry, ...Object.fromEntries(Object.entries(options.extraEntries ?? {}).map(([name, file]) => [name, join(web, file)])) },
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
      define: { 'process.env.NODE_ENV': '"production"', __FRAME_VERSION__: JSON.stringify(frameVersion) },
      metafile: true,
      legalComments: 'none',
      logLevel: 'warning',
    });
    // The bundler's metafile (source paths, sizes) for the size test: beside dist/web, not served.
    mkdirSync(join(root, 'dist', 'web-meta'), { recursive: true });
    writeFileSync(join(root, 'dist', 'web-meta', `${page}.json`), JSON.stringify(result.metafile));
    if (page === 'frame') {
      const frame = frameHtml(readFileSync(join(staging, 'main.js'), 'utf8'));
      frameVersion = frame.version;
      writeFileSync(join(staging, 'index.html'), frame.html);
      writeFileSync(join(staging, 'frame.json'), JSON.stringify({ version: frame.version, scriptHash: frame.scriptHash }));
    } else {
      writeFileSync(join(staging, 'index.html'), indexHtml(page, options, existsSync(join(staging, 'main.css'))));
    }
    await precompress(staging);
    rmSync(target, { recursive: true, force: true });
    renameSync(staging, target);
  }
}

/** The files served compressed, when they are at least PRECOMPRESS_MIN_BYTES; a page's document always. */
const PRECOMPRESSED_TYPES = new Set(['.js', '.css', '.html', '.json', '.svg']);
const PRECOMPRESS_MIN_BYTES = 1024;
const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/**
 * Writes `<file>.br` (brotli, quality 11) and `<file>.gz` (gzip, level 9) beside each text file of
 * a built page, which the server sends by the request's Accept-Encoding (src/http/web-routes.ts).
 * Compressed once here at the highest levels, instead of at every request at a fast one.
 */
async function precompress(folder) {
  const files = listFiles(folder).filter((file) => PRECOMPRESSED_TYPES.has(extname(file)));
  await Promise.all(
    files.map(async (file) => {
      const bytes = await readFile(file);
      if (bytes.length < PRECOMPRESS_MIN_BYTES && !file.endsWith('index.html')) return;
      const [br, gz] = await Promise.all([
        brotli(bytes, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: zlibConstants.BROTLI_MAX_QUALITY, [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
        gzipped(bytes, { level: 9 }),
      ]);
      // A variant that saves nothing would only cost the client a decompression.
      await Promise.all([br.length < bytes.length && writeFile(`${file}.br`, br), gz.length < bytes.length && writeFile(`${file}.gz`, gz)]);
    }),
  );
}

function listFiles(folder) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? listFiles(join(folder, entry.name)) : [join(folder, entry.name)]));
}

/** The files a built page must have; build.mjs rebuilds when one is missing or older than src/. */
export function webOutputs() {
  return Object.entries(WEB_PAGES)
    .filter(([, options]) => existsSync(join(web, options.entry)))
    .flatMap(([page]) => [join(root, 'dist', 'web', page, 'main.js'), join(root, 'dist', 'web', page, 'index.html')]);
}
