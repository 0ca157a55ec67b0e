// Environment: the variables hooks read. Values are write-only: no API returns them, and this page
// forgets a value as soon as it is saved.
import { useRef, useState, type FormEvent } from 'react';
import { errorMessage, fieldErrors, useDesigner, useLoad } from '../api.js';
import type { EnvironmentVariablesQuery, SetEnvironmentVariableMutation } from '../../graphql-operations.js';
import { ConfirmButton, ErrorText, Loading, SectionHeader, TextField, formatTime } from '../components.js';

type EnvironmentVariable = EnvironmentVariablesQuery['environmentVariables'][number];

const LOAD = `query EnvironmentVariables { environmentVariables { _id name createdAt updatedAt } }`;
const SET = `mutation SetEnvironmentVariable($name: String!, $value: String!) { setEnvironmentVariable(name: $name, value: $value) { name created } }`;
const DELETE = `mutation DeleteEnvironmentVariable($name: String!) { deleteEnvironmentVariable(name: $name, confirm: true) }`;

/** The server's rule for names (src/envvars/schema.ts), checked here to answer at once. */
const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export default function EnvironmentSection(_props: { id?: string }) {
  const { run, permissions } = useDesigner();
  const { data, error, loading, reload } = useLoad(() => run<EnvironmentVariablesQuery>(LOAD), []);
  const canWrite = permissions.has('env:write');
  const [name, setName] = useState('');
  const valueInput = useRef<HTMLInputElement>(null);

  if (!data) return loading ? <Loading /> : <ErrorText error={error} onRetry={reload} />;
  return (
    <div className="stack">
      <SectionHeader title="Environment" />
      <p className="muted">Hooks read these variables. A value is write-only: once saved it is never shown again, here or anywhere.</p>
      <ErrorText error={error} onRetry={reload} />
      {canWrite ? null : <p className="notice">You can see the names only: setting or deleting a variable needs the env:write permission.</p>}
      <VariableTable
        variables={data.environmentVariables}
        canWrite={canWrite}
        onReplace={(variable) => {
          setName(variable);
          valueInput.current?.focus();
        }}
        onDeleted={reload}
      />
      {canWrite ? <SetVariableForm name={name} onName={setName} valueInput={valueInput} onSaved={reload} /> : null}
    </div>
  );
}

function VariableTable({ variables, canWrite, onReplace, onDeleted }: { variables: EnvironmentVariable[]; canWrite: boolean; onReplace: (name: string) => void; onDeleted: () => void }) {
  const { run, toast } = useDesigner();
  const [error, setError] = useState<string | null>(null);
  if (!variables.length) return <p className="muted">No variables yet.</p>;
  return (
    <section aria-labelledby="env-list-title">
      <h2 id="env-list-title">Variables</h2>
      <ErrorText error={error} />
      <div className="scroll-x" role="region" aria-label="Environment variables" tabIndex={0}>
        <table className="grid">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              <th scope="col">Updated</th>
              {canWrite ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {variables.map((variable) => (
              <tr key={variable._id}>
                <td>
                  <code>{variable.name}</code>
                </td>
                <td data-label="Created">{formatTime(variable.createdAt)}</td>
                <td data-label="Updated">{formatTime(variable.updatedAt)}</td>
                {canWrite ? (
                  <td className="wide">
                    <div className="row">
                      <button type="button" onClick={() => onReplace(variable.name)} aria-label={`New value for ${variable.name}`}>
                        New value
                      </button>
                      <ConfirmButton
                        label="Delete"
                        question={`Delete ${variable.name}? Hooks that read it get undefined.`}
                        onConfirm={async () => {
                          setError(null);
                          try {
                            await run(DELETE, { name: variable.name });
                            toast(`${variable.name} deleted`);
                            onDeleted();
                          } catch (failure) {
                            setError(`${variable.name}: ${errorMessage(failure)}`);
                          }
                        }}
                      />
                    </div>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function SetVariableForm({ name, onName, valueInput, onSaved }: { name: string; onName: (name: string) => void; valueInput: React.RefObject<HTMLInputElement | null>; onSaved: () => void }) {
  const { run, toast } = useDesigner();
  const [value, setValue] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function save(event: FormEvent) {
    event.preventDefault();
    const trimmed = name.trim();
    if (!NAME_PATTERN.test(trimmed)) {
      setErrors({ name: 'Start with a letter or _ and use only letters, digits and _ (at most 128).' });
      return;
    }
    setErrors({});
    setError(null);
    setBusy(true);
    try {
      const { setEnvironmentVariable } = await run<SetEnvironmentVariableMutation>(SET, { name: trimmed, value });
      // The value leaves the page's state at once: it is never shown or kept once saved.
      setValue('');
      onName('');
      toast(`${setEnvironmentVariable.name} ${setEnvironmentVariable.created ? 'created' : 'updated'}`);
      onSaved();
    } catch (failure) {
      setErrors(fieldErrors(failure));
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="panel" onSubmit={save} aria-labelledby="env-form-title" noValidate>
      <h2 id="env-form-title">Set a variable</h2>
      <p className="muted">Setting an existing name replaces its value.</p>
      <div className="grid-2">
        <TextField label="Name" value={name} onChange={onName} error={errors.name} autoComplete="off" spellCheck={false} required />
        <label className="field">
          <span>Value</span>
          {/* A password input: the value is not shown on screen while typed, nor offered by autofill. */}
          <input ref={valueInput} type="password" value={value} onChange={(event) => setValue(event.target.value)} autoComplete="new-password" aria-describedby="env-value-hint" aria-invalid={errors.value ? true : undefined} />
          <small id="env-value-hint" className="muted">
            Write-only: it will not be shown again.
          </small>
          {errors.value ? <small className="error">{errors.value}</small> : null}
        </label>
      </div>
      <ErrorText error={error} />
      <button type="submit" className="primary" disabled={busy}>
        Save variable
      </button>
    </form>
  );
}
