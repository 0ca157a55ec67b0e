// Hooks: list, editor with the hook validator's findings inline, the webhook URL, a test run of a
// webhook (raw body, headers, a provider's signature made on the server), and the run log of the
// hook, newest first, paged, with the status each webhook run answered.
import { Suspense, useCallback, useEffect, useState, type FormEvent } from 'react';
import { errorMessage, fieldErrors, useDesigner, useLoad } from '../api.js';
import type { CreateHookMutation, HookQuery, HookRunsQuery, HooksQuery, SigningVariablesQuery, TestWebhookMutation, UpdateHookCodeMutation, ValidateHookCodeQuery } from '../../graphql-operations.js';
import { CodePlaceholder, ConfirmButton, CopyButton, ErrorText, Findings, formatTime, ItemList, Loading, SectionHeader, SelectField, TextField, useDisclosure } from '../components.js';
import type { CodeFindings } from '../components.js';
import { LoadBoundary, retryableLazy } from '../recovery.js';
import { forgetUnsaved, navigate, useUnsavedChanges } from '../routes.js';
import HookRunCharts from './hook-charts.js';

type TestAnswer = TestWebhookMutation['testWebhook'];

const CodeEditor = retryableLazy(() => import('../editor.js'));

const HOOK_FIELDS = '_id name type tableId content version updatedAt url';
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
  const hooks = useLoad(() => run<HooksQuery>(`query Hooks { hooks { ${HOOK_FIELDS} } tables { _id name } }`), []);
  const tables = hooks.data?.tables ?? [];
  const tableName = (tableId: string | null) => tables.find((table) => table._id === tableId)?.name ?? '';
  return (
    <>
      <SectionHeader title="Hooks">{permissions.has('hooks:write') ? <NewHook tables={tables} onCreated={(created) => (hooks.reload(), navigate('hooks', created))} /> : null}</SectionHeader>
      <div className="split">
        <div>
          <ErrorText error={hooks.error} onRetry={hooks.reload} />
          <ItemList label="Hooks" section="hooks" items={hooks.data?.hooks} current={id} failed={!!hooks.error} empty="No hook yet.">
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
  const { open, setOpen, opener, closeOnEscape } = useDisclosure();
  const [name, setName] = useState('');
  const [type, setType] = useState('beforeSave');
  const [tableId, setTableId] = useState('');
  const [error, setError] = useState<string | null>(null);
  if (!open) {
    return (
      <button type="button" className="primary" ref={opener} onClick={() => setOpen(true)}>
        New hook
      </button>
    );
  }
  const needsTable = type !== 'webHook';
  async function create(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const { createHook } = await run<CreateHookMutation>(`mutation CreateHook($name: String!, $type: HookType!, $tableId: ID, $content: String!) { createHook(name: $name, type: $type, tableId: $tableId, content: $content) { _id } }`, {
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
    <form className="panel" onSubmit={create} onKeyDown={closeOnEscape} aria-label="New hook">
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
  const loaded = useLoad(() => run<HookQuery>(`query Hook($id: ID!) { hook(_id: $id) { ${HOOK_FIELDS} } }`, { id }), [id]);
  const [code, setCode] = useState<string | null>(null);
  const [findings, setFindings] = useState<CodeFindings | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [runsTick, setRunsTick] = useState(0);
  const hook = loaded.data?.hook;
  const [editorReady, setEditorReady] = useState(false);
  useUnsavedChanges(!!hook && code !== null && code !== hook.content, `the hook ${hook?.name ?? id}`);
  useEffect(() => {
    if (hook && code === null) setCode(hook.content);
  }, [hook, code]);
  const validate = useCallback(
    async (content: string) => {
      const { validateHookCode } = await run<Omit<ValidateHookCodeQuery, 'validateHookCode'> & { validateHookCode: CodeFindings }>(`query ValidateHookCode($content: String!) { validateHookCode(content: $content) { errors warnings } }`, { content });
      setFindings(validateHookCode);
      return validateHookCode;
    },
    [run],
  );
  if (loaded.error) return <ErrorText error={loaded.error} onRetry={loaded.reload} />;
  if (!loaded.data || code === null) return <Loading />;
  if (!hook) return <p role="alert">The hook '{id}' does not exist.</p>;
  const canWrite = permissions.has('hooks:write');
  const url = hook.url ?? '';

  async function save() {
    if (!hook || code === null) return;
    setSaving(true);
    setError(null);
    try {
      const { updateHook } = await run<UpdateHookCodeMutation>(`mutation UpdateHookCode($id: ID!, $content: String!) { updateHook(_id: $id, content: $content) { ${HOOK_FIELDS} } }`, { id: hook._id, content: code });
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
      <LoadBoundary what="The code editor">
        <Suspense fallback={<CodePlaceholder code={code} />}>
          <CodeEditor value={code} onChange={setCode} jsx={false} label="Hook code" validate={validate} onReady={() => setEditorReady(true)} />
        </Suspense>
      </LoadBoundary>
      <Findings findings={findings} />
      <ErrorText error={error} />
      <div className="row">
        {canWrite ? (
          <button type="button" className="primary" onClick={() => void save()} disabled={!editorReady || saving || code === hook.content}>
            Save
          </button>
        ) : (
          <span className="muted">Changing hooks needs the hooks:write permission (admins).</span>
        )}
        {canWrite && permissions.has('config:delete') ? (
          <ConfirmButton
            label="Delete"
            disabled={!editorReady}
            question={`Delete the hook ${hook.name}?`}
            onConfirm={async () => {
              try {
                await run(`mutation DeleteHook($id: ID!) { deleteHook(_id: $id, confirm: true) }`, { id: hook._id });
                onChanged();
                forgetUnsaved();
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
          hookId={hook._id}
          onRan={() => {
            // The server writes runs in small batches: look again once the batch is written.
            for (const delay of [300, 1500]) setTimeout(() => setRunsTick((t) => t + 1), delay);
          }}
        />
      ) : null}
      <HookRunCharts key={`charts-${runsTick}`} hookId={hook._id} />
      {/* Read again, not mounted anew: what the person chose to show (a filter, a page) stays. */}
      <Runs refresh={runsTick} hookId={hook._id} webhook={hook.type === 'webHook'} />
    </article>
  );
}

interface HttpHeader {
  name: string;
  value: string;
}

const SIGNING_SCHEMES = [
  { value: '', label: 'Do not sign' },
  { value: 'stripe', label: 'As Stripe does (Stripe-Signature: t=…,v1=…)' },
  { value: 'github', label: 'As GitHub does (X-Hub-Signature-256: sha256=…)' },
];

const TEST_WEBHOOK = `mutation TestWebhook($id: ID!, $body: String, $contentType: String, $headers: [HttpHeaderInput!], $signWith: WebhookSigningInput) {
  testWebhook(_id: $id, body: $body, contentType: $contentType, headers: $headers, signWith: $signWith) { httpStatus headers { name value } body sentHeaders { name value } }
}`;

/**
 * A test run of the saved code, sent by the server as a POST to the webhook's URL would be: the raw
 * body, its media type, headers, and optionally a provider's signature computed on the server with
 * an environment variable's value (the value never reaches the page).
 */
function TestRun({ hookId, onRan }: { hookId: string; onRan: () => void }) {
  const { run, permissions } = useDesigner();
  const canSign = permissions.has('hooks:write');
  const variables = useLoad(() => (canSign ? run<SigningVariablesQuery>('query SigningVariables { environmentVariables { name } }') : Promise.resolve({ environmentVariables: [] })), [canSign]);
  const [body, setBody] = useState('{\n  "hello": "world"\n}');
  const [contentType, setContentType] = useState('application/json');
  const [headers, setHeaders] = useState<(HttpHeader & { key: number })[]>([]);
  const [scheme, setScheme] = useState('');
  const [envVar, setEnvVar] = useState('');
  const [answer, setAnswer] = useState<TestAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const envNames = variables.data?.environmentVariables.map((variable) => variable.name) ?? [];

  const setHeader = (key: number, change: Partial<HttpHeader>) => setHeaders((list) => list.map((header) => (header.key === key ? { ...header, ...change } : header)));
  async function send(event: FormEvent) {
    event.preventDefault();
    setError(null);
    if (scheme && !envVar) {
      setError('Choose the environment variable that holds the signing secret.');
      return;
    }
    setSending(true);
    try {
      const { testWebhook } = await run<TestWebhookMutation>(TEST_WEBHOOK, {
        id: hookId,
        body,
        contentType,
        headers: headers.filter((header) => header.name.trim()).map(({ name, value }) => ({ name: name.trim(), value })),
        signWith: scheme ? { scheme, envVar } : null,
      });
      setAnswer(testWebhook);
      onRan();
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setSending(false);
    }
  }
  return (
    <form onSubmit={send} className="stack fit-narrow" aria-labelledby="test-run-title">
      <h3 id="test-run-title">Test run</h3>
      <p className="muted">Runs the saved code as a POST to the webhook&apos;s URL would, from the server: the answer is what a caller gets, and the run is in the run log.</p>
      <label className="field">
        <span>Body (sent exactly as written)</span>
        <textarea rows={5} value={body} onChange={(event) => setBody(event.target.value)} spellCheck={false} />
      </label>
      <TextField label="Content-Type" value={contentType} onChange={setContentType} list="test-run-content-types" />
      <datalist id="test-run-content-types">
        <option value="application/json" />
        <option value="application/x-www-form-urlencoded" />
        <option value="text/plain" />
      </datalist>
      <fieldset className="stack">
        <legend>Headers</legend>
        {headers.map((header, index) => (
          <div className="row" key={header.key}>
            <TextField label={`Header ${index + 1} name`} value={header.name} onChange={(name) => setHeader(header.key, { name })} placeholder="x-request-source" />
            <TextField label={`Header ${index + 1} value`} value={header.value} onChange={(value) => setHeader(header.key, { value })} />
            <button type="button" onClick={() => setHeaders((list) => list.filter((other) => other.key !== header.key))} aria-label={`Remove header ${index + 1}`}>
              Remove
            </button>
          </div>
        ))}
        <div>
          <button type="button" onClick={() => setHeaders((list) => [...list, { key: Date.now() + Math.random(), name: '', value: '' }])}>
            Add a header
          </button>
        </div>
      </fieldset>
      {canSign ? (
        <div className="row">
          <SelectField label="Sign the body" value={scheme} onChange={setScheme} options={SIGNING_SCHEMES} />
          {scheme ? (
            <SelectField
              label="With the secret in"
              value={envVar}
              onChange={setEnvVar}
              options={[{ value: '', label: envNames.length ? 'Choose a variable' : 'No environment variable yet' }, ...envNames.map((name) => ({ value: name, label: name }))]}
            />
          ) : null}
        </div>
      ) : (
        <p className="muted">Signing the body with an environment value needs the hooks:write permission (admins).</p>
      )}
      {scheme ? <p className="muted">The server signs the body with the variable&apos;s value at the time of sending; the value never reaches this page.</p> : null}
      <ErrorText error={error} />
      <div>
        <button type="submit" disabled={sending}>
          Send test request
        </button>
      </div>
      {answer ? (
        <div role="status" aria-label="Test run answer" className="stack">
          <p>
            <strong>HTTP {answer.httpStatus}</strong>
            {answer.httpStatus >= 400 ? <span className="muted"> — the webhook refused the call or failed</span> : null}
          </p>
          {answer.body ? <pre className="diff">{answer.body}</pre> : <p className="muted">No body.</p>}
          <details>
            <summary>Headers sent and received</summary>
            <HeaderList label="Sent" headers={answer.sentHeaders} />
            <HeaderList label="Received" headers={answer.headers} />
          </details>
        </div>
      ) : null}
    </form>
  );
}

function HeaderList({ label, headers }: { label: string; headers: HttpHeader[] }) {
  return (
    <>
      <h4>{label}</h4>
      <dl className="headers" aria-label={`Headers ${label.toLowerCase()}`}>
        {headers.map((header) => (
          <div key={header.name}>
            <dt>{header.name}</dt>
            <dd>
              <code>{header.value}</code>
            </dd>
          </div>
        ))}
      </dl>
    </>
  );
}

const OUTCOMES = [
  { value: '', label: 'Every run' },
  { value: 'ok', label: 'ok' },
  { value: 'refused', label: 'refused (the webhook answered 4xx or 5xx)' },
  { value: 'error', label: 'error' },
  { value: 'timeout', label: 'timeout' },
  { value: 'memory', label: 'memory' },
];

/** The hook's run log, read again whenever `refresh` changes. */
function Runs({ hookId, webhook, refresh }: { hookId: string; webhook: boolean; refresh: number }) {
  const { run } = useDesigner();
  const [before, setBefore] = useState<string[]>([]);
  const [outcome, setOutcome] = useState('');
  const cursor = before[before.length - 1] ?? null;
  const runs = useLoad(
    () =>
      run<HookRunsQuery>(
        `query HookRuns($id: ID, $before: ID, $outcome: HookRunOutcome) { hookRuns(hookId: $id, outcome: $outcome, limit: 20, before: $before) { items { _id trigger startedAt durationMs queuedMs outcome httpStatus console error input output detailsVisible } nextCursor } }`,
        { id: hookId, before: cursor, outcome: outcome || null },
      ),
    [hookId, cursor, outcome, refresh],
  );
  const page = runs.data?.hookRuns;
  return (
    <section className="fit-narrow" aria-labelledby="runs-title">
      <div className="row">
        <h3 id="runs-title" style={{ margin: 0 }}>
          Run log
        </h3>
        <button type="button" onClick={runs.reload}>
          Refresh
        </button>
        <SelectField
          label="Show"
          value={outcome}
          onChange={(next) => {
            setOutcome(next);
            setBefore([]);
          }}
          options={OUTCOMES}
        />
      </div>
      <ErrorText error={runs.error} onRetry={runs.reload} />
      {!page ? (
        runs.error ? null : <Loading />
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
                {webhook ? <th scope="col">Answer</th> : null}
                <th scope="col">Duration</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((entry) => (
                <tr key={entry._id}>
                  <td data-label="Started">{formatTime(entry.startedAt)}</td>
                  <td data-label="Trigger">{entry.trigger}</td>
                  <td data-label="Outcome">{entry.outcome}</td>
                  {webhook ? <td data-label="Answer">{entry.httpStatus === null ? <span className="muted">—</span> : `HTTP ${entry.httpStatus}`}</td> : null}
                  <td data-label="Duration">
                    {entry.durationMs} ms{entry.queuedMs ? <span className="muted"> (waited {entry.queuedMs} ms for a worker)</span> : null}
                  </td>
                  <td data-label="Details" className="wide">
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
