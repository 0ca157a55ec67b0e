// MCP keys: personal keys an AI client uses at /api/mcp. The raw key is shown once, with the client
// configuration ready to paste; afterwards only its prefix is known.
import { useState, type FormEvent } from 'react';
import { errorMessage, fieldErrors, useDesigner, useLoad } from '../api.js';
import type { CreateMcpApiKeyMutation, McpApiKeysQuery } from '../../graphql-operations.js';
import { ConfirmButton, CopyButton, ErrorText, Loading, SectionHeader, ShownOnce, TextField, formatTime } from '../components.js';
import { ADMIN_ONLY_SCOPES, SCOPES } from '../../../access/permission-list.js';

type McpApiKey = McpApiKeysQuery['mcpApiKeys'][number];

const MAX_DAYS = 365;

const KEY_FIELDS = '_id name keyPrefix scopes effectiveScopes expiresAt lastUsedAt revokedAt userId userEmail';
const LOAD = `query McpApiKeys($all: Boolean) { mcpApiKeys(all: $all) { ${KEY_FIELDS} } }`;
const CREATE = `mutation CreateMcpApiKey($name: String!, $scopes: [Scope!]!, $days: Int!) {
  createMcpApiKey(name: $name, scopes: $scopes, expiresInDays: $days) { apiKey key { name } }
}`;
const REVOKE = `mutation RevokeMcpApiKey($id: ID!) { revokeMcpApiKey(_id: $id) { _id } }`;

/** The client configurations of the README, filled in for this server and key. */
function clientConfiguration(url: string, apiKey: string): { json: string; command: string } {
  const json = JSON.stringify({ mcpServers: { trellis: { type: 'http', url, headers: { Authorization: `Bearer ${apiKey}` } } } }, null, 2);
  const command = `claude mcp add --transport http trellis ${url} --header "Authorization: Bearer ${apiKey}"`;
  return { json, command };
}

export default function McpKeysSection(_props: { id?: string }) {
  const { run, permissions, isAdmin } = useDesigner();
  // Admins may list (and revoke) every key of the application, not only their own.
  const [all, setAll] = useState(false);
  const { data, error, loading, reload } = useLoad(() => run<McpApiKeysQuery>(LOAD, { all }), [all]);
  // The raw key lives only in this state: gone when dismissed or when the page is left.
  const [created, setCreated] = useState<{ name: string; apiKey: string } | null>(null);
  const canCreate = permissions.has('ai_designer');

  return (
    <div className="stack">
      <SectionHeader title="MCP keys" />
      <p className="muted">An MCP key lets an AI client (Claude Code, Cursor, VS Code …) work on this application with the scopes you choose, as you.</p>
      {created ? (
        <CreatedKey created={created} onDone={() => setCreated(null)} />
      ) : canCreate ? (
        <CreateKeyForm
          onCreated={(next) => {
            setCreated(next);
            reload();
          }}
        />
      ) : (
        <p className="notice">Creating an MCP key needs the ai_designer permission. Ask an admin to give your role that permission.</p>
      )}
      {isAdmin ? (
        <label className="check">
          <input type="checkbox" checked={all} onChange={(event) => setAll(event.target.checked)} /> Show every key of the application (admin)
        </label>
      ) : null}
      <ErrorText error={error} onRetry={reload} />
      {data ? <KeyTable keys={data.mcpApiKeys} all={all} onRevoked={reload} /> : loading ? <Loading /> : null}
    </div>
  );
}

function CreateKeyForm({ onCreated }: { onCreated: (created: { name: string; apiKey: string }) => void }) {
  const { run, isAdmin, permissions } = useDesigner();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<string>>(() => new Set());
  const [days, setDays] = useState('30');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function create(event: FormEvent) {
    event.preventDefault();
    const expiresInDays = Number(days);
    const local: Record<string, string> = {};
    if (!name.trim()) local.name = 'Enter a name.';
    if (!scopes.size) local.scopes = 'Choose at least one scope.';
    if (!/^\d+$/.test(days.trim()) || expiresInDays < 1 || expiresInDays > MAX_DAYS) local.expiresInDays = `Enter a whole number of days from 1 to ${MAX_DAYS}.`;
    setErrors(local);
    setError(null);
    if (Object.keys(local).length) return;
    setBusy(true);
    try {
      const result = await run<CreateMcpApiKeyMutation>(CREATE, { name: name.trim(), scopes: SCOPES.filter((s) => scopes.has(s)), days: expiresInDays });
      onCreated({ name: result.createMcpApiKey.key.name, apiKey: result.createMcpApiKey.apiKey });
    } catch (failure) {
      setErrors(fieldErrors(failure));
      setError(errorMessage(failure));
      setBusy(false);
    }
  }

  return (
    <form className="panel" onSubmit={create} aria-labelledby="create-key-title" noValidate>
      <h2 id="create-key-title">Create an MCP key</h2>
      <TextField label="Name" value={name} onChange={setName} error={errors.name} hint="Where it is used, e.g. Claude Code on my laptop." required />
      <fieldset aria-describedby={errors.scopes ? 'scopes-error' : undefined}>
        <legend>Scopes</legend>
        {SCOPES.map((scope) => {
          // Only an admin may grant these; the server refuses them from anyone else.
          const adminOnly = ADMIN_ONLY_SCOPES.has(scope) && !isAdmin;
          const reasonId = `scope-reason-${scope.replace(':', '-')}`;
          const unheld = !adminOnly && !permissions.has(scope);
          return (
            <div key={scope}>
              <label className="check">
                <input
                  type="checkbox"
                  checked={scopes.has(scope)}
                  disabled={adminOnly}
                  aria-describedby={adminOnly || unheld ? reasonId : undefined}
                  onChange={(event) => {
                    const next = new Set(scopes);
                    if (event.target.checked) next.add(scope);
                    else next.delete(scope);
                    setScopes(next);
                  }}
                />
                {scope}
              </label>
              {adminOnly ? (
                <small id={reasonId} className="muted">
                  Only admins can grant this scope
                </small>
              ) : unheld ? (
                <small id={reasonId} className="muted">
                  Your role does not grant this scope: the key could not use it until it does.
                </small>
              ) : null}
            </div>
          );
        })}
        {errors.scopes ? (
          <small id="scopes-error" className="error">
            {errors.scopes}
          </small>
        ) : null}
      </fieldset>
      <TextField label="Expires in (days)" type="number" min={1} max={MAX_DAYS} step={1} value={days} onChange={setDays} error={errors.expiresInDays} hint={`1 to ${MAX_DAYS} days; every key expires.`} required />
      <ErrorText error={error} />
      <button type="submit" className="primary" disabled={busy}>
        Create MCP key
      </button>
    </form>
  );
}

function CreatedKey({ created, onDone }: { created: { name: string; apiKey: string }; onDone: () => void }) {
  const { json, command } = clientConfiguration(`${location.origin}/api/mcp`, created.apiKey);
  return (
    <section className="panel" aria-labelledby="created-key-title">
      <h2 id="created-key-title">MCP key {created.name} created</h2>
      <p className="notice">Copy the key now: it will not be shown again.</p>
      <ShownOnce label="API key" value={created.apiKey} />
      <h3>Client configuration (mcpServers)</h3>
      <pre className="secret">
        {json}
      </pre>
      <CopyButton text={json} label="Copy configuration" />
      <h3>Claude Code command</h3>
      <pre className="secret">
        {command}
      </pre>
      <CopyButton text={command} label="Copy command" />
      <p>
        <button type="button" className="primary" onClick={onDone}>
          I have copied it
        </button>
      </p>
    </section>
  );
}

function keyStatus(key: McpApiKey): string {
  if (key.revokedAt) return `Revoked ${formatTime(key.revokedAt)}`;
  if (new Date(key.expiresAt).getTime() <= Date.now()) return 'Expired';
  return 'Active';
}

function KeyTable({ keys, all, onRevoked }: { keys: McpApiKey[]; all: boolean; onRevoked: () => void }) {
  const { run, toast } = useDesigner();
  const [error, setError] = useState<string | null>(null);
  return (
    <section aria-labelledby="keys-list-title">
      <h2 id="keys-list-title">{all ? 'Every key of the application' : 'Your keys'}</h2>
      <ErrorText error={error} />
      {keys.length ? (
        <div className="scroll-x" role="region" aria-label="MCP keys" tabIndex={0}>
          <table className="grid">
            <thead>
              <tr>
                <th scope="col">Name</th>
                {all ? <th scope="col">Owner</th> : null}
                <th scope="col">Prefix</th>
                <th scope="col">Scopes</th>
                <th scope="col">Working scopes</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key._id}>
                  <td>{key.name}</td>
                  {all ? (
                    <td data-label="Owner" className="wide">
                      {key.userEmail ?? <span className="muted">{key.userId}</span>}
                    </td>
                  ) : null}
                  <td data-label="Prefix">
                    <code>{key.keyPrefix}…</code>
                  </td>
                  <td data-label="Scopes">{key.scopes.join(', ')}</td>
                  <td data-label="Working scopes">{key.effectiveScopes.length ? key.effectiveScopes.join(', ') : <span className="muted">None</span>}</td>
                  <td data-label="Expires">{formatTime(key.expiresAt)}</td>
                  <td data-label="Last used">{key.lastUsedAt ? formatTime(key.lastUsedAt) : <span className="muted">Never</span>}</td>
                  <td data-label="Status">{keyStatus(key)}</td>
                  <td>
                    {key.revokedAt ? null : (
                      <ConfirmButton
                        label="Revoke"
                        question={`Revoke ${key.name}? Clients using it stop working at once.`}
                        onConfirm={async () => {
                          setError(null);
                          try {
                            await run(REVOKE, { id: key._id });
                            toast(`${key.name} revoked`);
                            onRevoked();
                          } catch (failure) {
                            setError(`${key.name}: ${errorMessage(failure)}`);
                          }
                        }}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="muted">{all ? 'The application has no MCP keys yet.' : 'You have no MCP keys yet.'}</p>
      )}
    </section>
  );
}
