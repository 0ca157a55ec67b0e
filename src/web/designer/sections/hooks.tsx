// Hooks: list, editor with the hook validator's findings inline, the webhook URL, a test run of a
// webhook with a JSON body, and the run log of the hook, newest first, paged.
import { lazy, Suspense, useCallback, useEffect, useState, type FormEvent } from 'react';
import { errorMessage, fieldErrors, useDesigner, useLoad } from '../api.js';
import { ConfirmButton, CopyButton, ErrorText, Findings, formatTime, ItemList, Loading, SectionHeader, SelectField, TextField } from '../components.js';
import type { Finding } from '../components.js';
import { navigate } from '../main.js';

const CodeEditor = lazy(() => import('../editor.js'));

interface Hook {
  _id: string;
  name: string;
  type: string;
  tableId: string | null;
  content: string;
  version: number;
  updatedAt: string;
}

interface HookRun {
  _id: string;
  trigger: string;
  startedAt: string;
  durationMs: number;
  queuedMs: number | null;
  outcome: string;
  console: string[] | null;
  error: string | null;
  input: unknown;
  output: unknown;
  detailsVisible: boolean;
}

const HOOK_FIELDS = '_id name type tableId content version updatedAt';
const TYPES = [
  { value: 'beforeSave', label: 'beforeSave (checks or changes a record before it is saved)' },
  { value: 'afterSave', label: 'afterSave (reacts after a record is saved)' },
  { value: 'webHook', label: 'webHook (answers POST /api/webhook/<name>)' },
];
const TEMPLATES: Record<string, string> = {
  beforeSave: `async function (instance) {
  // Throw an Error to refuse the save; return the record to save it.
  return instance;
}
`,
  afterSave: `async function (instance) {
  // Runs after the save; the record is saved whatever happens here.
}
`,
  webHook: `async function (body) {
  // The caller gets what this returns as JSON.
  return { ok: true };
}
`,
};

export default function HooksSection({ id }: { id?: string }) {
  const { run, permissions } = useDesigner();
  const hooks = useLoad(() => run<{ hooks: Hook[]; tables: { _id: string; name: string }[] }>(`{ hooks { ${HOOK_FIELDS} } tables { _id name } }`), []);
  const tables = hooks.data?.tables ?? [];
  const tableName = (tableId: string | null) => tables.find((table) => table._id === tableId)?.name ?? '';
  return (
    <>
      <SectionHeader title="Hooks">{permissions.has('hooks:write') ? <NewHook tables={tables} onCreated={(created) => (hooks.reload(), navigate('hooks', created))} /> : null}</SectionHeader>
      <div className="split">
        <div>
          <ErrorText error={hooks.error} />
          <ItemList label="Hooks" section="hooks" items={hooks.data?.hooks} current={id} empty="No hook yet.">
            {(hook) => (
              <>
                {hook.name}
                <small>
                  {hook.type}
                  {hook.tableId ? ` on ${tableName(hook.tableId)}` : ''}
                </small>
              </>
            )}
          </ItemList>
        </div>
        {id && hooks.data ? <HookEditor key={id} id={id} tables={tables} onChanged={hooks.reload} /> : <p className="muted">Choose a hook, or create one.</p>}
      </div>
    </>
  );
}

function NewHook({ tables, onCreated }: { tables: { _id: string; name: string }[]; onCreated: (id: string) => void }) {
  const { run } = useDesigner();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [type, setType] = useState('beforeSave');
  const [tableId, setTableId] = useState('');
  const [error, setError] = useState<string | null>(null);
  if (!open) {
    return (
      <button type="button" className="primary" onClick={() => setOpen(true)}>
        New hook
      </button>
    );
  }
  const needsTable = type !== 'webHook';
  async function create(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const { createHook } = await run<{ createHook: { _id: string } }>(`mutation($name: String!, $type: HookType!, $tableId: ID, $content: String!) { createHook(name: $name, type: $type, tableId: $tableId, content: $content) { _id } }`, {
        name,
        type,
        tableId: needsTable ? tableId || tables[0]?._id || null : null,
        content: TEMPLATES[type],
      });
      setOpen(false);
      onCreated(createHook._id);
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }
  return (
    <form className="panel" onSubmit={create} aria-label="New hook">
      <TextField label="Name of the new hook" value={name} onChange={setName} required autoFocus />
      <SelectField label="Type" value={type} onChange={setType} options={TYPES} />
      {needsTable ? <SelectField label="Table" value={tableId || tables[0]?._id || ''} onChange={setTableId} options={tables.map((table) => ({ value: table._id, label: table.name }))} /> : null}
      <ErrorText error={error} />
      <div className="row">
        <button type="submit" className="primary">
          Create
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function HookEditor({ id, tables, onChanged }: { id: string; tables: { _id: string; name: string }[]; onChanged: () => void }) {
  const { run, permissions, toast } = useDesigner();
  const loaded = useLoad(() => run<{ hook: Hook | null }>(`query($id: ID!) { hook(_id: $id) { ${HOOK_FIELDS} } }`, { id }), [id]);
  const [code, setCode] = useState<string | null>(null);
  const [findings, setFindings] = useState<{ errors: Finding[]; warnings: Finding[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [runsTick, setRunsTick] = useState(0);
  const hook = loaded.data?.hook;
  useEffect(() => {
    if (hook && code === null) setCode(hook.content);
  }, [hook, code]);
  const validate = useCallback(
    async (content: string) => {
      const { validateHookCode } = await run<{ validateHookCode: { errors: Finding[]; warnings: Finding[] } }>(`query($content: String!) { validateHookCode(content: $content) { errors warnings } }`, { content });
      setFindings(validateHookCode);
      return validateHookCode;
    },
    [run],
  );
  if (loaded.error) return <ErrorText error={loaded.error} />;
  if (!loaded.data || code === null) return <Loading />;
  if (!hook) return <p role="alert">The hook '{id}' does not exist.</p>;
  const canWrite = permissions.has('hooks:write');
  const url = `${location.origin}/api/webhook/${encodeURIComponent(hook.name)}`;

  async function save() {
    if (!hook || code === null) return;
    setSaving(true);
    setError(null);
    try {
      const { updateHook } = await run<{ updateHook: Hook }>(`mutation($id: ID!, $content: String!) { updateHook(_id: $id, content: $content) { ${HOOK_FIELDS} } }`, { id: hook._id, content: code });
      loaded.reload();
      onChanged();
      toast(`Saved version ${updateHook.version} of ${updateHook.name}`);
    } catch (failure) {
      setError(errorMessage(failure));
      const fields = fieldErrors(failure);
      if (fields.content) setError(fields.content);
    } finally {
      setSaving(false);
    }
  }

  return (
    <article className="stack" aria-label={`Hook ${hook.name}`}>
      <div className="row">
        <h2 style={{ margin: 0 }}>{hook.name}</h2>
        <span className="pill">{hook.type}</span>
        {hook.tableId ? <span className="muted">on {tables.find((table) => table._id === hook.tableId)?.name}</span> : null}
        <span className="muted">
          version {hook.version} · saved {formatTime(hook.updatedAt)}
        </span>
      </div>
      {hook.type === 'webHook' ? (
        <div className="row">
          <span>Webhook URL</span>
          <code aria-label="Webhook URL">{url}</code>
          <CopyButton text={url} label="Copy the webhook URL" />
        </div>
      ) : null}
      <Suspense fallback={<Loading what="Loading the editor…" />}>
        <CodeEditor value={code} onChange={setCode} jsx={false} label="Hook code" validate={validate} />
      </Suspense>
      <Findings findings={findings} />
      <ErrorText error={error} />
      <div className="row">
        {canWrite ? (
          <button type="button" className="primary" onClick={() => void save()} disabled={saving || code === hook.content}>
            Save
          </button>
        ) : (
          <span className="muted">Changing hooks needs the hooks:write permission (admins).</span>
        )}
        {canWrite && permissions.has('config:delete') ? (
          <ConfirmButton
            label="Delete"
            question={`Delete the hook ${hook.name}?`}
            onConfirm={async () => {
              try {
                await run(`mutation($id: ID!) { deleteHook(_id: $id, confirm: true) }`, { id: hook._id });
                onChanged();
                navigate('hooks');
              } catch (failure) {
                setError(errorMessage(failure));
              }
            }}
          />
        ) : null}
      </div>
      {hook.type === 'webHook' ? (
        <TestRun
          url={url}
          onRan={() => {
            // The server writes runs in small batches: look again once the batch is written.
            for (const delay of [300, 1500]) setTimeout(() => setRunsTick((t) => t + 1), delay);
          }}
        />
      ) : null}
      <Runs key={runsTick} hookId={hook._id} />
    </article>
  );
}

function TestRun({ url, onRan }: { url: string; onRan: () => void }) {
  const [body, setBody] = useState('{\n  "hello": "world"\n}');
  const [answer, setAnswer] = useState<{ status: number; text: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  async function send(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      JSON.parse(body);
    } catch {
      setError('The body is not valid JSON.');
      return;
    }
    try {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      setAnswer({ status: response.status, text: await response.text() });
      onRan();
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }
  return (
    <form onSubmit={send} aria-labelledby="test-run-title">
      <h3 id="test-run-title">Test run</h3>
      <label className="field">
        <span>JSON body</span>
        <textarea rows={5} value={body} onChange={(event) => setBody(event.target.value)} />
      </label>
      <ErrorText error={error} />
      <button type="submit">Send test request</button>
      {answer ? (
        <div role="status" aria-label="Test run answer">
          <p>HTTP {answer.status}</p>
          <pre className="diff">{answer.text}</pre>
        </div>
      ) : null}
    </form>
  );
}

function Runs({ hookId }: { hookId: string }) {
  const { run } = useDesigner();
  const [before, setBefore] = useState<string[]>([]);
  const cursor = before[before.length - 1] ?? null;
  const runs = useLoad(
    () => run<{ hookRuns: { items: HookRun[]; nextCursor: string | null } }>(`query($id: ID, $before: ID) { hookRuns(hookId: $id, limit: 20, before: $before) { items { _id trigger startedAt durationMs queuedMs outcome console error input output detailsVisible } nextCursor } }`, { id: hookId, before: cursor }),
    [hookId, cursor],
  );
  const page = runs.data?.hookRuns;
  return (
    <section aria-labelledby="runs-title">
      <div className="row">
        <h3 id="runs-title" style={{ margin: 0 }}>
          Run log
        </h3>
        <button type="button" onClick={runs.reload}>
          Refresh
        </button>
      </div>
      <ErrorText error={runs.error} />
      {!page ? (
        <Loading />
      ) : page.items.length === 0 ? (
        <p className="muted">No run yet.</p>
      ) : (
        <div className="scroll-x" role="region" aria-label="Hook runs" tabIndex={0}>
          <table className="grid" aria-label="Runs">
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Trigger</th>
                <th scope="col">Outcome</th>
                <th scope="col">Duration</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((entry) => (
                <tr key={entry._id}>
                  <td>{formatTime(entry.startedAt)}</td>
                  <td>{entry.trigger}</td>
                  <td>{entry.outcome}</td>
                  <td>
                    {entry.durationMs} ms{entry.queuedMs ? <span className="muted"> (waited {entry.queuedMs} ms for a worker)</span> : null}
                  </td>
                  <td>
                    {entry.error ? <pre className="error">{entry.error}</pre> : null}
                    {entry.detailsVisible ? (
                      <>
                        {entry.console?.length ? <pre aria-label="Console">{entry.console.join('\n')}</pre> : null}
                        <details>
                          <summary>Input and output</summary>
                          <pre aria-label="Input">{JSON.stringify(entry.input, null, 2)}</pre>
                          <pre aria-label="Output">{JSON.stringify(entry.output, null, 2)}</pre>
                        </details>
                      </>
                    ) : (
                      <span className="muted">Details are shown to admins who may change hooks.</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="row">
        {before.length ? (
          <button type="button" onClick={() => setBefore(before.slice(0, -1))}>
            Newer runs
          </button>
        ) : null}
        {page?.nextCursor ? (
          <button type="button" onClick={() => setBefore([...before, page.nextCursor!])}>
            Older runs
          </button>
        ) : null}
      </div>
    </section>
  );
}
