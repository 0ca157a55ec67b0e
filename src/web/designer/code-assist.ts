// What the feature editor's completions know and how they read the code around the cursor: the
// authoring guide's components, runtime exports and the application's tables (from the builder
// GraphQL's featureAuthoringGuide), without CodeMirror, so that it can be tested on its own.

export interface GuideProp {
  name: string;
  type: string;
  description: string;
}

export interface GuideComponent {
  name: string;
  description: string;
  props: GuideProp[];
  element?: string | null;
}

export interface GuideRuntimeExport {
  name: string;
  signature: string;
  description: string;
}

export interface GuideTable {
  name: string;
  fields: { name: string; type: string; required: boolean }[];
  operations: { type: string; input: string; list: string; get: string; create: string; update: string; delete: string };
}

/** What the completions offer: one answer of the builder GraphQL's featureAuthoringGuide. */
export interface AuthoringAssist {
  components: GuideComponent[];
  runtime: GuideRuntimeExport[];
  tables: GuideTable[];
}

export const UI_MODULE = '@trellis/ui';
export const RUNTIME_MODULE = '@trellis/runtime';

/** Fields every record has besides the table's own. */
export const SYSTEM_FIELDS = ['_id', '_createdAt', '_updatedAt', '_createdBy', '_updatedBy'];

const IMPORT_FROM = (module: string) => new RegExp(`import\\s*\\{([^}]*)\\}\\s*from\\s*['"]${module.replace(/[/@]/g, '\\$&')}['"]`);

/**
 * The change that makes `code` import `name` from `module`: the name added to an existing
 * `import { ... } from 'module'`, or a new import line after the last import; null when it is
 * imported already.
 *
 * @example importChange("import { Card } from '@trellis/ui';\n", 'Text', '@trellis/ui') // { from: 8, to: 14, insert: ' Card, Text ' }
 */
export function importChange(code: string, name: string, module: string): { from: number; to: number; insert: string } | null {
  const existing = IMPORT_FROM(module).exec(code);
  if (existing) {
    const names = existing[1]!.split(',').map((entry) => entry.trim()).filter(Boolean);
    if (names.some((entry) => entry === name || entry.endsWith(` as ${name}`))) return null;
    const from = existing.index + existing[0].indexOf('{') + 1;
    return { from, to: from + existing[1]!.length, insert: ` ${[...names, name].join(', ')} ` };
  }
  const imports = [...code.matchAll(/^import[^;]*;[^\n]*\n?/gm)];
  const last = imports[imports.length - 1];
  const at = last ? last.index + last[0].length : 0;
  const line = `import { ${name} } from '${module}';\n`;
  return { from: at, to: at, insert: last && !last[0].endsWith('\n') ? `\n${line}` : line };
}

/** Where in a GraphQL document the cursor is: among the root fields, or among a table's fields. */
export type GraphQLPlace = { kind: 'root'; mutation: boolean } | { kind: 'page'; table: GuideTable } | { kind: 'fields'; table: GuideTable };

const NAME = /[_A-Za-z][_0-9A-Za-z]*/y;

/**
 * What to complete in a GraphQL document whose text before the cursor is `prefix`: the root fields
 * of a query or a mutation in the operation's selection, `items` and `total` in a list's page, the
 * table's fields further in; null elsewhere (arguments, the operation's name, unknown fields).
 *
 * @example graphqlPlace('query { listOrders { items { ', tables) // { kind: 'fields', table: <Orders> }
 */
export function graphqlPlace(prefix: string, tables: readonly GuideTable[]): GraphQLPlace | null {
  const stack: string[] = [];
  let lastName = '';
  let firstName: string | undefined;
  let parentheses = 0;
  for (let index = 0; index < prefix.length; index += 1) {
    const char = prefix[index]!;
    if (char === '(') parentheses += 1;
    else if (char === ')') parentheses = Math.max(0, parentheses - 1);
    else if (parentheses > 0) continue;
    else if (char === '{') stack.push(lastName);
    else if (char === '}') stack.pop();
    else if (char === '#') index = prefix.indexOf('\n', index) === -1 ? prefix.length : prefix.indexOf('\n', index);
    else {
      NAME.lastIndex = index;
      const match = NAME.exec(prefix);
      if (!match) continue;
      lastName = match[0];
      firstName ??= lastName;
      index += lastName.length - 1;
    }
  }
  if (parentheses > 0 || stack.length === 0) return null;
  if (stack.length === 1) return { kind: 'root', mutation: firstName === 'mutation' };
  const root = stack[1]!;
  const table = tables.find(({ operations }) => [operations.list, operations.get, operations.create, operations.update, operations.delete].includes(root));
  if (!table) return null;
  if (root === table.operations.list) {
    if (stack.length === 2) return { kind: 'page', table };
    return stack[2] === 'items' ? { kind: 'fields', table } : null;
  }
  return stack.length === 2 ? { kind: 'fields', table } : null;
}

/**
 * The component of the JSX tag the cursor is in, after its name and between attributes, and the
 * attribute name typed so far; null outside such a place.
 *
 * @example propPlace('<Input label="Title" on') // { component: 'Input', typed: 'on', given: ['label'] }
 */
export function propPlace(prefix: string): { component: string; typed: string; given: string[] } | null {
  const tail = prefix.slice(-2000);
  const match = /<([A-Z][\w$]*)((?:\s+[\w$-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}))?)*)\s+([\w$-]*)$/.exec(tail);
  if (!match) return null;
  const names = match[2]!.replace(/"[^"]*"|'[^']*'|\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}/g, ' ');
  const given = [...names.matchAll(/[\w$-]+/g)].map((entry) => entry[0]);
  return { component: match[1]!, typed: match[3]!, given };
}
