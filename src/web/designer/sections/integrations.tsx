// Integrations > API Keys (admin only): client credentials that external systems exchange at
// POST /api/auth/token for an access token to the application's generated operations. A key acts
// with a role's data access, or, without one, reaches every record of every table.
import { useState, type FormEvent } from 'react';
import { errorMessage, fieldErrors, useDesigner, useLoad } from '../api.js';
import type { CreateIntegrationKeyMutation, IntegrationKeysQuery } from '../../graphql-operations.js';
import { ConfirmButton, ErrorText, Loading, SectionHeader, SelectField, ShownOnce, TextField, formatTime } from '../components.js';

type IntegrationKey = IntegrationKeysQuery['integrationKeys'][number];
type Role = IntegrationKeysQuery['roles'][number];

interface Created {
  name: string;
  clientId: string;
  apiKey: string;
}

const LOAD = `query IntegrationKeys { integrationKeys { _id name clientId roleId createdAt } roles { _id name } }`;
const CREATE = `mutation CreateIntegrationKey($name: String!, $roleId: ID) { createIntegrationKey(name: $name, roleId: $roleId) { clientId apiKey integration { name } } }`;
const FULL_ACCESS = 'Full data access (every record of every table)';
const DELETE = `mutation DeleteIntegrationKey($clientId: String!) { deleteIntegrationKey(clientId: $clientId) }`;

export default function IntegrationsSection(_props: { id?: string }) {
  const { run } = useDesigner();
  const { data, error, loading, reload } = useLoad(() => run<IntegrationKeysQuery>(LOAD), []);
  // The new secret lives only in this state: gone when dismissed or when the page is left.
  const [created, setCreated] = useState<Created | null>(null);

  return (
    <div className="stack">
      <SectionHeader title="Integrations" />
      <section className="stack" aria-labelledby="api-keys-title">
        <h2 id="api-keys-title">API Keys</h2>
        <p className="muted">
          An external system exchanges its client ID and API key at <code>POST /api/auth/token</code> for an access token to the application&apos;s data.
        </p>
        {created ? (
          <CreatedKey created={created} onDone={() => setCreated(null)} />
        ) : (
          <CreateKeyForm
            roles={data?.roles ?? []}
            onCreated={(next) => {
              setCreated(next);
              reload();
            }}
          />
        )}
        <ErrorText error={error} onRetry={reload} />
        {data ? <KeyTable keys={data.integrationKeys} roles={data.roles} onDeleted={reload} /> : loading ? <Loading /> : null}
      </section>
    </div>
  );
}

function CreateKeyForm({ roles, onCreated }: { roles: Role[]; onCreated: (created: Created) => void }) {
  const { run } = useDesigner();
  const [name, setName] = useState('');
  const [roleId, setRoleId] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function create(event: FormEvent) {
    event.preventDefault();
    if (!name.trim()) return setErrors({ name: 'Enter a name.' });
    setErrors({});
    setError(null);
    setBusy(true);
    try {
      const { createIntegrationKey } = await run<CreateIntegrationKeyMutation>(CREATE, { name: name.trim(), roleId: roleId || null });
      setName('');
      setRoleId('');
      onCreated({ name: createIntegrationKey.integration.name, clientId: createIntegrationKey.clientId, apiKey: createIntegrationKey.apiKey });
    } catch (failure) {
      setErrors(fieldErrors(failure));
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form className="panel" onSubmit={create} aria-labelledby="create-integration-title" noValidate>
      <h3 id="create-integration-title">Create an API key</h3>
      <TextField label="Name" value={name} onChange={setName} error={errors.name} hint="Which system uses it, e.g. Billing." required />
      <SelectField
        label="Role (optional)"
        value={roleId}
        onChange={setRoleId}
        aria-describedby="integration-role-hint"
        options={[{ value: '', label: 'No role: full data access' }, ...roles.map((role) => ({ value: role._id, label: role.name }))]}
      />
      <p id="integration-role-hint" className="muted hint">
        The key reads and writes records with the role&apos;s data access (a table&apos;s Access tab). Without a role it reaches every record of every table.
      </p>
      <ErrorText error={errors.roleId} />
      <ErrorText error={error} />
      <button type="submit" className="primary" disabled={busy}>
        Create API key
      </button>
    </form>
  );
}

function CreatedKey({ created, onDone }: { created: Created; onDone: () => void }) {
  return (
    <section className="panel" aria-labelledby="created-integration-title">
      <h3 id="created-integration-title">API key {created.name} created</h3>
      <p className="notice">Copy the API key now: it will not be shown again.</p>
      <ShownOnce label="Client ID" value={created.clientId} />
      <ShownOnce label="API key" value={created.apiKey} />
      <button type="button" className="primary" onClick={onDone}>
        I have copied it
      </button>
    </section>
  );
}

function KeyTable({ keys, roles, onDeleted }: { keys: IntegrationKey[]; roles: Role[]; onDeleted: () => void }) {
  const { run, toast } = useDesigner();
  const [error, setError] = useState<string | null>(null);
  if (!keys.length) return <p className="muted">No API keys yet.</p>;
  return (
    <div>
      <ErrorText error={error} />
      <div className="scroll-x" role="region" aria-label="Integration keys" tabIndex={0}>
        <table className="grid">
          <caption className="sr-only">Integration API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Client ID</th>
              <th scope="col">Data access</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key._id}>
                <td>{key.name}</td>
                <td data-label="Client ID" className="wide">
                  <code>{key.clientId}</code>
                </td>
                <td data-label="Data access" className="wide">
                  {key.roleId ? (
                    `Role ${roles.find((role) => role._id === key.roleId)?.name ?? key.roleId}`
                  ) : (
                    <span className="pill warning">{FULL_ACCESS}</span>
                  )}
                </td>
                <td data-label="Created">{formatTime(key.createdAt)}</td>
                <td>
                  <ConfirmButton
                    label="Delete"
                    question={`Delete ${key.name}? Its access tokens stop working at once.`}
                    onConfirm={async () => {
                      setError(null);
                      try {
                        await run(DELETE, { clientId: key.clientId });
                        toast(`API key ${key.name} deleted`);
                        onDeleted();
                      } catch (failure) {
                        setError(`${key.name}: ${errorMessage(failure)}`);
                      }
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
