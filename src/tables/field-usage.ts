import type { Node } from '@babel/types';
import { babelParser } from '../authoring/babel-parser.js';
import { keyName, propertyName, walk } from '../authoring/ast-walk.js';
import type { Db } from '../platform/db/index.js';
import type { CodeUse, FeatureSchema } from '../features/graphql-documents.js';
import { featureCodeTableUses } from '../features/jsx-validation.js';
import { fieldInRules } from './table-access.js';

/** What uses a table or a field: a feature's or a hook's code, or a role's data-access rule. */
export interface FieldUse {
  kind: 'FEATURE' | 'HOOK' | 'ACCESS_RULE';
  /** The feature's, hook's or role's `_id`. */
  _id: string;
  name: string;
  /** How it uses it: 'selects amount', "db.update('Orders', …) names amount", 'hidden from clerk'. */
  detail: string;
  /** The line in the code, for features and hooks. */
  line?: number;
}

/** The table (and, optionally, its field) whose uses are looked for. */
export interface UsageSubject {
  tableId: string;
  tableName: string;
  field?: string;
}

const DB_METHODS = new Set(['find', 'get', 'create', 'update', 'delete']);
const SAVE_HOOK_TYPES = new Set(['beforeSave', 'afterSave']);

/**
 * Features, hooks and (for a field) roles' rules that use a table or one of its fields: a
 * best-effort static reading of the code. Features: their GraphQL documents (current and published
 * code; see `featureTableUses`). Hooks: `db` calls naming the table, with (for a field) keys or
 * strings naming the field in their arguments, and `instance.<field>` in save hooks of the table.
 * Code that builds names at run time is not seen.
 */
export async function findTableUses(db: Db, featureSchema: FeatureSchema, subject: UsageSubject): Promise<FieldUse[]> {
  const [features, hooks, rules] = await Promise.all([featureUses(db, featureSchema, subject), hookUses(db, subject), ruleUses(db, subject)]);
  return [...features, ...hooks, ...rules];
}

async function featureUses(db: Db, featureSchema: FeatureSchema, { tableId, field }: UsageSubject): Promise<FieldUse[]> {
  const features = await db
    .selectFrom('features as f')
    .leftJoin('feature_versions as v', (join) => join.onRef('v.feature_id', '=', 'f.id').onRef('v.version', '=', 'f.published_version'))
    .select(['f.id', 'f.name', 'f.custom_code', 'f.version', 'f.published_version', 'v.custom_code as published_code'])
    .orderBy('f.name')
    .execute();
  return features.flatMap((feature) => {
    const current = featureCodeTableUses(feature.custom_code, featureSchema, tableId, field);
    const published =
      feature.published_code !== null && feature.published_version !== feature.version && feature.published_code !== feature.custom_code
        ? featureCodeTableUses(feature.published_code, featureSchema, tableId, field).map((use) => ({ ...use, detail: `${use.detail} (published version)` }))
        : [];
    return [...current, ...published].map((use) => ({ kind: 'FEATURE' as const, _id: feature.id, name: feature.name, detail: use.detail, ...(use.line ? { line: use.line } : {}) }));
  });
}

async function hookUses(db: Db, subject: UsageSubject): Promise<FieldUse[]> {
  const hooks = await db.selectFrom('hooks').select(['id', 'name', 'type', 'table_id', 'content']).orderBy('name').execute();
  return hooks.flatMap((hook) => {
    const savesTable = hook.table_id === subject.tableId && SAVE_HOOK_TYPES.has(hook.type);
    return hookCodeTableUses(hook.content, { id: subject.tableId, name: subject.tableName }, subject.field, savesTable ? hook.type : undefined).map((use) => ({
      kind: 'HOOK' as const,
      _id: hook.id,
      name: hook.name,
      detail: use.detail,
      ...(use.line ? { line: use.line } : {}),
    }));
  });
}

async function ruleUses(db: Db, { tableId, field }: UsageSubject): Promise<FieldUse[]> {
  if (field === undefined) return [];
  return (await fieldInRules(db, tableId, field)).flatMap((rule) => [
    ...(rule.hidden ? [`hidden from ${rule.roleName}`] : []),
    ...(rule.readOnly ? [`read-only for ${rule.roleName}`] : []),
    ...rule.filters.map((action) => `the ${action} filter of ${rule.roleName}`),
  ].map((detail) => ({ kind: 'ACCESS_RULE' as const, _id: rule.roleId, name: rule.roleName, detail })));
}

/**
 * Where hook code uses a table or one of its fields: `db.<method>('<Table>', …)` calls (the table
 * by name, any letter case, or `_id`) and, with `field`, keys or strings naming the field in their
 * arguments; in a save hook of the table (`saveHookType`), `instance.<field>` and destructuring of
 * the instance, or (without `field`) the hook itself.
 *
 * @example hookCodeTableUses("async (instance) => db.update('Orders', instance.orderId, { paid: true })", orders, 'paid') // [{ line: 1, detail: "db.update('Orders', …) names paid" }]
 */
export function hookCodeTableUses(code: string, table: { id: string; name: string }, field: string | undefined, saveHookType?: string): CodeUse[] {
  const root = parseHook(code);
  if (!root) return [];
  const uses: CodeUse[] = [];
  const add = (node: Node, detail: string) => {
    const start = node.loc?.start;
    uses.push({ ...(start ? { line: start.line, column: start.column + 1 } : {}), detail });
  };
  if (saveHookType && field === undefined) uses.push({ line: 1, column: 1, detail: `runs on every save of ${table.name} (${saveHookType})` });
  const hook = hookFunction(root);
  const instance = hook?.params[0]?.type === 'Identifier' ? hook.params[0].name : 'instance';
  walk(root, ({ node, parent }) => {
    if (node.type === 'CallExpression') {
      const method = dbMethodOn(node, table);
      if (!method) return;
      const call = `db.${method}('${table.name}', …)`;
      if (field === undefined) add(node, call);
      else if (node.arguments.slice(1).some((argument) => namesField(argument, field))) add(node, `${call} names ${field}`);
      return;
    }
    if (!saveHookType || field === undefined) return;
    if ((node.type === 'MemberExpression' || node.type === 'OptionalMemberExpression') && node.object.type === 'Identifier' && node.object.name === instance && propertyName(node) === field) {
      add(node, `${instance}.${field}`);
    }
    if (node.type === 'ObjectPattern' && destructuresInstance(node, parent, instance, hook) && node.properties.some((property) => property.type === 'ObjectProperty' && keyName(property.key) === field)) {
      add(node, `{ ${field} } = ${instance}`);
    }
  });
  return uses;
}

/** A hook is one function expression; older or unusual code is read as a script. */
function parseHook(code: string): Node | undefined {
  const options = { sourceType: 'script', attachComment: false, allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true } as const;
  try {
    return babelParser().parseExpression(code, options);
  } catch {
    try {
      return babelParser().parse(code, options).program;
    } catch {
      return undefined;
    }
  }
}

/** The hook's function, whose first parameter is the instance. */
function hookFunction(root: Node): (Node & { params: Node[] }) | undefined {
  const fn = root.type === 'Program' ? root.body.find((statement) => statement.type === 'FunctionDeclaration') : root;
  return fn && 'params' in fn ? (fn as Node & { params: Node[] }) : undefined;
}

function dbMethodOn(call: Node & { type: 'CallExpression' }, table: { id: string; name: string }): string | undefined {
  const { callee } = call;
  if ((callee.type !== 'MemberExpression' && callee.type !== 'OptionalMemberExpression') || callee.object.type !== 'Identifier' || callee.object.name !== 'db') return undefined;
  const method = propertyName(callee);
  if (!method || !DB_METHODS.has(method)) return undefined;
  const [first] = call.arguments;
  const named = first?.type === 'StringLiteral' ? first.value : first?.type === 'TemplateLiteral' && first.expressions.length === 0 ? first.quasis[0]?.value.cooked : undefined;
  return named !== undefined && (named.toLowerCase() === table.name.toLowerCase() || named === table.id) ? method : undefined;
}

/** A key (`{ amount: 1 }`) or a string (`{ field: 'amount' }`) naming the field, anywhere in `node`. */
function namesField(node: Node, field: string): boolean {
  let found = false;
  walk(node, ({ node: inner }) => {
    if (found) return;
    if (inner.type === 'ObjectProperty' && !inner.computed && keyName(inner.key) === field) found = true;
    if (inner.type === 'StringLiteral' && inner.value === field) found = true;
  });
  return found;
}

/** `const { amount } = instance`, or the hook's first parameter written `({ amount })`. */
function destructuresInstance(pattern: Node, parent: Node | undefined, instance: string, hook: { params: Node[] } | undefined): boolean {
  if (parent?.type === 'VariableDeclarator') return parent.init?.type === 'Identifier' && parent.init.name === instance;
  return parent !== undefined && parent === hook && hook.params[0] === pattern;
}
