// The code editor (CodeMirror 6), in its own chunk: loaded only by the sections that edit code.
// Shows the validator's errors and warnings inline, checked as the person types (debounced), and,
// given the authoring guide, completes @trellis/ui components and their props, @trellis/runtime
// exports (adding the import) and the application's GraphQL fields inside query strings.
import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete';
import { javascript, javascriptLanguage } from '@codemirror/lang-javascript';
import { HighlightStyle, syntaxHighlighting, syntaxTree } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { basicSetup } from 'codemirror';
import { useEffect, useRef } from 'react';

import { graphqlPlace, importChange, propPlace, RUNTIME_MODULE, SYSTEM_FIELDS, UI_MODULE, type AuthoringAssist } from './code-assist.js';
import type { Finding } from './components.js';

export interface CodeEditorProps {
  value: string;
  onChange: (value: string) => void;
  /** JSX for features, plain JavaScript for hooks. */
  jsx: boolean;
  /** The accessible name of the editing area. */
  label: string;
  /** Checks the code; its findings become inline diagnostics. */
  validate?: (code: string) => Promise<{ errors: Finding[]; warnings: Finding[] }>;
  /** What the completions offer (feature code); none without it. */
  assist?: AuthoringAssist | undefined;
  /** Called once the editor is on the page (its code arrives on demand: saving waits for it). */
  onReady?: () => void;
}

const DEBOUNCE_MS = 400;
/** Reported texts kept while React catches up with typing. */
const ECHOES_KEPT = 50;

/** Token colours with at least 7:1 contrast on white and on the active line's blue (CodeMirror's default has lighter ones). */
const READABLE_HIGHLIGHT = HighlightStyle.define([
  { tag: [tags.keyword, tags.controlKeyword, tags.moduleKeyword, tags.operatorKeyword, tags.definitionKeyword], color: '#5b21b6' },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: '#14532d' },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: '#374151', fontStyle: 'italic' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: '#7c2d12' },
  { tag: [tags.typeName, tags.className, tags.namespace], color: '#0c4a6e' },
  { tag: [tags.tagName, tags.angleBracket], color: '#1e40af' },
  { tag: [tags.attributeName, tags.propertyName], color: '#134e4a' },
  { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], color: '#1e3a8a' },
  { tag: tags.invalid, color: '#991b1b' },
]);

function toDiagnostics(view: EditorView, findings: Finding[], severity: 'error' | 'warning'): Diagnostic[] {
  const doc = view.state.doc;
  return findings.map((finding) => {
    const line = doc.line(Math.min(Math.max(finding.line ?? 1, 1), doc.lines));
    const from = Math.min(line.from + Math.max((finding.column ?? 1) - 1, 0), line.to);
    const to = from < line.to ? line.to : from;
    return { from, to, severity, message: `${finding.message} (${finding.code})` };
  });
}

/** Strings and templates, where the GraphQL documents are. */
const STRING_NODES = new Set(['String', 'TemplateString']);
const SKIPPED_NODES = new Set(['LineComment', 'BlockComment', 'JSXText']);

/** A completion whose choice also imports its name from `module` when the code does not yet. */
function importing(name: string, module: string, completion: Omit<Completion, 'label' | 'apply'>): Completion {
  return {
    label: name,
    ...completion,
    apply: (view, _completion, from, to) => {
      const addImport = importChange(view.state.doc.toString(), name, module);
      // Typed inside the import itself: the name alone.
      const separate = addImport && (addImport.to < from || addImport.from > to);
      const changes = view.state.changes([{ from, to, insert: name }, ...(separate ? [addImport] : [])]);
      view.dispatch({ changes, selection: { anchor: changes.mapPos(to, 1) }, userEvent: 'input.complete' });
    },
  };
}

/**
 * Completions for feature code from the authoring guide: in a GraphQL string the application's
 * operations and a table's fields; in a component's tag its props; after `<` the components; for a
 * name, the runtime's exports and the components (each adding its import).
 */
function featureCompletions(assist: () => AuthoringAssist | undefined) {
  return (context: CompletionContext): CompletionResult | null => {
    const guide = assist();
    if (!guide) return null;
    const node = syntaxTree(context.state).resolveInner(context.pos, -1);
    if (SKIPPED_NODES.has(node.name)) return null;
    const word = context.matchBefore(/[\w$]*/)!;
    let text: { from: number } | null = null;
    for (let at: typeof node | null = node; at; at = at.parent) if (STRING_NODES.has(at.name)) text = at;
    if (text) return graphqlCompletions(guide, context.state.sliceDoc(text.from + 1, context.pos), word.from);
    const before = context.state.sliceDoc(Math.max(0, context.pos - 2000), context.pos);
    const tag = /<([A-Z][\w$]*)?$/.exec(before);
    if (tag) return { from: context.pos - (tag[1]?.length ?? 0), options: guide.components.map(componentOption), validFor: /^[\w$]*$/ };
    const place = propPlace(before);
    if (place) {
      const component = guide.components.find((entry) => entry.name === place.component);
      if (!component) return null;
      const options = component.props.filter((prop) => !place.given.includes(prop.name)).map((prop) => ({ label: prop.name, type: 'property', detail: prop.type, info: prop.description }));
      return { from: context.pos - place.typed.length, options, validFor: /^[\w$-]*$/ };
    }
    if (word.from === word.to && !context.explicit) return null;
    return { from: word.from, options: [...guide.runtime.map(runtimeOption), ...guide.components.map(componentOption)], validFor: /^[\w$]*$/ };
  };
}

function componentOption(component: AuthoringAssist['components'][number]): Completion {
  return importing(component.name, UI_MODULE, { type: 'class', detail: UI_MODULE, info: `${component.description} Props: ${component.props.map((prop) => prop.name).join(', ')}.` });
}

function runtimeOption(entry: AuthoringAssist['runtime'][number]): Completion {
  return importing(entry.name, RUNTIME_MODULE, { type: 'function', detail: entry.signature, info: entry.description });
}

function graphqlCompletions(guide: AuthoringAssist, prefix: string, from: number): CompletionResult | null {
  const place = graphqlPlace(prefix, guide.tables);
  if (!place) return null;
  const validFor = /^\w*$/;
  if (place.kind === 'root') {
    const options = guide.tables.flatMap(({ name, operations: op }) =>
      place.mutation
        ? [
            { label: op.create, type: 'method', detail: `(data: ${op.input}!) -> ${op.type}`, info: `Creates a record of ${name}.` },
            { label: op.update, type: 'method', detail: `(Id: ID!, data: ${op.input}!) -> ${op.type}`, info: `Changes the given fields of a record of ${name}.` },
            { label: op.delete, type: 'method', detail: '(Id: ID!) -> Boolean', info: `Deletes a record of ${name}.` },
          ]
        : [
            { label: op.list, type: 'method', detail: '(filter, sort, limit, offset) -> { items { … } total }', info: `A page of the records of ${name}.` },
            { label: op.get, type: 'method', detail: `(Id: ID!) -> ${op.type}`, info: `One record of ${name}, or null.` },
          ],
    );
    return { from, options, validFor };
  }
  if (place.kind === 'page') {
    return { from, options: [{ label: 'items', type: 'property', detail: `[${place.table.operations.type}]`, info: 'The records of the page.' }, { label: 'total', type: 'property', detail: 'Int', info: 'How many records match, over all pages.' }], validFor };
  }
  const fields = place.table.fields.map((field) => ({ label: field.name, type: 'property', detail: `${field.type}${field.required ? ', required' : ''}`, info: `A field of ${place.table.name}.`, boost: 1 }));
  return { from, options: [...fields, ...SYSTEM_FIELDS.map((name) => ({ label: name, type: 'property', detail: 'every record' }))], validFor };
}

export default function CodeEditor({ value, onChange, jsx, label, validate, assist, onReady }: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const latest = useRef({ onChange, validate, assist, onReady });
  latest.current = { onChange, validate, assist, onReady };
  /**
   * Texts the editor reported that `value` has not caught up with: a `value` among them is the
   * editor's own echo, older than what was typed since, and must not replace it.
   */
  const reported = useRef<string[]>([]);

  useEffect(() => {
    const state = EditorState.create({
      doc: value,
      extensions: [
        basicSetup,
        javascript({ jsx }),
        javascriptLanguage.data.of({ autocomplete: featureCompletions(() => latest.current.assist) }),
        syntaxHighlighting(READABLE_HIGHLIGHT),
        EditorView.lineWrapping,
        lintGutter(),
        linter(
          async (editor) => {
            const check = latest.current.validate;
            if (!check) return [];
            try {
              const result = await check(editor.state.doc.toString());
              return [...toDiagnostics(editor, result.errors, 'error'), ...toDiagnostics(editor, result.warnings, 'warning')];
            } catch {
              return [];
            }
          },
          { delay: DEBOUNCE_MS },
        ),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          const text = update.state.doc.toString();
          reported.current = [...reported.current.slice(-ECHOES_KEPT + 1), text];
          latest.current.onChange(text);
        }),
        EditorView.contentAttributes.of({ 'aria-label': label }),
      ],
    });
    view.current = new EditorView({ state, parent: host.current! });
    latest.current.onReady?.();
    return () => view.current?.destroy();
    // The editor is created once per mount; later values arrive through the effect below.
  }, [jsx, label]);

  useEffect(() => {
    const editor = view.current;
    if (!editor) return;
    const echo = reported.current.indexOf(value);
    if (echo >= 0) {
      reported.current = reported.current.slice(echo + 1);
      return;
    }
    reported.current = [];
    // A change from outside the editor: an inserted example, a restored version, a saved answer.
    if (editor.state.doc.toString() !== value) editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
  }, [value]);

  return <div className="editor" ref={host} />;
}
