import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

/**
 * The size of what a browser loads, from the bundler's metafile of each built page (the test
 * setup builds them): the files an entry imports statically are loaded at once; chunks reached
 * only by import() are loaded where they are used.
 */
const WEB = join(process.cwd(), 'dist', 'web');
const KB = 1024;

interface Metafile {
  outputs: Record<string, { imports: { path: string; kind: string }[]; entryPoint?: string; cssBundle?: string }>;
}

/** The page's metafile with its paths where the files are now (the build writes to a staging folder first). */
function meta(page: string): Metafile {
  const text = readFileSync(join(WEB, '..', 'web-meta', `${page}.json`), 'utf8');
  return JSON.parse(text.replace(new RegExp(`dist/web/${page}\\.staging-\\d+/`, 'g'), `dist/web/${page}/`)) as Metafile;
}

function gzipped(file: string): number {
  return gzipSync(readFileSync(join(process.cwd(), file)), { level: 9 }).length;
}

/** The output files loaded with the page's main entry: itself, its CSS and its static imports, transitively. */
function loadedAtStart(page: string): string[] {
  const { outputs } = meta(page);
  const main = `dist/web/${page}/main.js`;
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const output = outputs[file]!;
    if (output.cssBundle) seen.add(output.cssBundle);
    for (const imported of output.imports) if (imported.kind === 'import-statement' && outputs[imported.path]) visit(imported.path);
  };
  visit(main);
  return [...seen];
}

/** Every output of the page, for finding where a module ended up. */
function outputsWith(page: string, modulePath: string): string[] {
  const { outputs } = meta(page) as unknown as { outputs: Record<string, { inputs: Record<string, unknown> }> };
  return Object.entries(outputs)
    .filter(([, output]) => Object.keys(output.inputs).some((input) => input.includes(modulePath)))
    .map(([file]) => file);
}

const total = (files: string[]) => files.reduce((sum, file) => sum + gzipped(file), 0);

describe('the size of the web pages', () => {
  it('keeps the application shell with its runtime and UI modules (the feature frame) at most 200 KB gzipped', () => {
    const shell = total(loadedAtStart('app'));
    // Every module a feature may import: the frame's main script and the libraries it loads on demand.
    const frame = total(Object.keys(meta('frame').outputs).filter((file) => file.endsWith('.js')));
    expect(shell + frame).toBeLessThanOrEqual(200 * KB);
    console.log(`app shell ${(shell / KB).toFixed(1)} KB + feature frame ${(frame / KB).toFixed(1)} KB gzipped`);
  });

  it('keeps the designer at most 500 KB gzipped, with the code editor loaded only where it is used', () => {
    const atStart = loadedAtStart('designer');
    const withEditor = outputsWith('designer', 'node_modules/@codemirror/view');
    expect(withEditor.length).toBeGreaterThan(0);
    for (const file of withEditor) expect(atStart).not.toContain(file);
    const designer = total(atStart);
    const editor = total(withEditor);
    expect(designer + editor).toBeLessThanOrEqual(500 * KB);
    console.log(`designer ${(designer / KB).toFixed(1)} KB at start, editor ${(editor / KB).toFixed(1)} KB on demand, gzipped`);
  });
});
