import type { Expression, JSXAttribute, JSXOpeningElement, Node, Program } from '@babel/types';
import { bindingScope, findingAt, type Finding, type Scope, type Visit } from '../authoring/ast-walk.js';
import { UI_COMPONENTS, type UiComponent } from './modules.js';

const UI_MODULE = '@trellis/ui';
const COMPONENTS = new Map(UI_COMPONENTS.map((component) => [component.name, component]));

/** Attributes every HTML element takes (React's names), besides aria-*, data-* and on* handlers. */
const GLOBAL_ATTRIBUTES = [
  'ref', 'className', 'style', 'id', 'title', 'role', 'tabIndex', 'hidden', 'lang', 'dir', 'draggable', 'spellCheck', 'translate',
  'contentEditable', 'inputMode', 'autoFocus', 'accessKey', 'slot', 'inert', 'popover', 'enterKeyHint', 'autoCapitalize',
  'suppressContentEditableWarning', 'suppressHydrationWarning',
];

/** The element's own attributes, for the elements `@trellis/ui` components pass attributes on to. */
const ELEMENT_ATTRIBUTES: Record<string, readonly string[]> = {
  button: ['type', 'disabled', 'name', 'value', 'form', 'formAction', 'formMethod', 'formNoValidate', 'formTarget', 'popoverTarget', 'popoverTargetAction'],
  input: [
    'type', 'name', 'value', 'defaultValue', 'checked', 'defaultChecked', 'placeholder', 'disabled', 'required', 'readOnly',
    'min', 'max', 'step', 'minLength', 'maxLength', 'pattern', 'size', 'multiple', 'accept', 'autoComplete', 'list', 'form',
    'capture', 'src', 'alt', 'width', 'height', 'dirName',
  ],
  select: ['name', 'value', 'defaultValue', 'multiple', 'disabled', 'required', 'size', 'autoComplete', 'form'],
  form: ['action', 'method', 'noValidate', 'name', 'autoComplete', 'encType', 'target', 'acceptCharset', 'rel'],
};

/** Props React itself reads on any component. */
const REACT_PROPS = ['key'];

/**
 * Checks the props given to `@trellis/ui` components (imported by name or as a namespace, not
 * shadowed) against the props they declare (modules.ts's UI_COMPONENTS) and, for components that
 * pass attributes on to an HTML element, that element's attributes, aria-*, data-* and on*
 * handlers: an unknown prop is an error (the component ignores it, or the browser does). A state
 * setter handed straight to a prop that receives an event (`<Input onChange={setName}>`) is an
 * error too: it stores the event object, which the page then shows as [object Object].
 *
 * Use: `visit` every node of a walk, then read `findings()`.
 */
export class UiPropsCheck {
  private readonly imported = new Map<string, string>();
  private readonly namespaces = new Set<string>();
  private readonly reactNames = new Set<string>();
  private readonly useStateNames = new Set<string>();
  private readonly setters = new Map<Scope, Set<string>>();
  private readonly elements: { node: JSXOpeningElement; scope: Scope }[] = [];
  private programScope: Scope | undefined;

  constructor(program: Program) {
    for (const statement of program.body) {
      if (statement.type !== 'ImportDeclaration') continue;
      for (const specifier of statement.specifiers) {
        const imported = specifier.type === 'ImportSpecifier' ? (specifier.imported.type === 'Identifier' ? specifier.imported.name : specifier.imported.value) : undefined;
        if (statement.source.value === UI_MODULE) {
          if (specifier.type === 'ImportNamespaceSpecifier') this.namespaces.add(specifier.local.name);
          else if (imported) this.imported.set(specifier.local.name, imported);
        }
        if (statement.source.value === 'react') {
          if (imported === 'useState') this.useStateNames.add(specifier.local.name);
          if (specifier.type !== 'ImportSpecifier') this.reactNames.add(specifier.local.name);
        }
      }
    }
  }

  visit({ node, scope }: Visit): void {
    if (node.type === 'Program') this.programScope = scope;
    if (node.type === 'JSXOpeningElement') this.elements.push({ node, scope });
    if (node.type === 'VariableDeclarator' && node.id.type === 'ArrayPattern' && node.init && this.callsUseState(node.init, scope)) {
      const setter = node.id.elements[1];
      if (setter?.type !== 'Identifier') return;
      const declared = bindingScope(scope, setter.name);
      if (declared) this.setters.set(declared, (this.setters.get(declared) ?? new Set()).add(setter.name));
    }
  }

  findings(): Finding[] {
    return this.elements.flatMap(({ node, scope }) => {
      const component = this.componentOf(node, scope);
      if (!component) return [];
      return node.attributes.flatMap((attribute) => (attribute.type === 'JSXAttribute' ? this.checkAttribute(component, attribute, scope) : []));
    });
  }

  private checkAttribute(component: UiComponent, attribute: JSXAttribute, scope: Scope): Finding[] {
    if (attribute.name.type !== 'JSXIdentifier') return [];
    const prop = attribute.name.name;
    const declared = component.props.find((candidate) => candidate.name === prop);
    if (!declared && !takesAttribute(component, prop)) {
      return [findingAt(attribute, 'UNKNOWN_PROP', `<${component.name}> has no prop '${prop}': ${propList(component)}`)];
    }
    const receivesEvent = declared ? declared.type.startsWith('(event)') : /^on[A-Z]/.test(prop);
    const value = attribute.value?.type === 'JSXExpressionContainer' && attribute.value.expression.type !== 'JSXEmptyExpression' ? attribute.value.expression : undefined;
    const setter = receivesEvent && value ? this.setterGivenTheEvent(value, scope) : undefined;
    if (!setter) return [];
    const fix = prop === 'onChange' ? `onChange={(event) => ${setter}(event.target.value)}` : `${prop}={() => ${setter}(...)} with the value to store`;
    return [
      findingAt(
        attribute,
        'EVENT_TO_SETTER',
        `<${component.name} ${prop}={...}> calls its handler with the browser's event, not a value, so ${setter} would store the event object (the page shows [object Object]): write ${fix}`,
      ),
    ];
  }

  /** The setter `expression` hands the event to: `setName`, or `(event) => setName(event)`. */
  private setterGivenTheEvent(expression: Expression, scope: Scope): string | undefined {
    if (expression.type === 'Identifier') return this.isSetter(expression.name, scope) ? expression.name : undefined;
    if (expression.type !== 'ArrowFunctionExpression' && expression.type !== 'FunctionExpression') return undefined;
    const [event] = expression.params;
    if (event?.type !== 'Identifier') return undefined;
    const body = expression.body.type === 'BlockStatement' ? singleExpression(expression.body.body) : expression.body;
    if (body?.type !== 'CallExpression' || body.callee.type !== 'Identifier' || body.arguments.length !== 1) return undefined;
    const [argument] = body.arguments;
    if (argument?.type !== 'Identifier' || argument.name !== event.name) return undefined;
    return this.isSetter(body.callee.name, scope) ? body.callee.name : undefined;
  }

  private isSetter(name: string, scope: Scope): boolean {
    const declared = bindingScope(scope, name);
    return declared !== undefined && this.setters.get(declared)?.has(name) === true;
  }

  private callsUseState(init: Node, scope: Scope): boolean {
    if (init.type !== 'CallExpression') return false;
    const { callee } = init;
    if (callee.type === 'Identifier') return this.useStateNames.has(callee.name) && this.isImport(callee.name, scope);
    return (
      callee.type === 'MemberExpression' &&
      !callee.computed &&
      callee.object.type === 'Identifier' &&
      this.reactNames.has(callee.object.name) &&
      this.isImport(callee.object.name, scope) &&
      callee.property.type === 'Identifier' &&
      callee.property.name === 'useState'
    );
  }

  /** A name that resolves to the module scope, where imports live (not shadowed by a local). */
  private isImport(name: string, scope: Scope): boolean {
    return this.programScope !== undefined && bindingScope(scope, name) === this.programScope;
  }

  private componentOf(element: JSXOpeningElement, scope: Scope): UiComponent | undefined {
    const { name } = element;
    if (name.type === 'JSXIdentifier') {
      const imported = this.imported.get(name.name);
      return imported && this.isImport(name.name, scope) ? COMPONENTS.get(imported) : undefined;
    }
    if (name.type === 'JSXMemberExpression' && name.object.type === 'JSXIdentifier' && this.namespaces.has(name.object.name) && this.isImport(name.object.name, scope)) {
      return COMPONENTS.get(name.property.name);
    }
    return undefined;
  }
}

function takesAttribute(component: UiComponent, prop: string): boolean {
  if (REACT_PROPS.includes(prop)) return true;
  if (!component.element) return false;
  if (/^(aria|data)-/.test(prop) || /^on[A-Z]/.test(prop)) return true;
  return GLOBAL_ATTRIBUTES.includes(prop) || (ELEMENT_ATTRIBUTES[component.element]?.includes(prop) ?? false);
}

function propList(component: UiComponent): string {
  const props = component.props.map((prop) => prop.name).filter((name) => name !== 'children');
  const own = props.length ? `it takes ${props.join(', ')}` : 'it takes no props but children';
  return component.element ? `${own}, and the attributes of <${component.element}> (className, style, aria-*, on* handlers, ...)` : own;
}

function singleExpression(statements: readonly Node[]): Node | undefined {
  const [only] = statements;
  if (statements.length !== 1 || !only) return undefined;
  if (only.type === 'ExpressionStatement') return only.expression;
  return only.type === 'ReturnStatement' ? (only.argument ?? undefined) : undefined;
}
