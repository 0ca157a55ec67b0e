// Settings (admin only): the application's name, the browser origins allowed to call it, the
// theme that features and the application shell are drawn with, previewed live, and the storage.
import { useState, type CSSProperties, type FormEvent } from 'react';
import type { ApplicationQuery, UpdateApplicationMutation } from '../../graphql-operations.js';
import { stringRecordOf } from '../../shared/graphql.js';
import { errorMessage, fieldErrors, useDesigner, useLoad } from '../api.js';
import { ErrorText, Loading, SectionHeader, TextField } from '../components.js';
import StorageStatsPanel from './storage.js';

/** The application's settings, as Application and UpdateApplication answer them. */
type Application = ApplicationQuery['application'];

interface Draft {
  name: string;
  origins: string;
  colors: Record<string, string>;
  shell: Record<string, string>;
}

const LOAD = `query Application { application { name corsOrigins theme { colors shell } } }`;
const UPDATE = `mutation UpdateApplication($name: String, $corsOrigins: [String!], $themeColors: JSON, $shellVariables: JSON) {
  updateApplication(name: $name, corsOrigins: $corsOrigins, themeColors: $themeColors, shellVariables: $shellVariables) { name corsOrigins theme { colors shell } }
}`;

/** The CSS variable of a theme colour, as features see it: primaryForeground -> --color-primary-foreground. */
function colorVariable(name: string): string {
  return `--color-${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

function toDraft(application: Application): Draft {
  return { name: application.name, origins: application.corsOrigins.join('\n'), colors: stringRecordOf(application.theme.colors), shell: stringRecordOf(application.theme.shell) };
}

function originsOf(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

/** The message of the origins' field: each refused line, by its number in the textarea. */
function originsError(errors: Record<string, string>, origins: string[]): string | undefined {
  const lines = Object.entries(errors)
    .filter(([field]) => field === 'corsOrigins' || field.startsWith('corsOrigins.'))
    .map(([field, message]) => {
      const index = Number(field.split('.')[1]);
      return Number.isInteger(index) ? `${origins[index] ?? `Line ${index + 1}`}: ${message}` : message;
    });
  return lines.length ? lines.join('\n') : undefined;
}

export default function SettingsSection(_props: { id?: string }) {
  const { run } = useDesigner();
  const { data, error, loading, reload } = useLoad(() => run<ApplicationQuery>(LOAD), []);
  if (!data) return loading ? <Loading /> : <ErrorText error={error} onRetry={reload} />;
  return (
    <div className="stack">
      <SettingsForm application={data.application} />
      <StorageStatsPanel />
    </div>
  );
}

function SettingsForm({ application }: { application: Application }) {
  const { run, toast, refreshApp } = useDesigner();
  const [draft, setDraft] = useState(() => toDraft(application));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function save(event: FormEvent) {
    event.preventDefault();
    if (!draft.name.trim()) return setErrors({ name: 'Enter a name.' });
    setErrors({});
    setError(null);
    setBusy(true);
    try {
      const { updateApplication } = await run<UpdateApplicationMutation>(UPDATE, {
        name: draft.name.trim(),
        corsOrigins: originsOf(draft.origins),
        themeColors: draft.colors,
        shellVariables: draft.shell,
      });
      setDraft(toDraft(updateApplication));
      toast('Settings saved');
      // The header and the page title show the application's name: load it again.
      refreshApp();
    } catch (failure) {
      setErrors(fieldErrors(failure));
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  }

  const setColor = (key: string, value: string) => setDraft((d) => ({ ...d, colors: { ...d.colors, [key]: value } }));
  const setShell = (key: string, value: string) => setDraft((d) => ({ ...d, shell: { ...d.shell, [key]: value } }));
  const corsError = originsError(errors, originsOf(draft.origins));
  return (
    <div className="stack">
      <SectionHeader title="Settings" />
      <form className="stack" onSubmit={save} aria-label="Application settings" noValidate>
        <section className="panel" aria-labelledby="settings-general-title">
          <h2 id="settings-general-title">Application</h2>
          <TextField label="Application name" value={draft.name} onChange={(name) => setDraft((d) => ({ ...d, name }))} error={errors.name} required />
          <label className="field">
            <span>Allowed CORS origins</span>
            <textarea
              rows={4}
              value={draft.origins}
              onChange={(event) => setDraft((d) => ({ ...d, origins: event.target.value }))}
              aria-describedby={corsError ? 'cors-hint cors-error' : 'cors-hint'}
              aria-invalid={corsError ? true : undefined}
              spellCheck={false}
            />
            <small id="cors-hint" className="muted">
              One origin per line, e.g. https://shop.example.com. Browsers on these origins may call /graphql and /api/auth/token.
            </small>
            {corsError ? (
              <small id="cors-error" className="error">
                {corsError}
              </small>
            ) : null}
          </label>
        </section>
        <div className="grid-2">
          <div className="stack">
            <fieldset className="panel">
              <legend>Theme colours</legend>
              {Object.keys(draft.colors)
                .sort()
                .map((key) => (
                  <ColorField key={key} name={key} value={draft.colors[key] ?? ''} onChange={(value) => setColor(key, value)} error={errors[`themeColors.${key}`]} />
                ))}
            </fieldset>
            <fieldset className="panel">
              <legend>Shell variables</legend>
              {Object.keys(draft.shell)
                .sort()
                .map((key) => (
                  <TextField key={key} label={key} value={draft.shell[key] ?? ''} onChange={(value) => setShell(key, value)} error={errors[`shellVariables.${key}`]} spellCheck={false} />
                ))}
            </fieldset>
          </div>
          <Preview draft={draft} />
        </div>
        <ErrorText error={error} />
        <div className="row">
          <button type="submit" className="primary" disabled={busy}>
            Save settings
          </button>
          <button
            type="button"
            onClick={() => {
              setDraft(toDraft(application));
              setErrors({});
              setError(null);
            }}
          >
            Reset
          </button>
        </div>
      </form>
    </div>
  );
}

/** A colour as text (any CSS value) beside a native picker, which only knows #rrggbb. */
function ColorField({ name, value, onChange, error }: { name: string; value: string; onChange: (value: string) => void; error?: string }) {
  return (
    <div>
      <div className="row">
        <div style={{ flex: 1 }}>
          <TextField label={name} value={value} onChange={onChange} error={error} spellCheck={false} />
        </div>
        <input
          type="color"
          aria-label={`${name} colour picker`}
          value={HEX_COLOR.test(value.trim()) ? value.trim().toLowerCase() : '#000000'}
          onChange={(event) => onChange(event.target.value)}
          style={{ width: '3rem', height: '2.4rem', padding: '.15rem', marginBottom: '.75rem' }}
        />
      </div>
      {/* Outside the label, so the field is named by the colour alone. */}
      <small className="muted" style={{ display: 'block', margin: '-.5rem 0 .75rem' }}>
        Features read it as <code>{colorVariable(name)}</code>
      </small>
    </div>
  );
}

/** A small sample drawn with the draft's values as the CSS variables features and the shell use. */
function Preview({ draft }: { draft: Draft }) {
  const variables: Record<string, string> = {};
  for (const [key, value] of Object.entries(draft.colors)) variables[colorVariable(key)] = value;
  for (const [key, value] of Object.entries(draft.shell)) if (key.startsWith('--')) variables[key] = value;
  // Inline styles: the preview's look comes only from the variables, never from the designer's own CSS.
  const frame: CSSProperties = { ...(variables as CSSProperties), background: 'var(--shell-bg, var(--color-background))', color: 'var(--shell-fg, var(--color-foreground))', fontFamily: 'var(--shell-font)', padding: '1rem', borderRadius: 'var(--shell-radius)', border: '1px solid var(--color-border)' };
  return (
    // Sticky: the preview stays in sight while the colours below it are changed.
    <section className="panel" aria-labelledby="preview-title" style={{ alignSelf: 'start', position: 'sticky', top: '1rem' }}>
      <h2 id="preview-title">Preview</h2>
      <div style={frame} data-testid="theme-preview">
        <div style={{ background: 'var(--shell-sidebar-bg)', padding: '.5rem .75rem', borderRadius: 'var(--shell-radius)', marginBottom: '.75rem', borderLeft: '4px solid var(--shell-accent)' }}>{draft.name || 'Application'}</div>
        <h3 style={{ color: 'var(--color-foreground)' }}>Sample heading</h3>
        <div style={{ background: 'var(--color-background)', border: '1px solid var(--color-border)', borderRadius: 'var(--shell-radius)', padding: '.75rem', marginBottom: '.75rem' }}>
          <p style={{ margin: '0 0 .5rem' }}>A card with some text.</p>
          <p style={{ margin: 0, color: 'var(--color-muted-foreground)' }}>Muted text.</p>
        </div>
        {/* A picture of a button, not a control: nothing to press in a preview. */}
        <span data-testid="preview-button" style={{ display: 'inline-block', background: 'var(--color-primary)', color: 'var(--color-primary-foreground)', borderRadius: 'var(--shell-radius)', padding: '.4rem .85rem' }}>
          Sample button
        </span>
      </div>
    </section>
  );
}
