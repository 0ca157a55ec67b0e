import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { codegen } from '@graphql-codegen/core';
import * as typescriptOperations from '@graphql-codegen/typescript-operations';
import { parse, printSchema, validate } from 'graphql';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { builderModules } from './builder/index.js';
import { DOMAIN_SCALARS } from './closed-sets.js';
import { buildBuilderSchema } from './schema.js';

/**
 * Every GraphQL document the web pages send (src/web), read from their source and checked against
 * the builder schema: a field renamed, an argument dropped or a type changed on the server fails
 * here, not in a page a browser test may not open. A document is a string or template literal
 * starting with `query` or `mutation`; the parts it interpolates are resolved from the constants of
 * its file and the exports of the modules it imports.
 */
const WEB = resolve(import.meta.dirname, '../web');
const ROOT = resolve(import.meta.dirname, '../..');

interface Found {
  /** File and line, for messages. */
  where: string;
  /** File and the literal's start, which edits elsewhere in the file do not move. */
  key: string;
  text: string | undefined;
}

/**
 * Documents built at run time from what no constant holds, each walked by a browser test instead:
 * the application page's first query (the page's and a feature's queries, joined), and the
 * designer's records browser, which calls the operations generated for the table it shows
 * (test/e2e/designer.test.ts builds a table and browses, creates, edits and deletes its records).
 */
const BUILT_AT_RUN_TIME = [
  'src/web/app/main.ts: `query AppPageAndFeature($id: ID!) { `',
  'src/web/designer/sections/tables.tsx: `query($filter: `',
  'src/web/designer/sections/tables.tsx: `mutation($id: ID!) { `',
  'src/web/designer/sections/tables.tsx: `mutation($id: ID!, $data: `',
  'src/web/designer/sections/tables.tsx: `mutation($data: `',
];

/** The start of a document: the keyword and what follows it (the word alone is code comparing names). */
const DOCUMENT = /^\s*(query|mutation)\b\s*[\w({$]/;

function sourceFiles(): string[] {
  return readdirSync(WEB, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.tsx?$/.test(name) && !/\.(test|d)\.tsx?$/.test(name))
    .map((name) => join(WEB, name))
    .sort();
}

/**
 * A run() or graphql() call of a page: where, the document it sends (read where a constant holds
 * it), and the generated type its answer is typed by, if any (`run<MenusQuery>(LOAD)`).
 */
interface Call {
  where: string;
  text: string | undefined;
  type?: string;
  /** The call's type argument as written, when it has one (`T` where a wrapper passes its own on). */
  typeArgument?: string;
}

/** What a source file of the pages holds: its documents, and the calls that send them. */
interface Scanned {
  documents: Found[];
  calls: Call[];
}

/** The generated answer type a call's type argument names, as itself or inside (`Omit<RolesQuery, 'tables'> & …`). */
function generatedTypeIn(node: ts.Node): string | undefined {
  if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && /(Query|Mutation)$/.test(node.typeName.text)) return node.typeName.text;
  return ts.forEachChild(node, generatedTypeIn);
}

let scanned: Promise<Scanned> | undefined;

/** Every page source read once for all the tests of this file. */
function scanPages(): Promise<Scanned> {
  scanned ??= Promise.all(sourceFiles().map(scan)).then((files) => ({ documents: files.flatMap((file) => file.documents), calls: files.flatMap((file) => file.calls) }));
  return scanned;
}

async function scan(file: string): Promise<Scanned> {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const constants = new Map<string, ts.Expression>();
  const imported = new Map<string, string>();
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name) && declaration.initializer) constants.set(declaration.name.text, declaration.initializer);
      }
    } else if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier) && statement.moduleSpecifier.text.startsWith('.')) {
      const bindings = statement.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) {
        const source = resolve(dirname(file), statement.moduleSpecifier.text.replace(/\.js$/, '.ts'));
        const module = existsSync(source) ? source : `${source}x`;
        for (const element of bindings.elements) imported.set(element.name.text, module);
      }
    }
  }
  const exportsOf = new Map<string, Record<string, unknown>>();
  for (const module of new Set(imported.values())) {
    try {
      exportsOf.set(module, (await import(module)) as Record<string, unknown>);
    } catch {
      // A module that cannot load outside a browser: its values stay unknown.
    }
  }

  const evaluate = (node: ts.Expression): string | undefined => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isParenthesizedExpression(node)) return evaluate(node.expression);
    if (ts.isTemplateExpression(node)) {
      let result = node.head.text;
      for (const span of node.templateSpans) {
        const part = evaluate(span.expression);
        if (part === undefined) return undefined;
        result += part + span.literal.text;
      }
      return result;
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const [left, right] = [evaluate(node.left), evaluate(node.right)];
      return left === undefined || right === undefined ? undefined : left + right;
    }
    if (ts.isIdentifier(node)) {
      const local = constants.get(node.text);
      if (local) return evaluate(local);
      const module = imported.get(node.text);
      const value = module ? exportsOf.get(module)?.[node.text] : undefined;
      return typeof value === 'string' ? value : undefined;
    }
    return undefined;
  };

  const found: Found[] = [];
  const calls: Call[] = [];
  const whereOf = (node: ts.Node) => `${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && ['run', 'graphql'].includes(node.expression.text) && node.arguments[0]) {
      const typeArgument = node.typeArguments?.[0];
      const type = typeArgument && generatedTypeIn(typeArgument);
      calls.push({ where: whereOf(node), text: evaluate(node.arguments[0]), ...(type ? { type } : {}), ...(typeArgument ? { typeArgument: typeArgument.getText() } : {}) });
    }
    const start = ts.isTemplateExpression(node) ? node.head.text : ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : undefined;
    if (start !== undefined && DOCUMENT.test(start) && !ts.isTemplateSpan(node.parent)) {
      found.push({ where: whereOf(node), key: `${relative(ROOT, file)}: \`${start}\``, text: evaluate(node as ts.Expression) });
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { documents: found, calls };
}

describe('the web pages’ GraphQL documents', () => {
  it('are each valid against the builder schema', async () => {
    const schema = buildBuilderSchema(builderModules);
    const { documents } = await scanPages();
    // The pages send dozens: a reader that found few would check nothing.
    expect(documents.length).toBeGreaterThan(60);
    expect(documents.filter((document) => document.text === undefined).map((document) => document.key)).toEqual(BUILT_AT_RUN_TIME);
    const problems = documents.flatMap(({ where, text }) => {
      if (text === undefined) return [];
      try {
        return validate(schema, parse(text)).map((error) => `${where}: ${error.message}`);
      } catch (error) {
        return [`${where}: ${(error as Error).message}`];
      }
    });
    expect(problems).toEqual([]);
  });

  it('are every document a page sends: none is written without its query or mutation keyword, where this test would not see it', async () => {
    const { calls } = await scanPages();
    expect(calls.length).toBeGreaterThan(50);
    expect(calls.filter(({ text }) => text !== undefined && !DOCUMENT.test(text)).map(({ where, text }) => `${where}: ${text!.slice(0, 40)}`)).toEqual([]);
  });
});

/** What src/web/graphql-operations.ts says of itself. */
const GENERATED_HEADER = `// The answers and variables of the GraphQL documents the web pages send, typed from the builder
// schema: generated by src/graphql/web-documents.test.ts, which fails when a document or the schema
// changed since. After such a change: npx vitest run src/graphql/web-documents.test.ts -u
`;

/** How the schema's scalars are typed in the pages: a closed set by its values. */
const SCALAR_TYPES: Record<string, string> = {
  DateTime: 'string',
  JSON: 'unknown',
  ...Object.fromEntries(Object.entries(DOMAIN_SCALARS).map(([name, values]) => [name, values.map((value) => `'${value}'`).join(' | ')])),
};

describe('the types of the web pages’ GraphQL answers', () => {
  it('are generated from the documents and the builder schema (src/web/graphql-operations.ts)', async () => {
    const documents = (await scanPages()).documents.filter((document): document is Found & { text: string } => document.text !== undefined);
    const parsed = documents.map(({ where, text }) => ({ location: where, document: parse(text) }));
    // A type is named after its operation: every document a page sends by a constant has a name, each its own.
    const names = parsed.map(({ location, document }) => {
      const operation = document.definitions[0];
      return operation?.kind === 'OperationDefinition' && operation.name ? operation.name.value : `${location}: no name`;
    });
    expect(names.filter((name) => name.endsWith(': no name'))).toEqual([]);
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
    const generated = await codegen({
      filename: 'graphql-operations.ts',
      schema: parse(printSchema(buildBuilderSchema(builderModules))),
      documents: parsed,
      plugins: [{ 'typescript-operations': {} }],
      pluginMap: { 'typescript-operations': typescriptOperations },
      config: { scalars: SCALAR_TYPES, defaultScalarType: 'unknown' },
    });
    await expect(`${GENERATED_HEADER}${generated}`).toMatchFileSnapshot('../web/graphql-operations.ts');
  });

  it("are each used with the document they were generated from: run<MenusQuery>(…) sends the query named Menus", async () => {
    const typed = (await scanPages()).calls.filter((call): call is Call & { type: string } => call.type !== undefined);
    expect(typed.length).toBeGreaterThan(30);
    const mismatched = typed.flatMap(({ where, type, text }) => {
      const operation = text === undefined ? undefined : parse(text).definitions[0];
      if (operation?.kind !== 'OperationDefinition' || !operation.name) return [`${where}: ${type} types a document this test cannot read`];
      const expected = `${operation.name.value}${operation.operation === 'query' ? 'Query' : 'Mutation'}`;
      return expected === type ? [] : [`${where}: ${type} types the document ${operation.name.value} (its answer is ${expected})`];
    });
    expect(mismatched).toEqual([]);
  });

  it('are the only answer types a call names: no run<{ … }>(…) written by hand beside them', async () => {
    // A wrapper's own type parameter (`graphql<T>` inside run()) is passed on, not written; a document
    // built at run time (BUILT_AT_RUN_TIME: a table's generated operations) has no generated type.
    const handWritten = (await scanPages()).calls.filter((call) => call.typeArgument !== undefined && call.type === undefined && call.typeArgument !== 'T' && call.text !== undefined);
    expect(handWritten.map(({ where, typeArgument }) => `${where}: ${typeArgument}`)).toEqual([]);
  });
});
