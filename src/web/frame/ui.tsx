// @trellis/ui: components styled with the application's theme (CSS variables set by the host).
import {
  useEffect,
  useId,
  useRef,
  useState,
  type ButtonHTMLAttributes,
  type CSSProperties,
  type FormEvent,
  type FormHTMLAttributes,
  type HTMLAttributes,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
} from 'react';

/** The components' style sheet; the frame adds it once. */
export const UI_CSS = `
:root { color-scheme: light; }
body { margin: 0; padding: 1rem; background: var(--shell-bg, var(--color-background, #fff)); color: var(--shell-fg, var(--color-foreground, #0f172a)); font-family: var(--shell-font, system-ui, sans-serif); font-size: 15px; line-height: 1.5; }
.t-button { font: inherit; border-radius: var(--shell-radius, .5rem); padding: .45rem .9rem; border: 1px solid var(--color-primary); background: var(--color-primary); color: var(--color-primary-foreground); cursor: pointer; }
.t-button:focus-visible, .t-input:focus-visible, .t-select:focus-visible { outline: 2px solid var(--color-primary); outline-offset: 2px; }
.t-button[disabled] { opacity: .55; cursor: not-allowed; }
.t-button.secondary { background: var(--color-background); color: var(--color-foreground); border-color: var(--color-border); }
.t-button.danger { background: var(--color-danger); border-color: var(--color-danger); color: var(--color-primary-foreground); }
.t-card { border: 1px solid var(--color-border); border-radius: var(--shell-radius, .5rem); padding: 1rem; background: var(--color-background); }
.t-stack { display: flex; flex-direction: column; }
.t-stack.row { flex-direction: row; flex-wrap: wrap; align-items: center; }
.t-text.muted { color: var(--color-muted-foreground); }
.t-heading { margin: 0; line-height: 1.25; }
.t-badge { display: inline-block; padding: .05rem .5rem; border-radius: 999px; font-size: .8em; background: var(--color-muted); color: var(--color-foreground); border: 1px solid var(--color-border); }
.t-badge.success { background: var(--color-success); color: var(--color-primary-foreground); border-color: var(--color-success); }
.t-badge.danger { background: var(--color-danger); color: var(--color-primary-foreground); border-color: var(--color-danger); }
.t-field { display: flex; flex-direction: column; gap: .25rem; }
.t-field > span { font-size: .9em; font-weight: 600; }
.t-input, .t-select { font: inherit; padding: .4rem .6rem; border: 1px solid var(--color-border); border-radius: var(--shell-radius, .5rem); background: var(--color-background); color: var(--color-foreground); }
.t-input[aria-invalid="true"] { border-color: var(--color-danger); }
.t-error { color: var(--color-danger); font-size: .9em; }
.t-table-wrap { overflow-x: auto; max-width: 100%; }
.t-table-wrap:focus-visible { outline: 2px solid var(--color-primary, #1d4ed8); outline-offset: 2px; }
.t-table { border-collapse: collapse; width: 100%; }
.t-table caption { text-align: left; font-weight: 600; padding: 0 .6rem .35rem; }
.t-table th, .t-table td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--color-border); }
.t-table th { font-size: .85em; color: var(--color-muted-foreground); font-weight: 600; }
.t-backdrop { position: fixed; inset: 0; background: rgb(15 23 42 / .45); display: flex; align-items: center; justify-content: center; padding: 1rem; }
.t-modal { background: var(--color-background); color: var(--color-foreground); border-radius: var(--shell-radius, .5rem); padding: 1.25rem; width: min(32rem, 100%); max-height: 90vh; overflow: auto; }
.t-modal header { display: flex; justify-content: space-between; align-items: center; margin-bottom: .75rem; }
`;

type Variant = 'primary' | 'secondary' | 'danger';

export function Button({ variant = 'primary', className, type = 'button', ...props }: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant }) {
  return <button type={type} className={join('t-button', variant !== 'primary' && variant, className)} {...props} />;
}

export function Card({ title, children, className, ...props }: HTMLAttributes<HTMLElement> & { title?: ReactNode }) {
  return (
    <section className={join('t-card', className)} {...props}>
      {title ? <h2 className="t-heading" style={{ fontSize: '1.1rem', marginBottom: '.75rem' }}>{title}</h2> : null}
      {children}
    </section>
  );
}

export function Stack({
  gap = '.75rem',
  direction = 'column',
  align,
  justify,
  className,
  style,
  ...props
}: HTMLAttributes<HTMLDivElement> & { gap?: string | number; direction?: 'row' | 'column'; align?: CSSProperties['alignItems']; justify?: CSSProperties['justifyContent'] }) {
  return <div className={join('t-stack', direction === 'row' && 'row', className)} style={{ gap, alignItems: align, justifyContent: justify, ...style }} {...props} />;
}

export function Text({ muted, as: Tag = 'p', className, style, ...props }: HTMLAttributes<HTMLElement> & { muted?: boolean; as?: 'p' | 'span' | 'div' | 'small' | 'strong' }) {
  return <Tag className={join('t-text', muted && 'muted', className)} style={{ margin: Tag === 'p' ? 0 : undefined, ...style }} {...props} />;
}

export function Heading({ level = 2, className, ...props }: HTMLAttributes<HTMLHeadingElement> & { level?: 1 | 2 | 3 | 4 }) {
  const Tag = `h${level}` as 'h2';
  return <Tag className={join('t-heading', className)} {...props} />;
}

export function Badge({ tone = 'neutral', className, ...props }: HTMLAttributes<HTMLSpanElement> & { tone?: 'neutral' | 'success' | 'danger' }) {
  return <span className={join('t-badge', tone !== 'neutral' && tone, className)} {...props} />;
}

type FieldProps = { label?: ReactNode; error?: ReactNode; hint?: ReactNode };

function Field({ label, error, hint, errorId, children }: FieldProps & { errorId: string; children: ReactNode }) {
  return (
    <label className="t-field">
      {label !== undefined ? <span>{label}</span> : null}
      {children}
      {hint ? <small className="t-text muted">{hint}</small> : null}
      {error ? (
        <span id={errorId} className="t-error" role="alert">
          {error}
        </span>
      ) : null}
    </label>
  );
}

/** A text input; with `label` it is wrapped in its label, `error` shows below it. */
export function Input({ label, error, hint, className, ...props }: InputHTMLAttributes<HTMLInputElement> & FieldProps) {
  const errorId = useId();
  const input = (
    <input
      className={join('t-input', className)}
      aria-invalid={error ? true : undefined}
      aria-describedby={error ? errorId : undefined}
      aria-label={label === undefined ? (props['aria-label'] ?? props.placeholder ?? props.name) : undefined}
      {...props}
    />
  );
  return label === undefined && !error && !hint ? input : <Field {...{ label, error, hint, errorId }}>{input}</Field>;
}

export type SelectOption = string | { value: string; label?: string };

/** A select; `options` are strings or { value, label }. */
export function Select({ label, error, hint, options = [], className, children, ...props }: SelectHTMLAttributes<HTMLSelectElement> & FieldProps & { options?: SelectOption[] }) {
  const errorId = useId();
  const select = (
    <select
      className={join('t-select', className)}
      aria-invalid={error ? true : undefined}
      aria-describedby={error ? errorId : undefined}
      aria-label={label === undefined ? (props['aria-label'] ?? props.name) : undefined}
      {...props}
    >
      {options.map((option) => {
        const { value, label: text } = typeof option === 'string' ? { value: option, label: option } : option;
        return (
          <option key={value} value={value}>
            {text ?? value}
          </option>
        );
      })}
      {children}
    </select>
  );
  return label === undefined && !error && !hint ? select : <Field {...{ label, error, hint, errorId }}>{select}</Field>;
}

export interface TableColumn<Row> {
  key: string;
  header: ReactNode;
  render?: (row: Row, index: number) => ReactNode;
}

/** A table of `rows`; each column shows `row[key]` or what `render(row)` returns. */
export function Table<Row extends Record<string, unknown>>({
  rows = [],
  columns = [],
  rowKey = '_id',
  emptyText = 'Nothing to show yet.',
  caption,
  onRowClick,
}: {
  rows?: Row[];
  columns?: TableColumn<Row>[];
  rowKey?: string;
  emptyText?: ReactNode;
  caption?: ReactNode;
  onRowClick?: (row: Row) => void;
}) {
  if (!rows.length) return <Text muted>{emptyText}</Text>;
  const label = typeof caption === 'string' ? caption : tableLabel(columns.map((column) => column.header));
  return (
    <TableScroller label={label}>
      <table className="t-table">
        {caption ? <caption>{caption}</caption> : null}
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.key} scope="col">
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <tr key={String(row[rowKey] ?? index)} onClick={onRowClick ? () => onRowClick(row) : undefined} style={onRowClick ? { cursor: 'pointer' } : undefined}>
              {columns.map((column) => (
                <td key={column.key}>{column.render ? column.render(row, index) : display(row[column.key])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroller>
  );
}

/** "Table: Title, Amount" from the headers that are text. */
function tableLabel(headers: ReactNode[]): string {
  const names = headers.filter((header): header is string | number => typeof header === 'string' || typeof header === 'number');
  return names.length ? `Table: ${names.join(', ')}` : 'Table';
}

/**
 * The table's box. When the table is wider than its place (a phone), the box scrolls sideways and
 * is a named region the keyboard reaches (Tab, then the arrow keys), with a visible focus.
 */
function TableScroller({ label, children }: { label: string; children: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const measure = () => setScrolls(element.scrollWidth > element.clientWidth);
    measure();
    // The box's width changes with the window, the table's with its rows.
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <div ref={box} className="t-table-wrap" {...(scrolls ? { role: 'region', 'aria-label': label, tabIndex: 0 } : {})}>
      {children}
    </div>
  );
}

/** A dialog over the page while `open`; Escape or the close button call `onClose`. */
export function Modal({ open = true, title, onClose, children }: { open?: boolean; title?: ReactNode; onClose?: () => void; children?: ReactNode }) {
  const dialog = useRef<HTMLDivElement>(null);
  const titleId = useId();
  useEffect(() => {
    if (!open) return;
    const previous = document.activeElement as HTMLElement | null;
    dialog.current?.focus();
    const onKey = (event: KeyboardEvent) => event.key === 'Escape' && onClose?.();
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      previous?.focus?.();
    };
  }, [open, onClose]);
  if (!open) return null;
  return (
    <div className="t-backdrop" onClick={(event) => event.target === event.currentTarget && onClose?.()}>
      <div className="t-modal" role="dialog" aria-modal="true" aria-labelledby={title ? titleId : undefined} aria-label={title ? undefined : 'Dialog'} tabIndex={-1} ref={dialog}>
        <header>
          {title ? (
            <h2 id={titleId} className="t-heading" style={{ fontSize: '1.1rem' }}>
              {title}
            </h2>
          ) : (
            <span />
          )}
          {onClose ? (
            <Button variant="secondary" onClick={onClose} aria-label="Close">
              ×
            </Button>
          ) : null}
        </header>
        {children}
      </div>
    </div>
  );
}

/**
 * A form whose `onSubmit` receives the values of its named fields ({ name: value }) and the event;
 * the page never reloads.
 */
export function Form({ onSubmit, children, ...props }: Omit<FormHTMLAttributes<HTMLFormElement>, 'onSubmit'> & { onSubmit?: (values: Record<string, string>, event: FormEvent<HTMLFormElement>) => void }) {
  return (
    <form
      noValidate={props.noValidate}
      {...props}
      onSubmit={(event) => {
        event.preventDefault();
        const values = Object.fromEntries([...new FormData(event.currentTarget).entries()].map(([name, value]) => [name, String(value)]));
        onSubmit?.(values, event);
      }}
    >
      {children}
    </form>
  );
}

function display(value: unknown): ReactNode {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function join(...names: (string | false | undefined)[]): string {
  return names.filter(Boolean).join(' ');
}
