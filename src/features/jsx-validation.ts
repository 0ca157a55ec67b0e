import type { ExportNamedDeclaration, ImportDeclaration, Node, Program, StringLiteral } from '@babel/types';
import {
  checkConstructorChain,
  checkGlobalAccess,
  codeValidation,
  findingAt,
  globalName,
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
import { checkFeatureDocuments, featureDataNeeds, featureTableUses, uncheckedDocuments, type CodeUse, type DataNeed, type FeatureSchema } from './graphql-documents.js';
import { knownGlobals, undeclaredName } from './declared-names.js';
import { FEATURE_CODE_MAX_BYTES } from './schema.js';
import { UiPropsCheck } from './ui-props.js';
import { ALLOWED_FEATURE_MODULES } from './modules.js';

export type { CodeValidation, Finding } from '../authoring/ast-walk.js';

export { ALLOWED_FEATURE_MODULES, type AllowedModule } from './modules.js';

const MODULES = new Map(ALLOWED_FEATURE_MODULES.map((module) => [module.name, module]));
const MODULE_LIST = ALLOWED_FEATURE_MODULES.map((module) => module.name).join(', ');

const USE_DATA_API = "use graphql() or useQuery() / useMutation() from '@trellis/runtime' instead of";
const USE_FUNCTIONS = 'write the logic as plain functions';
const USE_STATE = "keep state in React state (useState) or in a table through useMutation() from '@trellis/runtime'";

const FEATURE_GLOBALS: GlobalRules = {
  aliases: new Set(['window', 'globalThis', 'self', 'parent', 'top', 'frames']),
  names: new Map([
    ['eval', `eval is not allowed: ${USE_FUNCTIONS}`],
    ['Function', `the Function constructor is not allowed: ${USE_FUNCTIONS}`],
    ['fetch', `${USE_DATA_API} fetch`],
    ['XMLHttpRequest', `${USE_DATA_API} XMLHttpRequest`],
    ['WebSocket', `${USE_DATA_API} WebSocket`],
    ['EventSource', `${USE_DATA_API} EventSource`],
    ['localStorage', `localStorage is not allowed: ${USE_STATE}`],
    ['sessionStorage', `sessionStorage is not allowed: ${USE_STATE}`],
    ['indexedDB', `indexedDB is not allowed: ${USE_STATE}`],
    ['importScripts', `importScripts is not allowed: import from the allowed modules (${MODULE_LIST})`],
    ['require', `require() is not allowed: use import from the allowed modules (${MODULE_LIST})`],
    ['open', "window.open is not allowed: use navigate() from '@trellis/runtime' or a link"],
  ]),
  members: new Map([
    ['document.cookie', "document.cookie is not allowed: use useCurrentUser() from '@trellis/runtime' for the signed-in user"],
    ['navigator.sendBeacon', `${USE_DATA_API} navigator.sendBeacon`],
  ]),
};

/**
 * Network interfaces code may name but the frame refuses: WebRTC, which no CSP directive governs,
 * the frame removes (every RTC* global; these are the ones that make connections), and the
 * frame's policy refuses WebTransport. A warning each, not an error: feature detection
 * (`typeof RTCPeerConnection`) is harmless.
 */
const REFUSED_NETWORK: GlobalRules = {
  aliases: FEATURE_GLOBALS.aliases,
  names: new Map(
    [
      'RTCPeerConnection',
      'webkitRTCPeerConnection',
      'mozRTCPeerConnection',
      'RTCDataChannel',
      'RTCIceCandidate',
      'RTCIceTransport',
      'RTCDtlsTransport',
      'RTCSctpTransport',
      'RTCRtpSender',
      'RTCRtpReceiver',
      'RTCRtpTransceiver',
      'RTCSessionDescription',
      'WebTransport',
    ].map((name) => [
      name,
      `${name} is refused in a feature's frame, which has no WebRTC and no network of its own: data leaves a feature only through '@trellis/runtime', with graphql(), useQuery() or useMutation()`,
    ]),
  ),
  members: new Map(),
};

/** Globals another check reports: forbidden and refused ones are not also undeclared. */
const KNOWN_GLOBALS = knownGlobals([...FEATURE_GLOBALS.aliases, ...FEATURE_GLOBALS.names.keys(), ...REFUSED_NETWORK.names.keys()]);

const THEME_HINT = 'use var(--color-primary) / the theme tokens from get_feature_authoring_guide instead of';
const HEX_COLOR = /(?<![\w#&])#(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3,4})(?![\w-])/g;
const COLOR_FUNCTION = /(?<![\w-])(?:rgba?|hsla?)\((?!\s*var\()[^)]{0,80}\)?/gi;
const TAILWIND_COLOR_CLASS = new RegExp(
  '(?<![\\w-])(?:bg|text|border(?:-[xytrblse])?|from|via|to|ring(?:-offset)?|fill|stroke|outline|decoration|divide|placeholder|accent|caret|shadow)-' +
    '(?:(?:slate|gray|zinc|neutral|stone|red|orange|amber|yellow|lime|green|emerald|teal|cyan|sky|blue|indigo|violet|purple|fuchsia|pink|rose)' +
    '-(?:50|[1-9]00|950)|black|white)(?:\\/\\d{1,3})?(?![\\w-])',
  'g',
);
const LINE_BREAK = /\r\n?|[\n\u2028\u2029]/g;

/**
 * Checks feature code (one ES module of JavaScript with JSX) without ever executing it: size
 * (at most 1 MB of UTF-8), syntax, imports from ALLOWED_FEATURE_MODULES only, one default export
 * that is a function component, and no forbidden globals or constructs (network and storage
 * APIs, eval and friends, dangerouslySetInnerHTML, <script>). Locally declared names shadow
 * globals and are not reported. Every name read (JSX components included) must be imported,
 * declared in scope or a global of the frame (`undeclaredName`), and the props of `@trellis/ui`
 * components must be ones they take (`UiPropsCheck`). Network interfaces the frame refuses although they are not
 * forbidden here (WebRTC, WebTransport), fixed colours and Tailwind colour classes are warnings only.
 * With `featureSchema`, the GraphQL documents the code passes to '@trellis/runtime' are checked
 * against the application's schema too (see `checkFeatureDocuments`).
 *
 * @example validateFeatureCode("export default () => <p>Hi</p>") // { valid: true, errors: [], warnings: [] }
 */
export function validateFeatureCode(code: string, featureSchema?: FeatureSchema): CodeValidation {
  const tooLarge = sizeFinding(code, FEATURE_CODE_MAX_BYTES, '1 MB');
  if (tooLarge) return codeValidation([tooLarge]);
  let program: Program;
  try {
    program = parseModule(code, false);
  } catch (error) {
    return codeValidation([syntaxFinding(error, isTypeScript(code) ? 'TypeScript syntax is not supported, write JavaScript with JSX: ' : '')]);
  }
  const errors = checkModuleShape(program);
  const warnings: Finding[] = [];
  const props = new UiPropsCheck(program);
  walk(program, (visit) => {
    const error = checkGlobalAccess(visit, FEATURE_GLOBALS) ?? checkConstructorChain(visit.node) ?? checkConstruct(visit) ?? undeclaredName(visit, KNOWN_GLOBALS, program);
    if (error) errors.push(error);
    const refused = refusedNetwork(visit);
    if (refused) warnings.push(refused);
    warnings.push(...colourWarnings(visit.node, code));
    props.visit(visit);
  });
  errors.push(...props.findings());
  if (featureSchema) errors.push(...checkFeatureDocuments(program, featureSchema));
  warnings.push(...uncheckedDocuments(program));
  return codeValidation(errors, warnings);
}

function parseModule(code: string, typescript: boolean): Program {
  return babelParser().parse(code, { sourceType: 'module', plugins: typescript ? ['jsx', 'typescript'] : ['jsx'], attachComment: false }).program;
}

function isTypeScript(code: string): boolean {
  try {
    parseModule(code, true);
    return true;
  } catch {
    return false;
  }
}

function checkModuleShape(program: Program): Finding[] {
  const findings: Finding[] = [];
  let defaultExport: Node | undefined;
  for (const statement of program.body) {
    if (statement.type === 'ImportDeclaration') findings.push(...checkImport(statement));
    if (statement.type === 'ExportAllDeclaration') findings.push(...checkSource(statement.source));
    if (statement.type === 'ExportNamedDeclaration') {
      if (statement.source) findings.push(...checkSource(statement.source));
      defaultExport ??= defaultSpecifier(statement);
    }
    if (statement.type === 'ExportDefaultDeclaration') defaultExport = statement.declaration;
  }
  const exportError = checkDefaultExport(defaultExport, program);
  return exportError ? [...findings, exportError] : findings;
}

function checkSource(source: StringLiteral): Finding[] {
  if (MODULES.has(source.value)) return [];
  return [findingAt(source, 'FORBIDDEN_IMPORT', `Module '${source.value}' is not available to features: import only from ${MODULE_LIST}`)];
}

function checkImport(declaration: ImportDeclaration): Finding[] {
  const exports = MODULES.get(declaration.source.value)?.exports;
  if (!exports) return checkSource(declaration.source);
  const module = declaration.source.value;
  return declaration.specifiers.flatMap((specifier) => {
    if (specifier.type === 'ImportNamespaceSpecifier') return [];
    if (specifier.type === 'ImportDefaultSpecifier') {
      return [findingAt(specifier, 'UNKNOWN_EXPORT', `'${module}' has no default export: use named imports, e.g. import { ${exports[0]} } from '${module}'`)];
    }
    const name = specifier.imported.type === 'Identifier' ? specifier.imported.name : specifier.imported.value;
    if (exports.includes(name)) return [];
    return [findingAt(specifier, 'UNKNOWN_EXPORT', `'${module}' has no export '${name}'; it exports ${exports.join(', ')}`)];
  });
}

/** `export { Page as default }` */
function defaultSpecifier(statement: ExportNamedDeclaration): Node | undefined {
  for (const specifier of statement.specifiers) {
    if (specifier.type !== 'ExportSpecifier') continue;
    const exported = specifier.exported.type === 'Identifier' ? specifier.exported.name : specifier.exported.value;
    if (exported === 'default') return statement.source ? specifier : specifier.local;
  }
  return undefined;
}

function checkDefaultExport(declaration: Node | undefined, program: Program): Finding | undefined {
  if (!declaration) {
    return { code: 'DEFAULT_EXPORT', message: 'The feature must export its page component as default, e.g. export default function Page() { ... }' };
  }
  const component = declaration.type === 'Identifier' ? topLevelValue(program, declaration.name) : declaration;
  if (component && isComponentFunction(component)) return undefined;
  return findingAt(
    declaration,
    'DEFAULT_EXPORT',
    'The default export must be a function component: a function, an arrow function or the name of one declared in this file',
  );
}

function topLevelValue(program: Program, name: string): Node | undefined {
  for (const statement of program.body) {
    const declaration = statement.type === 'ExportNamedDeclaration' && statement.declaration ? statement.declaration : statement;
    if (declaration.type === 'FunctionDeclaration' && declaration.id?.name === name) return declaration;
    if (declaration.type !== 'VariableDeclaration') continue;
    for (const declarator of declaration.declarations) {
      if (declarator.id.type === 'Identifier' && declarator.id.name === name) return declarator.init ?? undefined;
    }
  }
  return undefined;
}

function isComponentFunction(node: Node): boolean {
  if (node.type !== 'FunctionDeclaration' && node.type !== 'FunctionExpression' && node.type !== 'ArrowFunctionExpression') return false;
  return !node.async && !node.generator;
}

function checkConstruct({ node, scope }: Visit): Finding | undefined {
  switch (node.type) {
    case 'Import':
    case 'ImportExpression':
      return findingAt(node, 'DYNAMIC_IMPORT', `Dynamic import() is not allowed: use a static import from ${MODULE_LIST}`);
    case 'CallExpression':
    case 'NewExpression':
      return checkCall(node, scope);
    case 'JSXAttribute':
      return node.name.name === 'dangerouslySetInnerHTML' ? dangerousHtml(node) : undefined;
    case 'ObjectProperty':
      return !node.computed && keyName(node.key) === 'dangerouslySetInnerHTML' ? dangerousHtml(node) : undefined;
    case 'JSXOpeningElement':
      return node.name.type === 'JSXIdentifier' && node.name.name.toLowerCase() === 'script' ? scriptElement(node) : undefined;
    default:
      return undefined;
  }
}

function checkCall(node: Node & { callee: Node; arguments: Node[] }, scope: Visit['scope']): Finding | undefined {
  const [first] = node.arguments;
  if (!first) return undefined;
  const callee = globalName(node.callee, scope, FEATURE_GLOBALS.aliases);
  if ((callee === 'setTimeout' || callee === 'setInterval') && (first.type === 'StringLiteral' || first.type === 'TemplateLiteral')) {
    return findingAt(first, 'STRING_TIMER', `${callee} with a string runs it as code: pass a function, e.g. ${callee}(() => refresh(), 1000)`);
  }
  if (propertyName(node.callee) === 'createElement' && first.type === 'StringLiteral' && first.value.toLowerCase() === 'script') {
    return scriptElement(node);
  }
  return undefined;
}

function refusedNetwork(visit: Visit): Finding | undefined {
  const finding = checkGlobalAccess(visit, REFUSED_NETWORK);
  // A computed property of the global object is an error the check with FEATURE_GLOBALS reports already.
  return finding?.code === 'FORBIDDEN_GLOBAL' ? { ...finding, code: 'NETWORK_REFUSED' } : undefined;
}

function dangerousHtml(node: Node): Finding {
  return findingAt(node, 'DANGEROUS_HTML', 'dangerouslySetInnerHTML is not allowed: render the content as JSX text or elements, which React escapes');
}

function scriptElement(node: Node): Finding {
  return findingAt(node, 'SCRIPT_ELEMENT', `<script> elements are not allowed: import code from ${MODULE_LIST}`);
}

function colourWarnings(node: Node, code: string): Finding[] {
  if (node.type !== 'StringLiteral' && node.type !== 'TemplateElement') return [];
  if (node.start == null || node.end == null || !node.loc) return [];
  const raw = code.slice(node.start, node.end);
  const start = node.loc.start;
  let lineStarts: number[] | undefined;
  const warnings: Finding[] = [];
  const collect = (pattern: RegExp, findingCode: string, describe: string) => {
    for (const match of raw.matchAll(pattern)) {
      lineStarts ??= [...raw.matchAll(LINE_BREAK)].map((lineBreak) => lineBreak.index + lineBreak[0].length);
      const position = positionIn(lineStarts, match.index, start);
      warnings.push({ code: findingCode, message: `${describe} ${match[0]}: ${THEME_HINT} ${match[0]}`, ...position });
    }
  };
  collect(HEX_COLOR, 'FIXED_COLOR', 'Fixed colour');
  collect(COLOR_FUNCTION, 'FIXED_COLOR', 'Fixed colour');
  collect(TAILWIND_COLOR_CLASS, 'TAILWIND_COLOR_CLASS', 'Tailwind colour class');
  return warnings;
}

/** The 1-based line and column of `offset` in a literal that starts at `start` and has lines starting at `lineStarts`. */
function positionIn(lineStarts: readonly number[], offset: number, start: { line: number; column: number }) {
  let low = 0;
  let high = lineStarts.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (lineStarts[middle]! <= offset) low = middle + 1;
    else high = middle;
  }
  if (low === 0) return { line: start.line, column: start.column + offset + 1 };
  return { line: start.line + low, column: offset - lineStarts[low - 1]! + 1 };
}

/** The tables and actions the code's GraphQL documents need (see `featureDataNeeds`); none when it does not parse. */
export function featureCodeNeeds(code: string, featureSchema: FeatureSchema): DataNeed[] {
  try {
    return featureDataNeeds(parseModule(code, false), featureSchema);
  } catch {
    return [];
  }
}

/** Where the code's GraphQL documents use a table or one of its fields (see `featureTableUses`); none when it does not parse. */
export function featureCodeTableUses(code: string, featureSchema: FeatureSchema, tableId: string, field?: string): CodeUse[] {
  try {
    return featureTableUses(parseModule(code, false), featureSchema, tableId, field);
  } catch {
    return [];
  }
}
