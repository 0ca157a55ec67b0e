import { z } from 'zod';
import type { ThemeSettings } from '../platform/db/types.js';
import { ALLOWED_FEATURE_MODULES } from './jsx-validation.js';
import { RUNTIME_EXPORTS, UI_COMPONENTS } from './modules.js';

// The guide as get_feature_authoring_guide answers it and the builder's GraphQL types it
// (src/graphql/builder/output-types.ts); modules.ts holds the lists (no imports: the browser bundles it).

/** A module feature code may import (modules.ts's AllowedModule). */
export const featureModuleOutput = z
  .object({ name: z.string(), description: z.string(), exports: z.array(z.string()).optional() })
  .describe('A module feature code may import; exports is the complete list of its names when given.');

export const componentPropOutput = z.object({
  name: z.string(),
  type: z.string().describe("As an author writes it, e.g. '(event) => void' or 'string | number'."),
  description: z.string(),
});

/** A component of '@trellis/ui' (modules.ts's UiComponent). */
export const componentOutput = z
  .object({
    name: z.string(),
    description: z.string(),
    props: z.array(componentPropOutput),
    element: z
      .string()
      .optional()
      .describe('The HTML element whose attributes (className, style, aria-*, event handlers) the component also passes on; absent when it takes only its props.'),
  })
  .describe('A component of @trellis/ui and the props it declares.');

/** An export of '@trellis/runtime' (modules.ts's RuntimeExport). */
export const runtimeExportOutput = z
  .object({
    name: z.string(),
    signature: z.string().describe("How it is called and what it gives, e.g. 'useQuery(query, variables?) -> { data, loading, error, refetch }'."),
    description: z.string(),
  })
  .describe('An export of @trellis/runtime.');

/** The application's theme as the guide gives it (GraphQL's JSON). */
export const guideThemeOutput = z
  .object({
    colors: z.record(z.string(), z.string()),
    shell: z.record(z.string(), z.string()),
    cssVariables: z.array(z.string()).describe('Every CSS custom property the application page defines: one per colour, then the shell variables'),
  })
  .describe("colors, shell and cssVariables of the application's theme.");

/** What an author (a person in the designer, or an AI agent) needs to write a feature that validates and fits the theme. */
export const featureAuthoringGuideOutput = z
  .object({
    allowedModules: z.array(featureModuleOutput),
    components: z.array(componentOutput),
    runtime: z.array(runtimeExportOutput),
    runtimeRules: z.array(z.string()),
    theme: guideThemeOutput,
    example: z.string().describe('A small feature on a table Tasks.'),
  })
  .describe('What a person or an agent needs to write a feature that validates and fits the theme.');

export type FeatureAuthoringGuide = z.infer<typeof featureAuthoringGuideOutput>;

const RUNTIME_RULES = [
  'A feature is one ES module of JavaScript with JSX (no TypeScript), at most 1 MB of UTF-8. It is validated on the server, never executed there.',
  'Export the page component as default: export default function Page() { ... }. It must be a plain (not async) function or arrow function.',
  'Import only from the allowed modules, by their exact names; dynamic import() and require() are not available.',
  "Read and write data only through the application's GraphQL API: useQuery(), useMutation() or graphql() from '@trellis/runtime'. fetch, XMLHttpRequest, WebSocket, EventSource, WebTransport, WebRTC (RTCPeerConnection) and navigator.sendBeacon are blocked.",
  "The runtime's shapes: useQuery(query, variables?) returns { data, loading, error, refetch }; useMutation(mutation) returns [mutate, { data, loading, error }] where mutate(variables) resolves to data and rejects with the server's message (a beforeSave hook's message included); graphql(query, variables?) resolves to data. Form's onSubmit(values, event) receives the named fields' values as strings; Table takes rows and columns [{ key, header, render? }]; Input and Select take a label.",
  "Get the signed-in user from useCurrentUser(). Open another page with navigate('<feature_id>', params), e.g. navigate('order-detail', { order: order._id }): the application page opens it at /app/feature/order-detail?order=<id> when the user's role sees it, and that page reads { order } with useParams() (values are strings). document.cookie, window.open and links that leave the page are blocked.",
  "useCurrentUser() returns { _id, email, name, roleName, tableAccess, can } (null until the page sends it); can(table, action) says whether the user's role may 'read', 'create', 'update' or 'delete' records of a table (by name, any letter case, or _id): user?.can('Orders', 'delete') ? <Button>Delete</Button> : null. It only shapes the page: the server enforces the role's rules (other records are not returned, hidden fields read as null).",
  'Keep state in React state or in tables; localStorage, sessionStorage and indexedDB are blocked.',
  'eval, Function, setTimeout/setInterval with a string, dangerouslySetInnerHTML and <script> elements are rejected, also when reached through window, globalThis or self.',
  "Style with the theme: use @trellis/ui components and CSS variables such as var(--color-primary). Fixed colours (#hex, rgb(), hsl()) and Tailwind colour classes (bg-blue-500) produce warnings.",
  'The GraphQL API of a feature is the operations generated from the tables (get_graphql_schema shows them): for a table Tasks, listTasks(filter, sort, limit, offset) { items { ... } total }, getTasks(Id), createTasks(data), updateTasks(Id, data) and deleteTasks(Id). Builder operations (features, hooks, keys, ...) are not reachable from a feature.',
  'Call validate_feature_code before saving: it also checks the GraphQL documents you pass to useQuery(), useMutation() and graphql() (as a string, a template without ${}, or a const holding one) against the application\'s current schema, so create the tables first. Errors block the save, warnings are advice.',
];

const EXAMPLE = `import { useState } from 'react';
import { useQuery } from '@trellis/runtime';
import { Badge, Card, Heading, Input, Stack, Table, Text } from '@trellis/ui';

const TASKS = \`query Tasks { listTasks(sort: [{ field: title }]) { items { _id title done } total } }\`;

export default function TaskList() {
  const [search, setSearch] = useState('');
  const { data, loading, error } = useQuery(TASKS);
  if (loading) return <Text>Loading…</Text>;
  if (error) return <Text style={{ color: 'var(--color-danger)' }}>{error.message}</Text>;
  const tasks = (data?.listTasks.items ?? []).filter((task) => task.title.toLowerCase().includes(search.toLowerCase()));
  return (
    <Card style={{ borderColor: 'var(--color-border)' }}>
      <Stack gap="1rem">
        <Heading style={{ color: 'var(--color-primary)' }}>Tasks</Heading>
        <Input placeholder="Search" value={search} onChange={(event) => setSearch(event.target.value)} />
        <Table
          rows={tasks}
          columns={[
            { key: 'title', header: 'Title' },
            { key: 'done', header: 'Status', render: (task) => <Badge>{task.done ? 'Done' : 'Open'}</Badge> },
          ]}
        />
      </Stack>
    </Card>
  );
}
`;

/**
 * The CSS custom property of a theme colour: camelCase names become kebab-case,
 * `primaryForeground` -> `--color-primary-foreground`.
 */
export function colorCssVariable(name: string): string {
  return `--color-${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

/**
 * The authoring guide returned by get_feature_authoring_guide: allowed modules with what they
 * export, the runtime rules the validator enforces, the application's theme with the CSS
 * variables that carry it, and an example feature that validates cleanly.
 */
export function featureAuthoringGuide(theme: ThemeSettings): FeatureAuthoringGuide {
  return {
    allowedModules: ALLOWED_FEATURE_MODULES.map(({ exports, ...module }) => (exports ? { ...module, exports: [...exports] } : module)),
    components: UI_COMPONENTS.map((component) => ({ ...component, props: component.props.map((prop) => ({ ...prop })) })),
    runtime: RUNTIME_EXPORTS.map((entry) => ({ ...entry })),
    runtimeRules: [...RUNTIME_RULES],
    theme: {
      colors: { ...theme.colors },
      shell: { ...theme.shell },
      cssVariables: [...Object.keys(theme.colors).map(colorCssVariable), ...Object.keys(theme.shell)],
    },
    example: EXAMPLE,
  };
}

/** A field of a table, as a table example uses it (`label` when the table gives one). */
export type ExampleField = { name: string; type: string; required: boolean; label?: string };

/** A table with the names of its generated operations, for tableExample. */
export type ExampleTable = {
  name: string;
  fields: readonly ExampleField[];
  operations: { list: string; create: string; input: string };
};

/** At most this many fields are columns of the example's table. */
const EXAMPLE_COLUMNS = 6;

/** How the example's form takes a field, and how a submitted value (always a string) becomes the field's value. */
const FORM_INPUTS: Record<string, { attributes: string; value: (name: string) => string }> = {
  text: { attributes: '', value: (name) => `values.${name}` },
  number: { attributes: ' type="number"', value: (name) => `values.${name} === '' ? null : Number(values.${name})` },
  boolean: { attributes: ' type="checkbox"', value: (name) => `values.${name} === 'on'` },
  date: { attributes: ' type="date"', value: (name) => `values.${name} || null` },
  datetime: { attributes: ' type="datetime-local"', value: (name) => `values.${name} ? new Date(values.${name}).toISOString() : null` },
  json: { attributes: ' placeholder="{}"', value: (name) => `values.${name} ? JSON.parse(values.${name}) : null` },
  reference: { attributes: ' placeholder="_id"', value: (name) => `values.${name} || null` },
  'multi-reference': { attributes: ' placeholder="_id, _id"', value: (name) => `values.${name}.split(',').map((id) => id.trim()).filter(Boolean)` },
};

/** 'dueDate' -> 'Due date', 'customer_name' -> 'Customer name'. */
function readable(name: string): string {
  const words = name.replace(/_/g, ' ').replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A JavaScript string literal. */
function quoted(text: string): string {
  return JSON.stringify(text);
}

/** A JSX attribute's value: "text", or {"..."} when the text holds what a JSX string cannot. */
function attribute(text: string): string {
  return /^[^"\\{}<>&]*$/.test(text) ? `"${text}"` : `{${quoted(text)}}`;
}

/**
 * A page that lists the records of `table` and adds one, written for its fields and the names of
 * its generated operations: what the designer's guide inserts with one click. It passes the
 * validator with no errors against a schema that has the table.
 *
 * @example tableExample({ name: 'Orders', fields: [{ name: 'title', type: 'text', required: true }], operations: { list: 'listOrders', create: 'createOrders', input: 'OrdersInput' } })
 */
export function tableExample(table: ExampleTable): string {
  const fields = table.fields.filter((field) => field.type in FORM_INPUTS);
  const label = (field: ExampleField) => field.label || readable(field.name);
  const selection = ['_id', ...fields.map((field) => field.name)].join(' ');
  const columns = fields
    .slice(0, EXAMPLE_COLUMNS)
    .map((field) => `            { key: ${quoted(field.name)}, header: ${quoted(label(field))} },`)
    .join('\n');
  const data = fields.map((field) => `${field.name}: ${FORM_INPUTS[field.type]!.value(field.name)}`).join(', ');
  const inputs = fields
    .map((field) => `            <Input label=${attribute(label(field))} name="${field.name}"${FORM_INPUTS[field.type]!.attributes}${field.required && field.type !== 'boolean' ? ' required' : ''} />`)
    .join('\n');
  const component = `${table.name.charAt(0).toUpperCase()}${table.name.slice(1)}Page`;
  const { list, create, input } = table.operations;
  return `import { useState } from 'react';
import { useMutation, useQuery } from '@trellis/runtime';
import { Button, Card, Form, Input, Stack, Table, Text } from '@trellis/ui';

const LIST = \`query ${list} { ${list}(limit: 100) { items { ${selection} } total } }\`;
const CREATE = \`mutation ${create}($data: ${input}!) { ${create}(data: $data) { _id } }\`;

export default function ${component}() {
  const { data, loading, error, refetch } = useQuery(LIST);
  const [create, creating] = useMutation(CREATE);
  const [message, setMessage] = useState('');

  async function add(values, event) {
    setMessage('');
    try {
      await create({ data: { ${data} } });
      event.target.reset();
      setMessage('Added');
      await refetch();
    } catch (failure) {
      setMessage(failure.message);
    }
  }

  if (loading && !data) return <Text>Loading…</Text>;
  if (error) return <Text role="alert">{error.message}</Text>;
  return (
    <Card title=${attribute(readable(table.name))}>
      <Stack>
        <Table
          rows={data.${list}.items}
          columns={[
${columns}
          ]}
        />
        <Text muted>{data.${list}.total} in all</Text>
        <Form onSubmit={add}>
          <Stack direction="row" align="end">
${inputs}
            <Button type="submit" disabled={creating.loading}>
              Add
            </Button>
          </Stack>
        </Form>
        {message ? <Text role="status">{message}</Text> : null}
      </Stack>
    </Card>
  );
}
`;
}
