// The modules feature code may import: one list, used by the validator, the authoring guide (and
// through it the designer's guide panel and completions) and the application page's frame
// (src/web/frame), which offers exactly these. No imports here: the browser bundle includes this file.

/** A module feature code may import; `exports`, when given, is the complete list of its names. */
export type AllowedModule = {
  name: string;
  description: string;
  exports?: readonly string[];
};

/** A prop of a `@trellis/ui` component: its name, its type as an author writes it, what it does. */
export type ComponentProp = {
  name: string;
  type: string;
  description: string;
};

/** A `@trellis/ui` component (src/web/frame/ui.tsx) and the props it declares. */
export type UiComponent = {
  name: string;
  description: string;
  props: readonly ComponentProp[];
  /**
   * The HTML element whose attributes the component also passes on (className, style, id, aria-*,
   * data-*, event handlers such as onClick, which receive the browser's event); absent when the
   * component takes only its declared props.
   */
  element?: string;
};

/** An export of `@trellis/runtime` (src/web/frame/runtime.ts): how it is called and what it gives. */
export type RuntimeExport = {
  name: string;
  signature: string;
  description: string;
};

const CHILDREN: ComponentProp = { name: 'children', type: 'ReactNode', description: 'What the component contains.' };
const FIELD_PROPS: readonly ComponentProp[] = [
  { name: 'label', type: 'ReactNode', description: 'The visible label; the control is wrapped in it.' },
  { name: 'error', type: 'ReactNode', description: 'A message shown below the control, which is marked invalid.' },
  { name: 'hint', type: 'ReactNode', description: 'A muted line of help below the control.' },
  { name: 'name', type: 'string', description: "The field's name: a Form's onSubmit receives its value under it." },
];

/** The components of `@trellis/ui`, in the order the guide shows them. */
export const UI_COMPONENTS: readonly UiComponent[] = [
  {
    name: 'Button',
    description: 'A button in the theme: primary, secondary or danger.',
    element: 'button',
    props: [
      { name: 'variant', type: "'primary' | 'secondary' | 'danger'", description: "The style; 'primary' by default." },
      { name: 'type', type: "'button' | 'submit'", description: "'button' by default; 'submit' sends the Form it is in." },
      { name: 'onClick', type: '(event) => void', description: 'Called when the button is pressed.' },
      { name: 'disabled', type: 'boolean', description: 'Greys the button out and ignores presses.' },
      CHILDREN,
    ],
  },
  {
    name: 'Card',
    description: 'A bordered panel, with an optional title.',
    element: 'section',
    props: [{ name: 'title', type: 'ReactNode', description: 'A heading at the top of the card.' }, CHILDREN],
  },
  {
    name: 'Stack',
    description: 'Lays its children out in a column (or a row) with a gap between them.',
    element: 'div',
    props: [
      { name: 'gap', type: 'string | number', description: "The space between children; '.75rem' by default." },
      { name: 'direction', type: "'column' | 'row'", description: "'column' by default; a row wraps on narrow screens." },
      { name: 'align', type: 'string', description: "CSS align-items, e.g. 'center'." },
      { name: 'justify', type: 'string', description: "CSS justify-content, e.g. 'space-between'." },
      CHILDREN,
    ],
  },
  {
    name: 'Text',
    description: 'A paragraph (or span, div, small, strong) of text.',
    element: 'p',
    props: [
      { name: 'muted', type: 'boolean', description: 'Shows the text in the muted colour.' },
      { name: 'as', type: "'p' | 'span' | 'div' | 'small' | 'strong'", description: "The element; 'p' by default." },
      CHILDREN,
    ],
  },
  {
    name: 'Heading',
    description: 'A heading of level 1 to 4.',
    element: 'h2',
    props: [{ name: 'level', type: '1 | 2 | 3 | 4', description: 'The heading level; 2 by default.' }, CHILDREN],
  },
  {
    name: 'Badge',
    description: 'A small label, such as a status.',
    element: 'span',
    props: [{ name: 'tone', type: "'neutral' | 'success' | 'danger'", description: "The colour; 'neutral' by default." }, CHILDREN],
  },
  {
    name: 'Input',
    description: 'A text input, with a label, an error and a hint.',
    element: 'input',
    props: [
      ...FIELD_PROPS,
      { name: 'value', type: 'string', description: 'The text shown; with it, also give onChange.' },
      { name: 'onChange', type: '(event) => void', description: 'Receives the browser event, not the text: onChange={(event) => setTitle(event.target.value)}.' },
      { name: 'type', type: 'string', description: "'text' by default; 'number', 'date', 'email', ... as in HTML." },
      { name: 'placeholder', type: 'string', description: 'Shown while the input is empty.' },
      { name: 'required', type: 'boolean', description: 'Marks the input as required.' },
      { name: 'defaultValue', type: 'string', description: 'The first text of an input whose value React does not hold (in a Form).' },
    ],
  },
  {
    name: 'Select',
    description: 'A drop-down list, with a label, an error and a hint.',
    element: 'select',
    props: [
      ...FIELD_PROPS,
      { name: 'options', type: '(string | { value, label })[]', description: 'The choices.' },
      { name: 'value', type: 'string', description: 'The chosen value; with it, also give onChange.' },
      { name: 'onChange', type: '(event) => void', description: 'Receives the browser event, not the value: onChange={(event) => setStatus(event.target.value)}.' },
      { name: 'defaultValue', type: 'string', description: 'The first choice of a select whose value React does not hold (in a Form).' },
    ],
  },
  {
    name: 'Table',
    description: "A table of rows; each column shows row[key] or what its render(row) returns.",
    props: [
      { name: 'rows', type: 'object[]', description: "The rows, e.g. data.listOrders.items." },
      { name: 'columns', type: '{ key, header, render? }[]', description: 'The columns: key is the field shown, header its title, render(row, index) an optional cell.' },
      { name: 'rowKey', type: 'string', description: "The field that identifies a row; '_id' by default." },
      { name: 'emptyText', type: 'ReactNode', description: "Shown when there is no row; 'Nothing to show yet.' by default." },
      { name: 'caption', type: 'ReactNode', description: 'A caption above the table.' },
      { name: 'onRowClick', type: '(row) => void', description: 'Called with the row a person clicks.' },
    ],
  },
  {
    name: 'Modal',
    description: 'A dialog over the page; Escape and the close button call onClose.',
    props: [
      { name: 'open', type: 'boolean', description: 'Shows the dialog; true by default.' },
      { name: 'title', type: 'ReactNode', description: "The dialog's title." },
      { name: 'onClose', type: '() => void', description: 'Called on Escape, on the close button and on a click beside the dialog.' },
      CHILDREN,
    ],
  },
  {
    name: 'Form',
    description: 'A form that never reloads the page; onSubmit receives the values of its named fields.',
    element: 'form',
    props: [
      { name: 'onSubmit', type: '(values, event) => void', description: "Receives { name: value } of its named fields, every value a string: onSubmit={(values) => save(values)}." },
      CHILDREN,
    ],
  },
];

/** The exports of `@trellis/runtime`. */
export const RUNTIME_EXPORTS: readonly RuntimeExport[] = [
  {
    name: 'useQuery',
    signature: 'useQuery(query, variables?) -> { data, loading, error, refetch }',
    description: 'Runs a query when the component mounts and again when the query or its variables change; refetch() runs it again.',
  },
  {
    name: 'useMutation',
    signature: 'useMutation(mutation) -> [mutate, { data, loading, error }]',
    description: "mutate(variables) runs the mutation; it resolves to data and rejects with the server's message (a beforeSave hook's included).",
  },
  { name: 'graphql', signature: 'graphql(query, variables?) -> Promise<data>', description: 'Runs a query or a mutation once, outside a hook.' },
  {
    name: 'navigate',
    signature: 'navigate(featureId, params?) -> void',
    description: "Opens another page of the application, with parameters it reads with useParams(): navigate('order-detail', { order: order._id }).",
  },
  {
    name: 'useParams',
    signature: 'useParams() -> { [name]: string }',
    description: "The parameters the page was opened with (/app/feature/order-detail?order=123 gives { order: '123' }); {} without any.",
  },
  {
    name: 'useCurrentUser',
    signature: 'useCurrentUser() -> { _id, email, name, roleName, tableAccess, can } | null',
    description: "The signed-in user (null until the page sends it); can(table, action) says whether the role may 'read', 'create', 'update' or 'delete' a table's records.",
  },
];

/** The only modules feature code may import (exact names, no subpaths). */
export const ALLOWED_FEATURE_MODULES: readonly AllowedModule[] = [
  { name: 'react', description: 'React hooks and helpers: useState, useEffect, useMemo, useCallback, useRef, useReducer, Fragment' },
  {
    name: '@trellis/runtime',
    description: "The application runtime: read and write data through the app's GraphQL API, open other pages with parameters, get the signed-in user",
    exports: RUNTIME_EXPORTS.map((entry) => entry.name),
  },
  {
    name: '@trellis/ui',
    description: 'Components styled with the application theme',
    exports: UI_COMPONENTS.map((component) => component.name),
  },
  { name: 'date-fns', description: 'Date formatting and arithmetic: format, parseISO, addDays, differenceInDays, ...' },
  { name: 'lodash-es', description: 'Collection and object helpers: groupBy, sortBy, debounce, ...' },
];
