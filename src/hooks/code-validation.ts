import type { Expression, Node } from '@babel/types';
import {
  checkConstructorChain,
  checkGlobalAccess,
  codeValidation,
  findingAt,
  isBound,
  isMemberAccess,
  keyName,
  propertyName,
  sizeFinding,
  syntaxFinding,
  walk,
  type CodeValidation,
  type Finding,
  type GlobalRules,
  type Visit,
} from '../authoring/ast-walk.js';
import { babelParser } from '../authoring/babel-parser.js';
import { HOOK_CODE_MAX_BYTES } from './schema.js';

/** A capability hook code can use at run time. */
export type HookGlobal = {
  name: string;
  description: string;
};

/** Everything hook code can reach at run time; nothing else is granted. */
export const HOOK_GLOBALS: readonly HookGlobal[] = [
  { name: 'instance', description: "The function's parameter: the record being saved (save hooks) or the parsed request body (webhooks)" },
  { name: 'headers', description: 'The request headers of a webhook call, with lower-case names; empty for save hooks' },
  {
    name: 'request',
    description:
      'Webhooks: the request as received, { method, url, query, headers, rawBody, contentType }; rawBody is the body exactly as sent (what providers sign); null for save hooks',
  },
  {
    name: 'respond',
    description:
      'Webhooks: return respond(status, body, headers) to choose the answer: status 200-599, body a string (text/plain) or a JSON value, headers an object of strings',
  },
  { name: 'env', description: "The values of the application's environment variables by name, e.g. env.API_TOKEN" },
  {
    name: 'fetch',
    description: 'fetch(url, init) for outbound HTTP; loopback, private, link-local and metadata addresses are refused; size and time are capped',
  },
  {
    name: 'crypto',
    description:
      "crypto.hmac(algorithm, key, data, encoding) and crypto.hash(algorithm, data, encoding) with algorithm 'sha1', 'sha256' or 'sha512' and encoding 'hex' (default), 'base64' or 'base64url'; crypto.hmacSha256(key, data) -> hex, crypto.sha256(data) -> hex, crypto.timingSafeEqual(a, b) -> boolean (constant time)",
  },
  { name: 'console', description: "console.log / info / warn / error write to the hook's run log" },
  { name: 'db', description: "The application's tables, with the rights of the hook" },
];

/**
 * Whether hook code can reach the granted capability `name`: only through that identifier, since
 * the capabilities are parameters of the code and eval is disabled. Code with a `\u` escape
 * anywhere counts as naming every capability, since an identifier may spell the name with escapes
 * (`f\u0065tch`). A false positive (the word in a comment or a string) costs only speed.
 *
 * @example namesCapability('async () => db.find("Order")', 'db') // true
 */
export function namesCapability(code: string, name: string): boolean {
  let pattern = CAPABILITY_PATTERNS.get(name);
  if (!pattern) CAPABILITY_PATTERNS.set(name, (pattern = new RegExp(`\\b${name}\\b`)));
  return pattern.test(code) || code.includes('\\u');
}

const CAPABILITY_PATTERNS = new Map<string, RegExp>();

const SHAPE = 'Hook code must be a single async function, e.g. async function (instance) { ... }';
const CAPABILITIES = `use the granted capabilities (${HOOK_GLOBALS.map((global) => global.name).join(', ')})`;

const HOOK_GLOBAL_RULES: GlobalRules = {
  aliases: new Set(['globalThis', 'global', 'self', 'window']),
  names: new Map([
    ['require', `require is not available in hooks: ${CAPABILITIES}`],
    ['process', 'process is not available in hooks: read configuration from env, e.g. env.API_TOKEN'],
    ['eval', 'eval is not allowed in hooks: write the logic as plain functions'],
    ['Function', 'the Function constructor is not allowed in hooks: write the logic as plain functions'],
    ['constructor', `the global object's constructor is not allowed in hooks: ${CAPABILITIES}`],
  ]),
  members: new Map(),
};

/**
 * Checks server-side hook code without executing it. The code must be ONE async function
 * (expression, arrow or named function) taking at most one parameter, the instance:
 * `async function (instance) { ... }` or `async (instance) => { ... }`, with nothing before or
 * after it (comments aside), at most 200 KB of UTF-8, valid in strict mode (it runs in strict
 * mode). `require`, `process`, `eval`, `Function`,
 * `import()`, `__proto__` and reaching constructors through the global object are errors;
 * locally declared names shadow globals and are not reported.
 *
 * @example validateHookCode('async (instance) => { instance.total = 1; }') // { valid: true, errors: [], warnings: [] }
 */
export function validateHookCode(code: string, application?: HookApplication): CodeValidation {
  if (code.trim() === '') return codeValidation([emptyFinding()]);
  if (code.includes('\0')) return codeValidation([{ code: 'SYNTAX', message: 'Hook code must not contain NUL characters' }]);
  const tooLarge = sizeFinding(code, HOOK_CODE_MAX_BYTES, '200 KB');
  if (tooLarge) return codeValidation([tooLarge]);
  let root: Expression;
  try {
    root = babelParser().parseExpression(code, { sourceType: 'script', strictMode: true, attachComment: false });
  } catch (error) {
    return codeValidation([parseFailure(error, code)]);
  }
  const shapeError = checkShape(root);
  if (shapeError) return codeValidation([shapeError]);
  const errors: Finding[] = [];
  const warnings: Finding[] = [];
  walk(root, (visit) => {
    const error = checkGlobalAccess(visit, HOOK_GLOBAL_RULES) ?? checkConstructorChain(visit.node) ?? checkConstruct(visit.node);
    if (error) errors.push(error);
    const warning = application && checkApplicationName(visit, application);
    if (warning) warnings.push(warning);
  });
  return codeValidation(errors, warnings);
}

/** What hook code may name of the application: its tables and its environment variables. */
export interface HookApplication {
  tables: readonly { _id: string; name: string }[];
  envNames: readonly string[];
}

const DB_METHODS = new Set(['find', 'get', 'create', 'update', 'delete']);
const LISTED_NAMES = 12;

/** A warning for `db.<method>('Table', …)` naming no table, or `env.NAME` naming no variable. */
function checkApplicationName({ node, scope }: Visit, application: HookApplication): Finding | undefined {
  if (node.type === 'CallExpression' && isMemberAccess(node.callee) && isGlobal(node.callee.object, 'db', scope) && DB_METHODS.has(propertyName(node.callee) ?? '')) {
    const [table] = node.arguments;
    const name = table && literalString(table);
    if (name === undefined || tableExists(application, name)) return undefined;
    const tables = application.tables.map((entry) => entry.name);
    const existing = tables.length === 0 ? 'the application has no tables yet (create_table)' : `the tables are ${listed(tables)}`;
    return findingAt(table!, 'UNKNOWN_TABLE', `db.${propertyName(node.callee)}('${name}'): no table is named '${name}'; ${existing}`);
  }
  if (isMemberAccess(node) && isGlobal(node.object, 'env', scope)) {
    const name = propertyName(node);
    if (name === undefined || application.envNames.includes(name)) return undefined;
    const existing = application.envNames.length === 0 ? 'none is set yet' : `the set ones are ${listed([...application.envNames])}`;
    return findingAt(node, 'UNKNOWN_ENV', `env.${name} is not set, so it is undefined at run time: set it with set_environment_variable (${existing})`);
  }
  return undefined;
}

function isGlobal(node: Node, name: string, scope: Visit['scope']): boolean {
  return node.type === 'Identifier' && node.name === name && !isBound(scope, name);
}

function literalString(node: Node): string | undefined {
  if (node.type === 'StringLiteral') return node.value;
  if (node.type === 'TemplateLiteral' && node.expressions.length === 0) return node.quasis[0]?.value.cooked ?? undefined;
  return undefined;
}

function tableExists({ tables }: HookApplication, name: string): boolean {
  const lower = name.toLowerCase();
  return tables.some((table) => table._id === name || table.name.toLowerCase() === lower || table._id.toLowerCase() === lower);
}

function listed(names: string[]): string {
  return names.length <= LISTED_NAMES ? names.join(', ') : `${names.slice(0, LISTED_NAMES).join(', ')}, … (${names.length - LISTED_NAMES} more)`;
}

function emptyFinding(): Finding {
  return { code: 'EMPTY', message: `Hook code must not be empty. ${SHAPE}` };
}

function parseFailure(error: unknown, code: string): Finding {
  const reason = (error as { reasonCode?: unknown }).reasonCode;
  if (reason === 'ParseExpressionEmptyInput') return emptyFinding();
  const finding = syntaxFinding(error);
  if (reason === 'ParseExpressionExpectsEOF') return { ...finding, code: 'HOOK_SHAPE', message: `${SHAPE}, with nothing after it` };
  if (isFunctionBody(code)) return { ...finding, code: 'HOOK_SHAPE', message: `${SHAPE}: wrap these statements in it` };
  return finding;
}

/** Statements that would be valid inside the function: a common mistake worth its own message. */
function isFunctionBody(code: string): boolean {
  try {
    babelParser().parse(code, { sourceType: 'script', strictMode: true, allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true, attachComment: false });
    return true;
  } catch {
    return false;
  }
}

function checkShape(root: Expression): Finding | undefined {
  if (root.type !== 'FunctionExpression' && root.type !== 'ArrowFunctionExpression') return findingAt(root, 'HOOK_SHAPE', SHAPE);
  if (!root.async) return findingAt(root, 'HOOK_SHAPE', `${SHAPE}: add async`);
  if (root.generator) return findingAt(root, 'HOOK_SHAPE', `${SHAPE}, not a generator`);
  if (root.params.length > 1) return findingAt(root.params[1]!, 'HOOK_SHAPE', `${SHAPE}: it takes at most one parameter, the instance`);
  return undefined;
}

function checkConstruct(node: Node): Finding | undefined {
  if (node.type === 'Import' || node.type === 'ImportExpression') {
    return findingAt(node, 'DYNAMIC_IMPORT', `import() is not available in hooks: ${CAPABILITIES}`);
  }
  const protoKey = node.type === 'ObjectProperty' && !node.computed && keyName(node.key) === '__proto__';
  if (protoKey || (isMemberAccess(node) && propertyName(node) === '__proto__')) {
    return findingAt(node, 'FORBIDDEN_PROTO', '__proto__ is not allowed in hooks: build plain objects instead of changing prototypes');
  }
  return undefined;
}
