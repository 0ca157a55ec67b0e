import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The import rules of docs/architecture.md, checked on the sources (tests excepted).
const SRC = dirname(fileURLToPath(import.meta.url));
const ADAPTERS = ['mcp', 'graphql', 'http', 'cli', 'web'];
/** Every folder of src/ that is not an adapter: the domains, `platform/` and `authoring/`. */
const DOMAINS = readdirSync(SRC, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !ADAPTERS.includes(entry.name))
  .map((entry) => entry.name);
/** Packages only adapters use: a domain taking one of their types is tied to that protocol. */
const ADAPTER_PACKAGES = /^(fastify|@fastify\/|@modelcontextprotocol\/|commander$)/;
/** The container and the server's assembly, which know every service: no domain reaches back into them. */
const ASSEMBLY = ['services.js', 'server.js', 'main.js'];
/** The hook-run contract shared by the record layer, the webhooks and the hook runtime (src/hooks/run-contract.ts). */
const CONTRACT = 'hooks/run-contract.ts';

interface Import {
  /** As written for a package (`fastify`), else src/-relative as written (`platform/errors.js`). */
  path: string;
  /** A file of the project (a relative specifier), not a package. */
  local: boolean;
  /** `import type` or `export type`: erased, so it loads nothing at run time. */
  typeOnly: boolean;
}

const parsed = new Map<string, Import[]>();

/** One source file as the TypeScript parser reads it; `text` instead of the file's own. */
function parse(file: string, text = readFileSync(file, 'utf8')): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
}

/** The imports and re-exports of one source file, read by the TypeScript parser. */
function importsOf(file: string): Import[] {
  const known = parsed.get(file);
  if (known) return known;
  const found = importsIn(parse(file));
  parsed.set(file, found);
  return found;
}

/**
 * The imports and re-exports of a parsed file: declarations (`import type` and `export type` are
 * type-only), dynamic `import()`, and `import('…')` in a type, which is type-only.
 */
function importsIn(source: ts.SourceFile): Import[] {
  const file = source.fileName;
  const found: Import[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    const local = specifier.startsWith('.');
    found.push({ path: local ? relative(SRC, resolve(dirname(file), specifier)) : specifier, local, typeOnly });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) add(node.moduleSpecifier.text, node.importClause?.isTypeOnly === true);
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) add(node.moduleSpecifier.text, node.isTypeOnly);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) add(node.arguments[0].text, false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) add(node.argument.literal.text, true);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The names a file declares at its top level (types, interfaces, classes, enums, functions,
 * variables) and the names it exports from elsewhere (`export { X } from`, `export type { X }`).
 */
function namesOf(file: string): { declared: string[]; reexported: string[] } {
  const declared: string[] = [];
  const reexported: string[] = [];
  for (const statement of parse(file).statements) {
    if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isEnumDeclaration(statement) || ts.isFunctionDeclaration(statement)) {
      if (statement.name) declared.push(statement.name.text);
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) if (ts.isIdentifier(declaration.name)) declared.push(declaration.name.text);
    } else if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) reexported.push(element.name.text);
    }
  }
  return { declared, reexported };
}

/** Each source file below `folder` (relative to src/; '' for all of src/) with what it imports. */
function importsBelow(folder: string): { file: string; imports: Import[] }[] {
  const found: { file: string; imports: Import[] }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) found.push({ file: relative(SRC, path), imports: importsOf(path) });
    }
  };
  walk(join(SRC, folder));
  return found;
}

/** The source file below src/ a local import names (`x.js` is `x.ts` or `x.tsx`); undefined outside src/. */
function sourceFile({ path }: Import): string | undefined {
  if (path.startsWith('..')) return undefined;
  return [path.replace(/\.js$/, '.ts'), path.replace(/\.js$/, '.tsx')].find((candidate) => existsSync(join(SRC, candidate)));
}

/** The import cycles of `graph` (file -> files it imports), each as its files in order, the first repeated at the end. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const trail: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    trail.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...trail.slice(trail.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    trail.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

const topFolder = (path: string) => path.split('/')[0]!;

describe('layering', () => {
  it('platform/ imports nothing of the domains or adapters (only itself, config.ts and packages)', () => {
    const offending = importsBelow('platform').flatMap(({ file, imports }) =>
      imports
        .filter(({ path, local }) => local && topFolder(path) !== 'platform' && path !== 'config.js')
        .map(({ path }) => `${file} -> ${path}`),
    );
    expect(offending).toEqual([]);
  });

  it('the domain folders import no adapter (MCP, GraphQL, HTTP, CLI, web), no adapter package and not the assembly, not even a type', () => {
    expect(DOMAINS).toEqual(expect.arrayContaining(['access', 'audit', 'authoring', 'features', 'hooks', 'keys', 'platform', 'runtime', 'tables']));
    const offending = DOMAINS.flatMap((domain) =>
      importsBelow(domain).flatMap(({ file, imports }) =>
        imports
          .filter(({ path, local }) => (local ? ADAPTERS.includes(topFolder(path)) || ASSEMBLY.includes(path) : ADAPTER_PACKAGES.test(path)))
          .map(({ path }) => `${file} -> ${path}`),
      ),
    );
    expect(offending).toEqual([]);
  });

  it('sees every way a file can reach the container: value, `import type`, inline `type`, `export type`, `import()` and `import(...)` in a type', () => {
    const file = join(SRC, 'tables', 'example.ts');
    const forms = [
      "import { createServices } from '../services.js';",
      "import type { Services } from '../services.js';",
      "import { type Services } from '../services.js';",
      "export type { Services } from '../services.js';",
      "const load = () => import('../services.js');",
      "let services: import('../services.js').Services;",
    ];
    for (const form of forms) expect(importsIn(parse(file, form)).map(({ path }) => path), form).toEqual(['services.js']);
  });

  it('no domain file takes the container (services.ts), not even a type: each service is handed what it uses', () => {
    const offending = DOMAINS.flatMap((domain) =>
      importsBelow(domain).flatMap(({ file, imports }) => imports.filter(({ path, local }) => local && path === 'services.js').map(({ typeOnly }) => `${file} -> services.js${typeOnly ? ' (type)' : ''}`)),
    );
    expect(offending).toEqual([]);
  });

  it('the hook-run contract (HookTrigger, SaveTrigger, HookDb, ...) is declared once, in hooks/run-contract.ts, and imported from there', () => {
    const contract = namesOf(join(SRC, CONTRACT)).declared;
    expect(contract).toEqual(expect.arrayContaining(['HookTrigger', 'SaveTrigger', 'HookDb', 'HookUser', 'HookRequest', 'HookInvocation', 'HookResult', 'HookRunner']));
    // Types of hooks/ only: the record layer and the runtime import it, it imports neither.
    expect(importsOf(join(SRC, CONTRACT)).filter(({ path, local, typeOnly }) => !local || !typeOnly || topFolder(path) !== 'hooks')).toEqual([]);
    const offending = importsBelow('')
      .filter(({ file }) => file !== CONTRACT)
      .flatMap(({ file }) => {
        const { declared, reexported } = namesOf(join(SRC, file));
        return [
          ...declared.filter((name) => contract.includes(name)).map((name) => `${file} declares ${name}`),
          ...reexported.filter((name) => contract.includes(name)).map((name) => `${file} re-exports ${name}`),
        ];
      });
    expect(offending).toEqual([]);
  });

  // Imports of types only (`import type`, `export type`) are erased and load nothing: cycles through
  // them are allowed (the adapters' `Services` type, a record type named back by its writer).
  it('has no import cycle among the source files', () => {
    const graph = new Map(
      importsBelow('').map(({ file, imports }) => [file, imports.filter(({ local, typeOnly }) => local && !typeOnly).flatMap((entry) => sourceFile(entry) ?? [])]),
    );
    expect(cycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });
});
