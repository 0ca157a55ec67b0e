// The code editor (CodeMirror 6), in its own chunk: loaded only by the sections that edit code.
// Shows the validator's errors and warnings inline, checked as the person types (debounced).
import { javascript } from '@codemirror/lang-javascript';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { basicSetup } from 'codemirror';
import { useEffect, useRef } from 'react';

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
}

const DEBOUNCE_MS = 400;

/** Token colours with at least 4.5:1 contrast on white (CodeMirror's default has lighter ones). */
const READABLE_HIGHLIGHT = HighlightStyle.define([
  { tag: [tags.keyword, tags.controlKeyword, tags.moduleKeyword, tags.operatorKeyword, tags.definitionKeyword], color: '#6d28d9' },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: '#166534' },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: '#4b5563', fontStyle: 'italic' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: '#9a3412' },
  { tag: [tags.typeName, tags.className, tags.namespace], color: '#075985' },
  { tag: [tags.tagName, tags.angleBracket], color: '#1e40af' },
  { tag: [tags.attributeName, tags.propertyName], color: '#115e59' },
  { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], color: '#1e3a8a' },
  { tag: tags.invalid, color: '#b91c1c' },
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

export default function CodeEditor({ value, onChange, jsx, label, validate }: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const latest = useRef({ onChange, validate });
  latest.current = { onChange, validate };

  useEffect(() => {
    const state = EditorState.create({
      doc: value,
      extensions: [
        basicSetup,
        javascript({ jsx }),
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
          if (update.docChanged) latest.current.onChange(update.state.doc.toString());
        }),
        EditorView.contentAttributes.of({ 'aria-label': label }),
      ],
    });
    view.current = new EditorView({ state, parent: host.current! });
    return () => view.current?.destroy();
    // The editor is created once per mount; later values arrive through the effect below.
  }, [jsx, label]);

  useEffect(() => {
    const editor = view.current;
    if (editor && editor.state.doc.toString() !== value) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    }
  }, [value]);

  return <div className="editor" ref={host} />;
}
