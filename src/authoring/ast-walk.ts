import type { Node } from '@babel/types';

/**
 * One problem found in submitted code; `line` and `column` are 1-based. A type rather than an
 * interface so that it is assignable to Record<string, unknown> (tool outputs).
 */
export type Finding = {
  /** Stable id such as 'SYNTAX' or 'FORBIDDEN_IMPORT'; callers match on it, never on the message. */
  code: string;
  message: string;
  line?: number;
  column?: number;
};

/** The answer of a code validator: `valid` is false exactly when there is at least one error. */
export type CodeValidation = {
  valid: boolean;
  errors: Finding[];
  warnings: Finding[];
};

/** The names declared in one lexical scope, linked to the enclosing scope. */
export interface Scope {
  readonly parent: Scope | undefined;
  readonly names: ReadonlySet<string>;
}

/** A node reached by `walk`, with where it sits and the scope it is evaluated in. */
export interface Visit {
  node: Node;
  parent: Node | undefined;
  key: string | undefined;
  scope: Scope;
}

/** What the global-access check looks for: objects that stand for the global object, and forbidden names. */
export interface GlobalRules {
  /** Names of the global object itself, e.g. window, globalThis, self. */
  aliases: ReadonlySet<string>;
  /** Forbidden global names (also reached through an alias) with the message that says what to use instead. */
  names: ReadonlyMap<string, string>;
  /** Forbidden `object.property` pairs on globals, e.g. 'document.cookie'. */
  members: ReadonlyMap<string, string>;
}

const NON_CHILD_KEYS = new Set([
  'type',
  'loc',
  'start',
  'end',
  'range',
  'extra',
  'leadingComments',
  'trailingComments',
  'innerComments',
  'comments',
  'tokens',
  'errors',
  // A closing tag only repeats the opening tag's name.
  'closingElement',
]);

const FUNCTION_TYPES = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ObjectMethod',
  'ClassMethod',
  'ClassPrivateMethod',
]);

const MEMBER_TYPES = new Set(['MemberExpression', 'OptionalMemberExpression', 'JSXMemberExpression']);

/**
 * Visits every node under `root` in source order (pre-order), each with the scope it is evaluated
 * in. Iterative, so deeply nested code cannot overflow the stack. Declarations are hoisted:
 * `var` to the enclosing function, `let`/`const`/`class`/`function` to their block.
 */
export function walk(root: Node, visitor: (visit: Visit) => void): void {
  const top: Scope = { parent: undefined, names: new Set() };
  const stack: Visit[] = [{ node: root, parent: undefined, key: undefined, scope: scopeOf(root, undefined, top) }];
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    visitor(visit);
    const children = childrenOf(visit.node);
    for (let i = children.length - 1; i >= 0; i -= 1) {
      const [key, child] = children[i]!;
      stack.push({ node: child, parent: visit.node, key, scope: scopeOf(child, visit.node, visit.scope) });
    }
  }
}

/** True when `name` is declared in `scope` or any scope enclosing it. */
export function isBound(scope: Scope | undefined, name: string): boolean {
  return bindingScope(scope, name) !== undefined;
}

/** The innermost scope, from `scope` outwards, that declares `name`; undefined when none does. */
export function bindingScope(scope: Scope | undefined, name: string): Scope | undefined {
  for (let current = scope; current; current = current.parent) if (current.names.has(name)) return current;
  return undefined;
}

/**
 * True when the visited identifier reads a variable (as opposed to naming a property, a label or
 * an intrinsic JSX tag). Binding positions count as references: they resolve to their own scope.
 */
export function isReference({ node, parent, key }: Visit): boolean {
  if (node.type === 'JSXIdentifier') {
    if (parent?.type === 'JSXMemberExpression') return key === 'object';
    return parent?.type === 'JSXOpeningElement' && /^[A-Z_$]/.test(node.name);
  }
  if (node.type !== 'Identifier') return false;
  switch (parent?.type) {
    case 'MemberExpression':
    case 'OptionalMemberExpression':
      return key !== 'property' || parent.computed;
    case 'ObjectProperty':
    case 'ObjectMethod':
    case 'ClassProperty':
    case 'ClassAccessorProperty':
    case 'ClassMethod':
      return key !== 'key' || parent.computed;
    case 'ImportSpecifier':
    case 'ExportSpecifier':
      return key === 'local';
    case 'LabeledStatement':
    case 'BreakStatement':
    case 'ContinueStatement':
    case 'MetaProperty':
    case 'PrivateName':
      return false;
    default:
      return true;
  }
}

/**
 * The static name of a member access's property (`a.b`, `a['b']`, a template without
 * expressions), or undefined when it is computed at run time.
 */
export function propertyName(node: Node): string | undefined {
  if (node.type === 'JSXMemberExpression') return node.property.name;
  if (node.type !== 'MemberExpression' && node.type !== 'OptionalMemberExpression') return undefined;
  const { property } = node;
  if (!node.computed) return property.type === 'Identifier' ? property.name : undefined;
  if (property.type === 'StringLiteral') return property.value;
  if (property.type === 'TemplateLiteral' && property.expressions.length === 0) return property.quasis[0]?.value.cooked ?? undefined;
  return undefined;
}

/** The static name of an object or class key (`a`, `'a'`), or undefined for other keys. */
export function keyName(key: Node): string | undefined {
  if (key.type === 'Identifier') return key.name;
  return key.type === 'StringLiteral' ? key.value : undefined;
}

/** True for `a.b`, `a?.b`, `a[b]` and `<a.b>`. */
export function isMemberAccess(node: Node): node is Node & { object: Node } {
  return MEMBER_TYPES.has(node.type);
}

/**
 * Checks one visited node against the global rules: a forbidden global read directly (`fetch`),
 * through the global object (`window.fetch`, `window['fetch']`, `window.window.fetch`), a
 * forbidden member (`document.cookie`), or a run-time-computed property of the global object
 * (`window[name]`). Locally declared names shadow globals and are never reported.
 */
export function checkGlobalAccess(visit: Visit, rules: GlobalRules): Finding | undefined {
  if (!isMemberAccess(visit.node) && !isReference(visit)) return undefined;
  const path = globalPath(visit.node, visit.scope, rules.aliases);
  if (!path) return undefined;
  const { names, viaAlias } = path;
  if (names.length === 1 && names[0] === undefined) {
    return findingAt(visit.node, 'DYNAMIC_GLOBAL_ACCESS', 'A computed property of the global object is not allowed: use a fixed property name such as window.location');
  }
  if (names.length === 1 && (viaAlias || !isMemberAccess(visit.node))) {
    const message = rules.names.get(names[0]!);
    return message ? findingAt(visit.node, 'FORBIDDEN_GLOBAL', message) : undefined;
  }
  if (names.length === 2 && names[0] !== undefined && names[1] !== undefined) {
    const message = rules.members.get(`${names[0]}.${names[1]}`);
    return message ? findingAt(visit.node, 'FORBIDDEN_GLOBAL', message) : undefined;
  }
  return undefined;
}

/**
 * The global a callee or value stands for when it is one undeclared name, read directly or
 * through the global object: `setTimeout` and `window.setTimeout` -> 'setTimeout'.
 */
export function globalName(node: Node, scope: Scope, aliases: ReadonlySet<string>): string | undefined {
  const path = globalPath(node, scope, aliases);
  if (!path || path.names.length !== 1) return undefined;
  return path.viaAlias || !isMemberAccess(node) ? path.names[0] : undefined;
}

/** `x.constructor.constructor` reaches the Function constructor from any value. */
export function checkConstructorChain(node: Node): Finding | undefined {
  if (!isMemberAccess(node) || propertyName(node) !== 'constructor') return undefined;
  if (!isMemberAccess(node.object) || propertyName(node.object) !== 'constructor') return undefined;
  return findingAt(node, 'FORBIDDEN_GLOBAL', '.constructor.constructor reaches the Function constructor, which is not allowed: write the logic as plain functions');
}

/** A finding located at the start of `node`. */
export function findingAt(node: Node, code: string, message: string): Finding {
  const start = node.loc?.start;
  return start ? { code, message, line: start.line, column: start.column + 1 } : { code, message };
}

/** The finding for code longer than `limitBytes` bytes of UTF-8, or undefined when it fits. */
export function sizeFinding(code: string, limitBytes: number, limitLabel: string): Finding | undefined {
  const bytes = Buffer.byteLength(code, 'utf8');
  if (bytes <= limitBytes) return undefined;
  return { code: 'TOO_LARGE', message: `The code is ${bytes} bytes of UTF-8; the limit is ${limitLabel} (${limitBytes} bytes)` };
}

/** Turns what @babel/parser throws into a finding; Babel's 0-based column becomes 1-based. */
export function syntaxFinding(error: unknown, prefix = ''): Finding {
  if (error instanceof RangeError) return { code: 'TOO_COMPLEX', message: 'The code is nested too deeply to analyse' };
  const reason = (error instanceof Error ? error.message : String(error)).replace(/\s*\(\d+:\d+\)$/, '');
  const loc = (error as { loc?: { line: number; column: number } }).loc;
  const finding: Finding = { code: 'SYNTAX', message: `${prefix}${reason}` };
  return loc ? { ...finding, line: loc.line, column: loc.column + 1 } : finding;
}

/** Findings reported per list; the rest are summarised so an answer stays small. */
export const MAX_FINDINGS = 100;

/** Builds the validator answer: findings in source order, at most MAX_FINDINGS (+ a summary) per list. */
export function codeValidation(errors: Finding[], warnings: Finding[] = []): CodeValidation {
  return { valid: errors.length === 0, errors: firstInSource(errors, 'errors'), warnings: firstInSource(warnings, 'warnings') };
}

function firstInSource(findings: Finding[], kind: string): Finding[] {
  const sorted = findings.sort(bySource);
  if (sorted.length <= MAX_FINDINGS) return sorted;
  const more = sorted.length - MAX_FINDINGS;
  return [...sorted.slice(0, MAX_FINDINGS), { code: 'TRUNCATED', message: `${more} more ${kind} not shown; fix these first` }];
}

function bySource(a: Finding, b: Finding): number {
  return (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0);
}

/**
 * The names of a global access after leading global-object aliases are stripped:
 * `window.navigator.sendBeacon` -> ['navigator', 'sendBeacon'] (viaAlias), `fetch` -> ['fetch'].
 * An entry is undefined where the property is computed at run time.
 */
interface GlobalPath {
  names: readonly (string | undefined)[];
  viaAlias: boolean;
}

/** No rule matches a longer path, so only the first names are kept. */
const MAX_PATH_NAMES = 3;
const pathCaches = new WeakMap<ReadonlySet<string>, WeakMap<Node, GlobalPath | null>>();

/**
 * The global path of an identifier or member chain, or undefined when it does not start at an
 * undeclared identifier. Every member of a chain is visited, so results are cached per node:
 * linear even for `a.b.c.(...).z`.
 */
function globalPath(node: Node, scope: Scope, aliases: ReadonlySet<string>): GlobalPath | undefined {
  let cache = pathCaches.get(aliases);
  if (!cache) pathCaches.set(aliases, (cache = new WeakMap()));
  const chain: Node[] = [];
  let current = node;
  while (isMemberAccess(current) && !cache.has(current)) {
    chain.push(current);
    current = current.object;
  }
  let path = cache.has(current) ? cache.get(current)! : rootPath(current, scope, aliases);
  for (let i = chain.length - 1; i >= 0; i -= 1) {
    path = path && extendPath(path, propertyName(chain[i]!), aliases);
    cache.set(chain[i]!, path);
  }
  return path ?? undefined;
}

function rootPath(node: Node, scope: Scope, aliases: ReadonlySet<string>): GlobalPath | null {
  if (node.type !== 'Identifier' && node.type !== 'JSXIdentifier') return null;
  if (isBound(scope, node.name)) return null;
  return aliases.has(node.name) ? { names: [], viaAlias: true } : { names: [node.name], viaAlias: false };
}

function extendPath(path: GlobalPath, name: string | undefined, aliases: ReadonlySet<string>): GlobalPath {
  if (path.names.length === 0 && name !== undefined && aliases.has(name)) return path;
  if (path.names.length >= MAX_PATH_NAMES) return path;
  return { names: [...path.names, name], viaAlias: path.viaAlias };
}

function childrenOf(node: Node): [string, Node][] {
  const children: [string, Node][] = [];
  for (const [key, value] of Object.entries(node)) {
    if (NON_CHILD_KEYS.has(key)) continue;
    if (Array.isArray(value)) {
      for (const item of value) if (isNode(item)) children.push([key, item]);
    } else if (isNode(value)) {
      children.push([key, value]);
    }
  }
  return children;
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

function scopeOf(node: Node, parent: Node | undefined, outer: Scope): Scope {
  const names = declaredIn(node, parent);
  return names ? { parent: outer, names } : outer;
}

/** The names a node declares for its own scope, or undefined when it opens no scope. */
function declaredIn(node: Node, parent: Node | undefined): Set<string> | undefined {
  const names = new Set<string>();
  switch (node.type) {
    case 'Program':
      addLexical(node.body, names);
      addVars(node, names);
      return names;
    case 'StaticBlock':
      addLexical(node.body, names);
      addVars(node, names);
      return names;
    case 'BlockStatement':
      if (parent && FUNCTION_TYPES.has(parent.type)) return undefined;
      addLexical(node.body, names);
      return names;
    case 'SwitchStatement':
      for (const branch of node.cases) addLexical(branch.consequent, names);
      return names;
    case 'ForStatement':
      if (node.init?.type === 'VariableDeclaration') addLexical([node.init], names);
      return names;
    case 'ForInStatement':
    case 'ForOfStatement':
      if (node.left.type === 'VariableDeclaration') addLexical([node.left], names);
      return names;
    case 'CatchClause':
      if (node.param) addPatternNames(node.param, names);
      return names;
    case 'ClassExpression':
      if (node.id) names.add(node.id.name);
      return names;
    default:
      return FUNCTION_TYPES.has(node.type) ? functionScopeNames(node, names) : undefined;
  }
}

function functionScopeNames(node: Node, names: Set<string>): Set<string> {
  const fn = node as Extract<Node, { params: unknown }> & { body: Node; id?: Node | null };
  if (node.type === 'FunctionExpression' && node.id) names.add(node.id.name);
  for (const param of fn.params) addPatternNames(param, names);
  if (fn.body.type === 'BlockStatement') {
    addLexical(fn.body.body, names);
    addVars(fn.body, names);
  }
  return names;
}

function addLexical(statements: readonly Node[], names: Set<string>): void {
  for (const statement of statements) {
    const declaration =
      (statement.type === 'ExportNamedDeclaration' || statement.type === 'ExportDefaultDeclaration') && statement.declaration
        ? statement.declaration
        : statement;
    switch (declaration.type) {
      case 'VariableDeclaration':
        for (const declarator of declaration.declarations) addPatternNames(declarator.id, names);
        break;
      case 'FunctionDeclaration':
      case 'ClassDeclaration':
        if (declaration.id) names.add(declaration.id.name);
        break;
      case 'ImportDeclaration':
        for (const specifier of declaration.specifiers) names.add(specifier.local.name);
        break;
    }
  }
}

/** Collects `var` names under `root` without entering nested functions or static blocks. */
function addVars(root: Node, names: Set<string>): void {
  const stack = childrenOf(root).map(([, child]) => child);
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (FUNCTION_TYPES.has(node.type) || node.type === 'StaticBlock') continue;
    if (node.type === 'VariableDeclaration' && node.kind === 'var') {
      for (const declarator of node.declarations) addPatternNames(declarator.id, names);
    }
    for (const [, child] of childrenOf(node)) stack.push(child);
  }
}

function addPatternNames(pattern: Node, names: Set<string>): void {
  const stack: Node[] = [pattern];
  for (let node = stack.pop(); node; node = stack.pop()) {
    switch (node.type) {
      case 'Identifier':
        names.add(node.name);
        break;
      case 'ObjectPattern':
        for (const property of node.properties) stack.push(property.type === 'RestElement' ? property.argument : property.value);
        break;
      case 'ArrayPattern':
        for (const element of node.elements) if (element) stack.push(element);
        break;
      case 'AssignmentPattern':
        stack.push(node.left);
        break;
      case 'RestElement':
        stack.push(node.argument);
        break;
    }
  }
}
