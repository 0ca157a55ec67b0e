import { describe, expect, it } from 'vitest';
import { colorCssVariable, featureAuthoringGuide, tableExample, type ExampleField } from './authoring-guide.js';
import { ALLOWED_FEATURE_MODULES, validateFeatureCode } from './jsx-validation.js';
import { RUNTIME_EXPORTS, UI_COMPONENTS } from './modules.js';

const THEME = {
  colors: { primary: '#2563eb', primaryForeground: '#ffffff', danger: '#dc2626' },
  shell: { '--shell-bg': 'var(--color-background)', '--shell-radius': '0.5rem' },
};

describe('featureAuthoringGuide', () => {
  it('has an example that validates with no errors and no warnings', () => {
    expect(validateFeatureCode(featureAuthoringGuide(THEME).example)).toEqual({ valid: true, errors: [], warnings: [] });
  });

  it('shows the example using @trellis/ui, useQuery and a theme variable', () => {
    const { example } = featureAuthoringGuide(THEME);
    expect(example).toContain("from '@trellis/ui'");
    expect(example).toContain('useQuery(');
    expect(example).toContain('var(--color-primary)');
  });

  it('returns the configured theme with a CSS variable per colour and each shell variable', () => {
    expect(featureAuthoringGuide(THEME).theme).toEqual({
      colors: THEME.colors,
      shell: THEME.shell,
      cssVariables: ['--color-primary', '--color-primary-foreground', '--color-danger', '--shell-bg', '--shell-radius'],
    });
  });

  it('lists every allowed module with its description and exports', () => {
    const { allowedModules } = featureAuthoringGuide(THEME);
    expect(allowedModules).toEqual(ALLOWED_FEATURE_MODULES);
    expect(allowedModules.find((module) => module.name === '@trellis/runtime')?.exports).toEqual([
      'useQuery',
      'useMutation',
      'graphql',
      'navigate',
      'useParams',
      'useCurrentUser',
    ]);
  });

  it('documents every @trellis/ui export as a component with its props, and every @trellis/runtime export with its signature', () => {
    const { allowedModules, components, runtime } = featureAuthoringGuide(THEME);
    expect(components.map((component) => component.name)).toEqual(allowedModules.find((module) => module.name === '@trellis/ui')?.exports);
    expect(runtime.map((entry) => entry.name)).toEqual(allowedModules.find((module) => module.name === '@trellis/runtime')?.exports);
    expect(components.find((component) => component.name === 'Input')?.props.find((prop) => prop.name === 'onChange')).toMatchObject({ type: '(event) => void' });
    expect(runtime.find((entry) => entry.name === 'useParams')?.signature).toBe('useParams() -> { [name]: string }');
  });

  it.each([
    ['the data API', "useQuery(), useMutation() or graphql() from '@trellis/runtime'"],
    ['the default export', 'export default function Page()'],
    ['blocked network APIs', 'fetch, XMLHttpRequest, WebSocket, EventSource, WebTransport, WebRTC (RTCPeerConnection) and navigator.sendBeacon are blocked'],
    ['the theme variables', 'var(--color-primary)'],
    ['the size limit', '1 MB'],
  ])('states the runtime rule about %s', (_what, text) => {
    expect(featureAuthoringGuide(THEME).runtimeRules.some((rule) => rule.includes(text))).toBe(true);
  });

  it('returns copies, so changing a guide changes neither the theme nor the next guide', () => {
    const guide = featureAuthoringGuide(THEME);
    guide.theme.colors.primary = 'red';
    guide.allowedModules[1]!.exports = [];
    guide.runtimeRules.length = 0;
    guide.components[0]!.props.length = 0;
    const next = featureAuthoringGuide(THEME);
    expect(THEME.colors.primary).toBe('#2563eb');
    expect(next.allowedModules[1]!.exports).toHaveLength(RUNTIME_EXPORTS.length);
    expect(next.runtimeRules.length).toBeGreaterThan(0);
    expect(next.components[0]!.props).toHaveLength(UI_COMPONENTS[0]!.props.length);
  });
});

describe('tableExample', () => {
  const orders = (fields: ExampleField[]) => tableExample({ name: 'Orders', fields, operations: { list: 'listOrders', create: 'createOrders', input: 'OrdersInput' } });
  const EVERY_TYPE: ExampleField[] = [
    { name: 'title', type: 'text', required: true },
    { name: 'amount', type: 'number', required: false },
    { name: 'paid', type: 'boolean', required: false },
    { name: 'dueDate', type: 'date', required: false },
    { name: 'shippedAt', type: 'datetime', required: false },
    { name: 'meta', type: 'json', required: false },
    { name: 'customer', type: 'reference', required: false },
    { name: 'tags', type: 'multi-reference', required: false },
  ];

  it('writes a page for the table that validates with no errors and no warnings', () => {
    expect(validateFeatureCode(orders(EVERY_TYPE))).toEqual({ valid: true, errors: [], warnings: [] });
  });

  it("lists the table's fields with its list operation and adds a record with its create operation and input type", () => {
    const code = orders(EVERY_TYPE.slice(0, 2));
    expect(code).toContain('const LIST = `query listOrders { listOrders(limit: 100) { items { _id title amount } total } }`;');
    expect(code).toContain('const CREATE = `mutation createOrders($data: OrdersInput!) { createOrders(data: $data) { _id } }`;');
    expect(code).toContain("await create({ data: { title: values.title, amount: values.amount === '' ? null : Number(values.amount) } });");
    expect(code).toContain('<Input label="Title" name="title" required />');
    expect(code).toContain('<Input label="Amount" name="amount" type="number" />');
    expect(code).toContain('export default function OrdersPage()');
  });

  it.each([
    ['a field name in words', { name: 'dueDate', type: 'date', required: false }, '<Input label="Due date" name="dueDate" type="date" />'],
    ['a label the table gives', { name: 'amount', type: 'number', required: true, label: 'Total (EUR)' }, '<Input label="Total (EUR)" name="amount" type="number" required />'],
    ['a label with quotes, as an expression', { name: 'size', type: 'text', required: false, label: 'Size "XL"' }, '<Input label={"Size \\"XL\\""} name="size" />'],
    ['a checkbox, never required', { name: 'paid', type: 'boolean', required: true }, '<Input label="Paid" name="paid" type="checkbox" />'],
  ])('labels the input of %s', (_what, field, input) => {
    const code = orders([field as ExampleField]);
    expect(code).toContain(input);
    expect(validateFeatureCode(code).errors).toEqual([]);
  });
});

describe('colorCssVariable', () => {
  it.each([
    ['primary', '--color-primary'],
    ['primaryForeground', '--color-primary-foreground'],
    ['mutedForeground', '--color-muted-foreground'],
    ['accent2', '--color-accent2'],
  ])('names the variable of %s %s', (name, variable) => {
    expect(colorCssVariable(name)).toBe(variable);
  });
});
