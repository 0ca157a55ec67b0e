import type { Node, Program } from '@babel/types';
import {
  GraphQLError,
  Kind,
  TypeInfo,
  getNamedType,
  isInputObjectType,
  parse,
  validate,
  visit,
  visitWithTypeInfo,
  type ASTNode,
  type DocumentNode,
  type GraphQLSchema,
  type GraphQLType,
  type SelectionSetNode,
  type TypeNode,
} from 'graphql';
import { walk, type Finding } from '../authoring/ast-walk.js';
import type { DataNeed } from '../tables/access-schema.js';

/** What a feature's GraphQL documents are checked against. */
export interface FeatureSchema {
  /** The schema served at /graphql. */
  readonly schema: GraphQLSchema;
  /** The root fields (queries and mutations) generated from the application's tables: the only ones a feature reaches. */
  readonly applicationFields: ReadonlySet<string>;
  /** What each of those root fields does with which table's records (D32). */
  readonly recordOperations?: ReadonlyMap<string, RecordOperation>;
  /** What /graphql makes of a parsed document before validating it (quoted values of its enums read as enum values). */
  readonly asServed?: (document: DocumentNode) => DocumentNode;
}

/** A generated root field as data access sees it: listOrders reads Orders, createOrders creates... */
export interface RecordOperation {
  readonly tableId: string;
  readonly table: string;
  readonly action: 'read' | 'create' | 'update' | 'delete';
}

export type { DataNeed };

/** The functions of '@trellis/runtime' whose first argument is a GraphQL document. */
const DATA_FUNCTIONS = new Set(['useQuery', 'useMutation', 'graphql']);
const RUNTIME_MODULE = '@trellis/runtime';
/** A document of a feature is small; this bounds the parser's work on hostile text. */
const MAX_TOKENS = 5000;
const LISTED_NAMES = 12;

interface FoundDocument {
  text: string;
  /** The string or template literal holding it. */
  node: Node;
}

/**
 * Checks every GraphQL document the feature passes to useQuery, useMutation or graphql from
 * '@trellis/runtime' (a string, a template without `${}`, or a `const` holding one) against the
 * application's schema: syntax, unknown operations, fields, arguments and types, wrong argument
 * types, and builder operations, which a feature never reaches. Each finding points at the line and
 * column in the feature's code and names what exists instead.
 *
 * @example checkFeatureDocuments(program, featureSchema) // [{ code: 'GRAPHQL_INVALID', message: 'Cannot query field "tasks" on type "Query". …', line: 5, column: 22 }]
 */
export function checkFeatureDocuments(program: Program, featureSchema: FeatureSchema): Finding[] {
  return featureDocuments(program).flatMap((document) => checkDocument(document, featureSchema));
}

/**
 * The tables and actions the feature's GraphQL documents need (D32): a list or get reads, a create
 * creates, an update or delete also reads (what cannot be read cannot be reached). Documents that
 * do not parse need nothing (the validator reports them).
 *
 * @example featureDataNeeds(program, featureSchema) // [{ table: 'Orders', action: 'read', ... }, { table: 'Orders', action: 'create', ... }]
 */
export function featureDataNeeds(program: Program, featureSchema: FeatureSchema): DataNeed[] {
  const operations = featureSchema.recordOperations;
  if (!operations) return [];
  const needs = new Map<string, DataNeed>();
  const add = (need: DataNeed) => needs.set(`${need.tableId}:${need.action}`, need);
  for (const { text } of featureDocuments(program)) {
    let document: DocumentNode;
    try {
      document = parse(text, { maxTokens: MAX_TOKENS, noLocation: true });
    } catch {
      continue;
    }
    for (const name of rootFields(document)) {
      const operation = operations.get(name);
      if (!operation) continue;
      add({ tableId: operation.tableId, table: operation.table, action: operation.action });
      if (operation.action === 'update' || operation.action === 'delete') add({ tableId: operation.tableId, table: operation.table, action: 'read' });
    }
  }
  const order = ['read', 'create', 'update', 'delete'];
  return [...needs.values()].sort((a, b) => a.table.localeCompare(b.table) || order.indexOf(a.action) - order.indexOf(b.action));
}

/**
 * Warnings for data calls whose document is not a literal (or a const holding one): the validator
 * cannot check it, and granting the feature cannot know which tables it needs (D32).
 */
export function uncheckedDocuments(program: Program): Finding[] {
  return featureCalls(program).unchecked.map((call) => ({
    code: 'GRAPHQL_NOT_CHECKED',
    message:
      'This GraphQL document is not a string literal, a template without ${} or a const holding one, so it is not checked against the schema, ' +
      "and granting the feature to a role cannot see which tables it needs: pass the document itself to useQuery/useMutation/graphql.",
    ...(call.loc ? { line: call.loc.start.line, column: call.loc.start.column + 1 } : {}),
  }));
}

function featureDocuments(program: Program): FoundDocument[] {
  return featureCalls(program).documents;
}

/** The data calls of the code: those whose document can be read, and the others. */
function featureCalls(program: Program): { documents: FoundDocument[]; unchecked: Node[] } {
  const { functions, namespaces } = runtimeImports(program);
  if (functions.size === 0 && namespaces.size === 0) return { documents: [], unchecked: [] };
  const constants = new Map<string, Node>();
  const calls: Node[] = [];
  walk(program, ({ node }) => {
    if (node.type === 'VariableDeclaration' && node.kind === 'const') {
      for (const declarator of node.declarations) {
        if (declarator.id.type === 'Identifier' && declarator.init && literalText(declarator.init) !== undefined) constants.set(declarator.id.name, declarator.init);
      }
    }
    if (node.type === 'CallExpression' && isDataFunction(node.callee, functions, namespaces)) calls.push(node);
  });
  const documents: FoundDocument[] = [];
  const unchecked: Node[] = [];
  for (const call of calls) {
    if (call.type !== 'CallExpression') continue;
    const [argument] = call.arguments;
    const node = argument?.type === 'Identifier' ? constants.get(argument.name) : argument;
    const text = node ? literalText(node) : undefined;
    if (node && text !== undefined) documents.push({ text, node });
    else unchecked.push(call);
  }
  return { documents, unchecked };
}

function runtimeImports(program: Program): { functions: Set<string>; namespaces: Set<string> } {
  const functions = new Set<string>();
  const namespaces = new Set<string>();
  for (const statement of program.body) {
    if (statement.type !== 'ImportDeclaration' || statement.source.value !== RUNTIME_MODULE) continue;
    for (const specifier of statement.specifiers) {
      if (specifier.type === 'ImportNamespaceSpecifier') namespaces.add(specifier.local.name);
      if (specifier.type !== 'ImportSpecifier') continue;
      const imported = specifier.imported.type === 'Identifier' ? specifier.imported.name : specifier.imported.value;
      if (DATA_FUNCTIONS.has(imported)) functions.add(specifier.local.name);
    }
  }
  return { functions, namespaces };
}

function isDataFunction(callee: Node, functions: Set<string>, namespaces: Set<string>): boolean {
  if (callee.type === 'Identifier') return functions.has(callee.name);
  return (
    callee.type === 'MemberExpression' &&
    callee.object.type === 'Identifier' &&
    namespaces.has(callee.object.name) &&
    callee.property.type === 'Identifier' &&
    !callee.computed &&
    DATA_FUNCTIONS.has(callee.property.name)
  );
}

/** The text of a string literal or of a template literal without `${}`. */
function literalText(node: Node): string | undefined {
  if (node.type === 'StringLiteral') return node.value;
  if (node.type === 'TemplateLiteral' && node.expressions.length === 0) return node.quasis[0]?.value.cooked ?? undefined;
  return undefined;
}

function checkDocument({ text, node }: FoundDocument, featureSchema: FeatureSchema): Finding[] {
  let document: DocumentNode;
  try {
    document = parse(text, { maxTokens: MAX_TOKENS, noLocation: false });
  } catch (error) {
    const syntax = error instanceof GraphQLError ? error : undefined;
    return [at(node, syntax?.locations?.[0], 'GRAPHQL_SYNTAX', String(syntax?.message ?? error).replace(/^Syntax Error: /, 'GraphQL syntax error: '))];
  }
  if (featureSchema.asServed) document = featureSchema.asServed(document);
  const invalid = validate(featureSchema.schema, document);
  if (invalid.length > 0) return invalid.map((error) => at(node, error.locations?.[0], 'GRAPHQL_INVALID', withHint(error, featureSchema)));
  return builderOperations(document, featureSchema).map(({ name, location }) =>
    at(
      node,
      location,
      'GRAPHQL_BUILDER_OPERATION',
      `"${name}" is a builder operation: features reach only the application's generated operations.${namesHint(featureSchema)}`,
    ),
  );
}

/**
 * Root fields of the document's operations that are not generated from a table, reached directly,
 * through inline fragments or through fragment spreads (each fragment visited once).
 */
export function builderOperations(document: DocumentNode, { applicationFields }: Pick<FeatureSchema, 'applicationFields'>): { name: string; location: GraphQLLocation | undefined }[] {
  return rootSelections(document).filter(({ name }) => !applicationFields.has(name));
}

function rootFields(document: DocumentNode): string[] {
  return rootSelections(document).map(({ name }) => name);
}

/**
 * The root fields of the document's operations, reached directly, through inline fragments or
 * through fragment spreads (each fragment visited once); introspection fields left out.
 */
function rootSelections(document: DocumentNode): { name: string; location: GraphQLLocation | undefined }[] {
  const found: { name: string; location: GraphQLLocation | undefined }[] = [];
  const fragments = new Map(document.definitions.flatMap((definition) => (definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition] as const] : [])));
  const visited = new Set<string>();
  const visit = (selectionSet: SelectionSetNode) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        if (fragment && !visited.has(fragment.name.value)) {
          visited.add(fragment.name.value);
          visit(fragment.selectionSet);
        }
      }
      if (selection.kind !== Kind.FIELD || selection.name.value.startsWith('__')) continue;
      found.push({ name: selection.name.value, location: selection.loc ? { line: selection.loc.startToken.line, column: selection.loc.startToken.column } : undefined });
    }
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) visit(definition.selectionSet);
  }
  return found;
}

/**
 * The error's message with what exists instead, when it is about a field that does not exist: at
 * the root, the application's operations (graphql-js would suggest builder operations too).
 */
function withHint(error: GraphQLError, featureSchema: FeatureSchema): string {
  const field = /^(Cannot query field "[^"]*" on type "([^"]*)"\.)/.exec(error.message);
  if (!field) return error.message;
  const typeName = field[2]!;
  if (typeName === 'Query' || typeName === 'Mutation') return `${field[1]}${namesHint(featureSchema)}`;
  if (/Did you mean/.test(error.message)) return error.message;
  const type = featureSchema.schema.getType(typeName);
  if (!type || !('getFields' in type)) return error.message;
  return `${error.message} Fields of ${typeName}: ${listed(Object.keys(type.getFields()))}.`;
}

function namesHint({ applicationFields }: FeatureSchema): string {
  return applicationFields.size === 0
    ? ' The application has no tables yet: create one first (create_table).'
    : ` The application's operations: ${listed([...applicationFields])}.`;
}

function listed(names: string[]): string {
  return names.length <= LISTED_NAMES ? names.join(', ') : `${names.slice(0, LISTED_NAMES).join(', ')}, … (${names.length - LISTED_NAMES} more)`;
}

interface GraphQLLocation {
  line: number;
  column: number;
}

/** A finding at `location` inside the document held by the literal `node` (1-based, as in the feature's code). */
function at(node: Node, location: GraphQLLocation | undefined, code: string, message: string): Finding {
  const start = node.loc?.start;
  if (!start) return { code, message };
  if (!location) return { code, message, line: start.line, column: start.column + 1 };
  // The document starts one character after the literal's opening quote or backtick.
  return location.line === 1
    ? { code, message, line: start.line, column: start.column + 1 + location.column }
    : { code, message, line: start.line + location.line - 1, column: location.column };
}

/** Where code uses a table or a field: 1-based line and column in the code, and how. */
export interface CodeUse {
  line?: number;
  column?: number;
  detail: string;
}

/** The generated names of one table's GraphQL types, as the schema has them. */
interface TableTypes {
  operations: ReadonlySet<string>;
  record?: string;
  input?: string;
  filter?: string;
  sortField?: string;
}

/**
 * Where the feature's GraphQL documents use the table `tableId` (its operations) or, with `field`,
 * one of its fields: selected, written in `data`, filtered or sorted on. When a document takes the
 * table's input or filter as a variable, object keys named like the field anywhere in the code
 * count too (their values are built at run time). A static reading, like the validator's: a
 * document built at run time is not seen.
 *
 * @example featureTableUses(program, featureSchema, ordersId, 'amount') // [{ line: 4, column: 52, detail: 'selects amount' }]
 */
export function featureTableUses(program: Program, featureSchema: FeatureSchema, tableId: string, field?: string): CodeUse[] {
  const types = tableTypes(featureSchema, tableId);
  if (!types) return [];
  const uses: CodeUse[] = [];
  let takesVariables = false;
  for (const found of featureDocuments(program)) {
    let document: DocumentNode;
    try {
      document = parse(found.text, { maxTokens: MAX_TOKENS });
    } catch {
      continue;
    }
    const use = (location: GraphQLLocation | undefined, detail: string) => {
      const { line, column } = at(found.node, location, '', '');
      uses.push({ line, column, detail });
    };
    const typeInfo = new TypeInfo(featureSchema.schema);
    visit(
      document,
      visitWithTypeInfo(typeInfo, {
        Field(node) {
          const parent = typeInfo.getParentType()?.name;
          if (field === undefined && (parent === 'Query' || parent === 'Mutation') && types.operations.has(node.name.value)) use(locationOf(node), node.name.value);
          if (field !== undefined && parent === types.record && node.name.value === field) use(locationOf(node), `selects ${field}`);
        },
        ObjectField(node) {
          if (field === undefined || node.name.value !== field) return;
          const parent = namedTypeName(typeInfo.getParentInputType());
          if (parent === types.input) use(locationOf(node), `writes ${field}`);
          if (parent === types.filter) use(locationOf(node), `filters on ${field}`);
        },
        EnumValue(node) {
          if (field !== undefined && node.value === field && namedTypeName(typeInfo.getInputType()) === types.sortField) use(locationOf(node), `sorts on ${field}`);
        },
        VariableDefinition(node) {
          const named = typeNameOf(node.type);
          if (named === types.input || named === types.filter) takesVariables = true;
        },
      }),
    );
  }
  if (field !== undefined && takesVariables) uses.push(...objectKeysNamed(program, field));
  return uses.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

function tableTypes({ schema, recordOperations }: FeatureSchema, tableId: string): TableTypes | undefined {
  const operations = [...(recordOperations ?? [])].filter(([, operation]) => operation.tableId === tableId);
  if (!operations.length) return undefined;
  const types: TableTypes = { operations: new Set(operations.map(([name]) => name)) };
  for (const [name, operation] of operations) {
    const definition = (operation.action === 'read' ? schema.getQueryType() : schema.getMutationType())?.getFields()[name];
    if (!definition) continue;
    if (operation.action === 'create') types.record = getNamedType(definition.type).name;
    for (const argument of definition.args) {
      if (argument.name === 'data') types.input = getNamedType(argument.type).name;
      if (argument.name === 'filter') types.filter = getNamedType(argument.type).name;
      const sort = getNamedType(argument.type);
      if (argument.name === 'sort' && isInputObjectType(sort)) types.sortField = namedTypeName(sort.getFields().field?.type);
    }
  }
  return types;
}

function namedTypeName(type: GraphQLType | null | undefined): string | undefined {
  return type ? getNamedType(type).name : undefined;
}

function typeNameOf(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : typeNameOf(type.type);
}

function locationOf(node: ASTNode): GraphQLLocation | undefined {
  return node.loc ? { line: node.loc.startToken.line, column: node.loc.startToken.column } : undefined;
}

/** Object keys (`{ amount: 5 }`, `{ 'amount': 5 }`) named `field` anywhere in the code. */
function objectKeysNamed(program: Program, field: string): CodeUse[] {
  const uses: CodeUse[] = [];
  walk(program, ({ node }) => {
    if (node.type !== 'ObjectProperty' || node.computed) return;
    const key = node.key.type === 'Identifier' ? node.key.name : node.key.type === 'StringLiteral' ? node.key.value : undefined;
    const start = node.loc?.start;
    if (key === field) uses.push({ ...(start ? { line: start.line, column: start.column + 1 } : {}), detail: `object key ${field} (variables of a document)` });
  });
  return uses;
}
