import type { ThemeSettings } from '../platform/db/types.js';
import { ALLOWED_FEATURE_MODULES, type AllowedModule } from './jsx-validation.js';

/** What an author (often an AI agent) needs to write a feature that validates and fits the theme. */
export type FeatureAuthoringGuide = {
  allowedModules: AllowedModule[];
  runtimeRules: string[];
  theme: {
    colors: Record<string, string>;
    shell: Record<string, string>;
    /** Every CSS custom property the application page defines: one per colour, then the shell variables. */
    cssVariables: string[];
  };
  /** A small feature that passes validate_feature_code with no errors and no warnings. */
  example: string;
};

const RUNTIME_RULES = [
  'A feature is one ES module of JavaScript with JSX (no TypeScript), at most 1 MB of UTF-8. It is validated on the server, never executed there.',
  'Export the page component as default: export default function Page() { ... }. It must be a plain (not async) function or arrow function.',
  'Import only from the allowed modules, by their exact names; dynamic import() and require() are not available.',
  "Read and write data only through the application's GraphQL API: useQuery(), useMutation() or graphql() from '@trellis/runtime'. fetch, XMLHttpRequest, WebSocket, EventSource, WebTransport, WebRTC (RTCPeerConnection) and navigator.sendBeacon are blocked.",
  "The runtime's shapes: useQuery(query, variables?) returns { data, loading, error, refetch }; useMutation(mutation) returns [mutate, { data, loading, error }] where mutate(variables) resolves to data and rejects with the server's message (a beforeSave hook's message included); graphql(query, variables?) resolves to data. Form's onSubmit(values, event) receives the named fields' values as strings; Table takes rows and columns [{ key, header, render? }]; Input and Select take a label.",
  "Get the signed-in user from useCurrentUser() and move between pages with navigate('/feature/<feature_id>'); document.cookie and window.open are blocked.",
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
    allowedModules: ALLOWED_FEATURE_MODULES.map((module) => ({ ...module, ...(module.exports ? { exports: [...module.exports] } : {}) })),
    runtimeRules: [...RUNTIME_RULES],
    theme: {
      colors: { ...theme.colors },
      shell: { ...theme.shell },
      cssVariables: [...Object.keys(theme.colors).map(colorCssVariable), ...Object.keys(theme.shell)],
    },
    example: EXAMPLE,
  };
}
