import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The import rules of docs/architecture.md, checked on the sources (tests excepted).
const SRC = dirname(fileURLToPath(import.meta.url));
const DOMAINS = ['access', 'application', 'keys', 'integrations', 'features', 'hooks', 'tables', 'menus', 'envvars', 'audit', 'runtime'];
const ADAPTERS = ['mcp', 'graphql', 'http', 'cli', 'web'];

/** Each source file below `folder` (relative to src/) with the src/-relative paths it imports. */
function importsBelow(folder: string): { file: string; imports: string[] }[] {
  const found: { file: string; imports: string[] }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
        const text = readFileSync(path, 'utf8');
        const imports = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map(([, spec]) => relative(SRC, resolve(dirname(path), spec!)));
        found.push({ file: relative(SRC, path), imports });
      }
    }
  };
  walk(join(SRC, folder));
  return found;
}

const topFolder = (path: string) => path.split('/')[0]!;

describe('layering', () => {
  it('platform/ imports nothing of the domains or adapters (only itself and config.ts)', () => {
    const offending = importsBelow('platform').flatMap(({ file, imports }) =>
      imports.filter((path) => topFolder(path) !== 'platform' && path !== 'config.js').map((path) => `${file} -> ${path}`),
    );
    expect(offending).toEqual([]);
  });

  it('the domain folders import no adapter (MCP, GraphQL, HTTP, CLI, web)', () => {
    const offending = DOMAINS.flatMap((domain) =>
      importsBelow(domain).flatMap(({ file, imports }) => imports.filter((path) => ADAPTERS.includes(topFolder(path))).map((path) => `${file} -> ${path}`)),
    );
    expect(offending).toEqual([]);
  });
});
