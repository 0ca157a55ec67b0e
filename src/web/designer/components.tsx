// Small building blocks shared by the designer's sections.
import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from 'react';

export function SectionHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="section-header">
      <h1>{title}</h1>
      <div className="row">{children}</div>
    </div>
  );
}

/** An error in words; with `onRetry` (a failed load), a Retry button beside it. */
export function ErrorText({ error, onRetry }: { error: string | null | undefined; onRetry?: () => void }) {
  if (!error) return null;
  if (!onRetry) {
    return (
      <p className="error" role="alert">
        {error}
      </p>
    );
  }
  return (
    <div className="row load-error">
      <p className="error" role="alert">
        {error}
      </p>
      <button type="button" onClick={onRetry}>
        Retry
      </button>
    </div>
  );
}

export function Loading({ what = 'Loading…' }: { what?: string }) {
  return (
    <p className="muted loading" aria-busy="true">
      {what}
    </p>
  );
}

/**
 * Where the code editor will be, while its code arrives: the code itself, read-only, in the
 * editor's type and box, so that nothing moves when the editor replaces it.
 */
export function CodePlaceholder({ code }: { code: string }) {
  return (
    <div className="editor" aria-busy="true">
      <p className="sr-only">Loading the editor…</p>
      <pre className="code-placeholder">{code}</pre>
    </div>
  );
}

/** A labelled input; `error` shows below it and marks it invalid. */
export function TextField({
  label,
  value,
  onChange,
  error,
  type = 'text',
  hint,
  ...rest
}: { label: string; value: string; onChange: (value: string) => void; error?: string; type?: string; hint?: string } & Omit<React.InputHTMLAttributes<HTMLInputElement>, 'onChange' | 'value'>) {
  const id = useId();
  return (
    <label className="field">
      <span>{label}</span>
      <input type={type} value={value} onChange={(event) => onChange(event.target.value)} aria-invalid={error ? true : undefined} aria-describedby={error ? id : undefined} {...rest} />
      {hint ? <small className="muted">{hint}</small> : null}
      {error ? (
        <small id={id} className="error">
          {error}
        </small>
      ) : null}
    </label>
  );
}

export function SelectField({ label, value, onChange, options, ...rest }: { label: string; value: string; onChange: (value: string) => void; options: { value: string; label: string }[] } & Omit<React.SelectHTMLAttributes<HTMLSelectElement>, 'onChange' | 'value'>) {
  return (
    <label className="field">
      <span>{label}</span>
      <select value={value} onChange={(event) => onChange(event.target.value)} {...rest}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Copies `text` to the clipboard; says "Copied" for a moment. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          // Without clipboard access (an insecure origin), select-and-copy by hand still works.
        }
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

/** A secret shown exactly once, with a copy button and the warning that it will not be shown again. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  return (
    <div className="shown-once">
      <span className="label">{label}</span>
      <div className="row">
        <code className="secret" aria-label={label}>
          {value}
        </code>
        <CopyButton text={value} label={`Copy ${label}`} />
      </div>
    </div>
  );
}

/**
 * A button that asks before doing something that cannot be undone. `name` is its accessible name
 * when the label alone is ambiguous (a "Delete" in each row): it should start with the label.
 */
export function ConfirmButton({ label, name, question, onConfirm, disabled }: { label: string; name?: string; question: string; onConfirm: () => void | Promise<void>; disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const answered = useRef(false);
  useEffect(() => {
    // The safe answer has the focus: Enter pressed twice does not delete. Back on the button after Cancel or Escape.
    if (asking) cancel.current?.focus();
    else if (answered.current) opener.current?.focus();
    answered.current = false;
  }, [asking]);
  const stop = () => {
    answered.current = true;
    setAsking(false);
  };
  if (!asking) {
    return (
      <button type="button" ref={opener} className="danger" disabled={disabled} aria-label={name} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span
      className="confirm"
      role="group"
      aria-label={question}
      onKeyDown={(event) => {
        if (event.key !== 'Escape') return;
        event.stopPropagation();
        stop();
      }}
    >
      <span>{question}</span>
      <button
        type="button"
        className="danger"
        onClick={async () => {
          setAsking(false);
          await onConfirm();
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" ref={cancel} onClick={stop}>
        Cancel
      </button>
    </span>
  );
}

export function formatTime(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
}

/** Data of a table cell as text. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** One finding of a code validator (1-based line and column). */
export interface Finding {
  code: string;
  message: string;
  line?: number;
  column?: number;
}

/** A validator's answer (CodeValidation's errors and warnings, JSON in the schema), as the pages read it. */
export interface CodeFindings {
  errors: Finding[];
  warnings: Finding[];
}

/** What a code validator found, counted and listed (the editor shows the same findings inline). */
export function Findings({ findings }: { findings: CodeFindings | null }) {
  if (!findings) return null;
  const { errors, warnings } = findings;
  if (!errors.length && !warnings.length) return <p className="muted" role="status">No problems found.</p>;
  return (
    <div role="status">
      <p className="muted">
        {errors.length} {errors.length === 1 ? 'error' : 'errors'}, {warnings.length} {warnings.length === 1 ? 'warning' : 'warnings'}
      </p>
      <ul className="findings" aria-label="Problems in the code">
        {errors.map((finding, index) => (
          <li key={`e${index}`} className="error-item">
            Error{finding.line ? ` (line ${finding.line})` : ''}: {finding.message}
          </li>
        ))}
        {warnings.map((finding, index) => (
          <li key={`w${index}`} className="warning-item">
            Warning{finding.line ? ` (line ${finding.line})` : ''}: {finding.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * The list beside a section's detail: one link per item to `#/<section>/<_id>`, the open one
 * marked; `empty` when there is none yet, a loading line until `items` is known.
 */
export function ItemList<T extends { _id: string }>({
  label,
  section,
  items,
  current,
  empty,
  failed = false,
  children,
}: {
  label: string;
  section: string;
  items: T[] | undefined;
  current: string | undefined;
  empty: string;
  /** The list did not load (its error shows beside it): no "Loading…" then. */
  failed?: boolean;
  children: (item: T) => ReactNode;
}) {
  if (!items) return failed ? null : <Loading />;
  if (!items.length) return <p className="muted">{empty}</p>;
  return (
    <ul className="list" aria-label={label}>
      {items.map((item) => (
        <li key={item._id}>
          <a href={`#/${section}/${encodeURIComponent(item._id)}`} aria-current={item._id === current ? 'true' : undefined}>
            {children(item)}
          </a>
        </li>
      ))}
    </ul>
  );
}

/**
 * Tabs (the WAI-ARIA pattern): the arrow keys, Home and End move between the tabs and select the
 * one they reach; the panel shows `children`, the content of `current`.
 */
export function Tabs<Id extends string>({ label, tabs, current, onSelect, children }: { label: string; tabs: { id: Id; label: string }[]; current: Id; onSelect: (id: Id) => void; children: ReactNode }) {
  const base = useId();
  const buttons = useRef(new Map<Id, HTMLButtonElement>());
  const select = (id: Id) => {
    onSelect(id);
    buttons.current.get(id)?.focus();
  };
  const onKeyDown = (event: React.KeyboardEvent) => {
    const index = tabs.findIndex((tab) => tab.id === current);
    const next = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    select(tabs[(next + tabs.length) % tabs.length]!.id);
  };
  return (
    <div className="tabs">
      <div role="tablist" aria-label={label} className="tab-list" onKeyDown={onKeyDown}>
        {tabs.map((tab) => (
          <button
            key={tab.id}
            ref={(element) => void (element ? buttons.current.set(tab.id, element) : buttons.current.delete(tab.id))}
            type="button"
            role="tab"
            id={`${base}-${tab.id}`}
            aria-selected={tab.id === current}
            aria-controls={`${base}-panel`}
            tabIndex={tab.id === current ? 0 : -1}
            onClick={() => select(tab.id)}
          >
            {tab.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${base}-panel`} aria-labelledby={`${base}-${current}`} className="tab-panel">
        {children}
      </div>
    </div>
  );
}

/**
 * A modal dialog (the browser's own <dialog>): it takes the focus, makes the page behind it inert,
 * closes on Escape when `onClose` is given, and gives the focus back to what had it when it opened.
 */
export function Modal({ labelledBy, onClose, children }: { labelledBy: string; onClose?: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current!;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (!dialog.open) dialog.showModal();
    return () => {
      dialog.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className="modal"
      aria-labelledby={labelledBy}
      onKeyDown={(event) => {
        // Tab goes round inside the dialog rather than out to the browser.
        if (event.key !== 'Tab') return;
        const focusable = [...event.currentTarget.querySelectorAll<HTMLElement>('input, select, textarea, button, a[href], [tabindex]:not([tabindex="-1"])')].filter((element) => !element.matches(':disabled'));
        const first = focusable[0];
        const last = focusable[focusable.length - 1];
        if (!first || !last) return;
        if (!event.shiftKey && document.activeElement === last) {
          event.preventDefault();
          first.focus();
        } else if (event.shiftKey && document.activeElement === first) {
          event.preventDefault();
          last.focus();
        }
      }}
      onCancel={(event) => {
        // Escape: closes when the dialog may be dismissed; the page decides (it unmounts the dialog).
        event.preventDefault();
        onClose?.();
      }}
    >
      {children}
    </dialog>
  );
}

/**
 * An inline form opened by a button ("New table"): closing it (Cancel, Escape, done) gives the
 * focus back to that button, so the keyboard stays where the person was.
 */
export function useDisclosure() {
  const [open, setOpenState] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const returning = useRef(false);
  useEffect(() => {
    if (open || !returning.current) return;
    returning.current = false;
    opener.current?.focus();
  }, [open]);
  const setOpen = useCallback((next: boolean) => {
    if (!next) returning.current = true;
    setOpenState(next);
  }, []);
  const closeOnEscape = useCallback(
    (event: React.KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      event.stopPropagation();
      setOpen(false);
    },
    [setOpen],
  );
  return { open, setOpen, opener, closeOnEscape };
}
