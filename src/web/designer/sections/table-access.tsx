// A table's Access tab: each role's level per action (read, create, update, delete), a filter for
// the FILTER level (checked as it is typed, and by the server on save), and the fields hidden from
// or read-only for the role. Saving sends setTableAccess for each changed role; admin roles always
// reach every record and are shown, not edited.
import { useId, useState, type FormEvent } from 'react';
import { GraphQLRequestError } from '../../shared/graphql.js';
import { errorMessage, useDesigner, useLoad } from '../api.js';
import type { SetTableAccessMutation, TableAccessQuery } from '../../graphql-operations.js';
import { ErrorText, Loading } from '../components.js';
import { ACCESS_LEVELS, ACTION_LABELS, LEVEL_LABELS, TABLE_ACCESS_SELECTION, TABLE_ACTIONS, isAdminRole, type AccessLevel, type TableAccess, type TableAction } from '../data-access.js';

type Role = TableAccessQuery['roles'][number];

interface AccessTable {
  _id: string;
  name: string;
  fields: { _id: string; name: string }[];
}

/** A role's rules as the form holds them: the filters as typed, kept when the level changes. */
interface Draft {
  levels: Record<TableAction, AccessLevel>;
  filters: Record<TableAction, string>;
  hiddenFields: string[];
  readOnlyFields: string[];
}

/** Where a message about a role's rules belongs: beside an action's filter, a field list, or the role. */
type ErrorPlace = TableAction | 'hiddenFields' | 'readOnlyFields' | 'role';
type RoleErrors = Partial<Record<ErrorPlace, string>>;

const LOAD = `query TableAccess($id: ID!) { table(_id: $id) { _id access { ${TABLE_ACCESS_SELECTION} } } roles { _id name permissions } }`;
const SAVE = `mutation SetTableAccess($tableId: ID!, $roleId: ID!, $access: TableAccessInput!) {
  setTableAccess(tableId: $tableId, roleId: $roleId, access: $access) { ${TABLE_ACCESS_SELECTION} }
}`;

/** Names a filter may use besides the table's fields: the system fields and the groups. */
const FILTER_NAMES = ['_id', '_createdAt', '_updatedAt', '_createdBy', '_updatedBy', '_and', '_or'];
const FILTER_EXAMPLE = '{"_createdBy":{"eq":"$user._id"}}';

function draftOf(access: TableAccess): Draft {
  const pick = <T,>(value: (action: TableAction) => T) => Object.fromEntries(TABLE_ACTIONS.map((action) => [action, value(action)])) as Record<TableAction, T>;
  return {
    levels: pick((action) => access[action].level),
    filters: pick((action) => (access[action].filter ? JSON.stringify(access[action].filter) : '')),
    hiddenFields: access.hiddenFields,
    readOnlyFields: access.readOnlyFields,
  };
}

/**
 * What is wrong with a filter as typed, checked here before the server sees it: JSON syntax, an
 * object with conditions, and top-level names that are fields (or _and/_or/system fields).
 */
function filterProblem(text: string, fieldNames: readonly string[]): string | null {
  if (!text.trim()) return `Enter a filter, e.g. ${FILTER_EXAMPLE}`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `Not valid JSON: ${(error as Error).message}`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'The filter must be a JSON object, e.g. {"region":{"eq":"EU"}}';
  const names = Object.keys(value);
  if (!names.length) return 'The filter has no condition: it would match every record (choose All instead).';
  const unknown = names.find((name) => !fieldNames.includes(name) && !FILTER_NAMES.includes(name));
  return unknown ? `'${unknown}' is not a field of this table` : null;
}

/** The setTableAccess input of a draft; null when a filter does not parse (filterProblem says why). */
function accessInput(draft: Draft): Record<string, unknown> | null {
  const input: Record<string, unknown> = { hiddenFields: draft.hiddenFields, readOnlyFields: draft.readOnlyFields };
  for (const action of TABLE_ACTIONS) {
    const level = draft.levels[action];
    if (level !== 'FILTER') {
      input[action] = { level };
      continue;
    }
    try {
      input[action] = { level, filter: JSON.parse(draft.filters[action]) };
    } catch {
      return null;
    }
  }
  return input;
}

/** Whether a draft says something else than the stored rules (filters compared as values, lists as sets). */
function changed(draft: Draft, saved: Draft): boolean {
  const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((name) => b.includes(name));
  if (!sameList(draft.hiddenFields, saved.hiddenFields) || !sameList(draft.readOnlyFields, saved.readOnlyFields)) return true;
  return TABLE_ACTIONS.some((action) => {
    if (draft.levels[action] !== saved.levels[action]) return true;
    if (draft.levels[action] !== 'FILTER') return false;
    try {
      return JSON.stringify(JSON.parse(draft.filters[action])) !== saved.filters[action];
    } catch {
      return true;
    }
  });
}

/** A refusal's issues: each of `details.issues`, or the one `details.field` names (its message without the path). */
function refusalIssues(failure: unknown): { field: string; message: string }[] {
  if (!(failure instanceof GraphQLRequestError)) return [];
  return failure.errors.flatMap((error) => {
    const details = error.extensions?.details;
    if (Array.isArray(details?.issues)) return (details.issues as { field?: unknown; message?: unknown }[]).filter((issue): issue is { field: string; message: string } => typeof issue.field === 'string' && typeof issue.message === 'string');
    if (typeof details?.field !== 'string') return [];
    const prefix = `${details.field}: `;
    return [{ field: details.field, message: error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message }];
  });
}

/** A server refusal, placed by its field path (`access.0.read.filter.amount.gte` or `access.read.filter`). */
function placeErrors(failure: unknown): RoleErrors {
  const placed: RoleErrors = {};
  for (const { field, message } of refusalIssues(failure)) {
    const match = /^access\.(?:\d+\.)?(read|create|update|delete|hiddenFields|readOnlyFields)(?:\.filter)?\.?(.*)$/.exec(field);
    if (!match) continue;
    const place = match[1] as ErrorPlace;
    placed[place] ??= match[2] && TABLE_ACTIONS.includes(place as TableAction) ? `${match[2]}: ${message}` : message;
  }
  if (!Object.keys(placed).length) placed.role = errorMessage(failure);
  return placed;
}

export function TableAccessTab({ table }: { table: AccessTable }) {
  const { run } = useDesigner();
  const { data, error, reload } = useLoad(() => run<Omit<TableAccessQuery, 'table'> & { table: { access: TableAccess[] } | null }>(LOAD, { id: table._id }), [table._id]);
  if (!data) return error ? <ErrorText error={error} onRetry={reload} /> : <Loading />;
  if (!data.table) return <ErrorText error={`The table '${table.name}' no longer exists.`} />;
  return <AccessForm table={table} access={data.table.access} adminRoles={data.roles.filter(isAdminRole)} />;
}

/** The form keeps the server's answer to each save as the stored rules: no reload, the focus stays. */
function AccessForm({ table, access, adminRoles }: { table: AccessTable; access: TableAccess[]; adminRoles: Role[] }) {
  const { run, toast, permissions } = useDesigner();
  const canWrite = permissions.has('roles:write');
  const fieldNames = table.fields.map((field) => field.name);
  const [saved, setSaved] = useState<Record<string, Draft>>(() => Object.fromEntries(access.map((entry) => [entry.roleId, draftOf(entry)])));
  const [drafts, setDrafts] = useState<Record<string, Draft>>(saved);
  const [errors, setErrors] = useState<Record<string, RoleErrors>>({});
  const [busy, setBusy] = useState(false);

  const localErrors = (roleId: string): RoleErrors => {
    const draft = drafts[roleId]!;
    const found: RoleErrors = {};
    for (const action of TABLE_ACTIONS) {
      const problem = draft.levels[action] === 'FILTER' ? filterProblem(draft.filters[action], fieldNames) : null;
      if (problem) found[action] = problem;
    }
    return found;
  };
  const changedRoles = access.filter((entry) => changed(drafts[entry.roleId]!, saved[entry.roleId]!));
  const update = (roleId: string, change: (draft: Draft) => Draft) => {
    setDrafts((current) => ({ ...current, [roleId]: change(current[roleId]!) }));
    setErrors((current) => ({ ...current, [roleId]: {} }));
  };

  async function save(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    const next: Record<string, RoleErrors> = {};
    for (const entry of changedRoles) {
      const local = localErrors(entry.roleId);
      const input = accessInput(drafts[entry.roleId]!);
      if (Object.keys(local).length || !input) {
        next[entry.roleId] = { ...local, role: 'Correct the marked filters first.' };
        continue;
      }
      try {
        const { setTableAccess } = await run<Omit<SetTableAccessMutation, 'setTableAccess'> & { setTableAccess: TableAccess }>(SAVE, { tableId: table._id, roleId: entry.roleId, access: input });
        const stored = draftOf(setTableAccess);
        setSaved((current) => ({ ...current, [entry.roleId]: stored }));
        setDrafts((current) => ({ ...current, [entry.roleId]: stored }));
        toast(`Access of ${entry.roleName} to ${table.name} saved`);
      } catch (failure) {
        next[entry.roleId] = placeErrors(failure);
      }
    }
    setErrors(next);
    setBusy(false);
  }

  return (
    <form className="stack" onSubmit={save} aria-labelledby="access-title" noValidate>
      <div>
        <h3 id="access-title">Access to the records of {table.name}</h3>
        <p className="muted">
          What each role may do with the records: none, the records its users created (own), those a filter matches, or all. Update and delete reach only records the role can also read.
          Admins always reach every record.
        </p>
        {canWrite ? null : <p className="notice">Changing data access needs the roles:write permission.</p>}
      </div>
      <div className="scroll-x" role="region" aria-label="Access by role and action" tabIndex={0}>
        <table className="grid access-matrix">
          <caption className="sr-only">Access of each role to the records of {table.name}, by action</caption>
          <thead>
            <tr>
              <th scope="col">Role</th>
              {TABLE_ACTIONS.map((action) => (
                <th key={action} scope="col">
                  {ACTION_LABELS[action]}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {adminRoles.map((role) => (
              <tr key={role._id}>
                <th scope="row">{role.name}</th>
                {TABLE_ACTIONS.map((action) => (
                  <td key={action} data-label={ACTION_LABELS[action]}>
                    All (admin)
                  </td>
                ))}
              </tr>
            ))}
            {access.map((entry) => (
              <RoleRow
                key={entry.roleId}
                roleName={entry.roleName}
                draft={drafts[entry.roleId]!}
                errors={{ ...localErrors(entry.roleId), ...errors[entry.roleId] }}
                disabled={!canWrite}
                onChange={(change) => update(entry.roleId, change)}
              />
            ))}
          </tbody>
        </table>
      </div>
      {access.length ? null : <p className="muted">There is no role besides the admin roles yet.</p>}
      <p className="muted">
        A filter is written like the filter argument of the table&apos;s list operation; <code>$user._id</code>, <code>$user.email</code> and <code>$user.role</code> stand for the signed-in user, e.g.{' '}
        <code>{FILTER_EXAMPLE}</code>.
      </p>
      {access.map((entry) => (
        <FieldLists key={entry.roleId} roleName={entry.roleName} fieldNames={fieldNames} draft={drafts[entry.roleId]!} errors={errors[entry.roleId] ?? {}} disabled={!canWrite} onChange={(change) => update(entry.roleId, change)} />
      ))}
      {access.map((entry) => (errors[entry.roleId]?.role ? <ErrorText key={entry.roleId} error={`${entry.roleName}: ${errors[entry.roleId]!.role}`} /> : null))}
      {canWrite ? (
        <div className="row">
          <button type="submit" className="primary" disabled={busy || !changedRoles.length}>
            Save access
          </button>
          <button
            type="button"
            disabled={busy || !changedRoles.length}
            onClick={() => {
              setDrafts(saved);
              setErrors({});
            }}
          >
            Discard changes
          </button>
          <span className="muted" role="status">
            {changedRoles.length ? `Changed: ${changedRoles.map((entry) => entry.roleName).join(', ')}` : 'No unsaved changes'}
          </span>
        </div>
      ) : null}
    </form>
  );
}

function RoleRow({ roleName, draft, errors, disabled, onChange }: { roleName: string; draft: Draft; errors: RoleErrors; disabled: boolean; onChange: (change: (draft: Draft) => Draft) => void }) {
  return (
    <tr>
      <th scope="row">{roleName}</th>
      {TABLE_ACTIONS.map((action) => (
        <td key={action} data-label={ACTION_LABELS[action]}>
          <select
            aria-label={`${ACTION_LABELS[action]} access of ${roleName}`}
            value={draft.levels[action]}
            disabled={disabled}
            onChange={(event) => {
              const level = event.target.value as AccessLevel;
              onChange((current) => ({ ...current, levels: { ...current.levels, [action]: level } }));
            }}
          >
            {ACCESS_LEVELS.map((level) => (
              <option key={level} value={level}>
                {LEVEL_LABELS[level]}
              </option>
            ))}
          </select>
          {draft.levels[action] === 'FILTER' ? (
            <FilterEditor
              label={`${ACTION_LABELS[action]} filter of ${roleName}`}
              value={draft.filters[action]}
              error={errors[action]}
              disabled={disabled}
              onChange={(text) => onChange((current) => ({ ...current, filters: { ...current.filters, [action]: text } }))}
            />
          ) : null}
        </td>
      ))}
    </tr>
  );
}

function FilterEditor({ label, value, error, disabled, onChange }: { label: string; value: string; error: string | undefined; disabled: boolean; onChange: (text: string) => void }) {
  const id = useId();
  return (
    <div className="filter-editor">
      <textarea
        aria-label={label}
        value={value}
        rows={3}
        spellCheck={false}
        placeholder={FILTER_EXAMPLE}
        disabled={disabled}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? id : undefined}
        onChange={(event) => onChange(event.target.value)}
      />
      {error ? (
        <small id={id} className="error">
          {error}
        </small>
      ) : null}
    </div>
  );
}

function FieldLists({ roleName, fieldNames, draft, errors, disabled, onChange }: { roleName: string; fieldNames: string[]; draft: Draft; errors: RoleErrors; disabled: boolean; onChange: (change: (draft: Draft) => Draft) => void }) {
  const lists = [
    { key: 'hiddenFields', legend: `Hidden fields of ${roleName}`, hint: 'Read as empty; not usable in filters or sorts.' },
    { key: 'readOnlyFields', legend: `Read-only fields of ${roleName}`, hint: 'Refused in created and changed records.' },
  ] as const;
  return (
    <div className="grid-2">
      {lists.map((list) => (
        <fieldset key={list.key} disabled={disabled}>
          <legend>{list.legend}</legend>
          <p className="muted hint">{list.hint}</p>
          {fieldNames.length ? (
            fieldNames.map((name) => (
              <label key={name} className="check">
                <input
                  type="checkbox"
                  checked={draft[list.key].includes(name)}
                  onChange={(event) => {
                    const checked = event.target.checked;
                    onChange((current) => ({ ...current, [list.key]: checked ? [...current[list.key], name] : current[list.key].filter((other) => other !== name) }));
                  }}
                />
                {name}
              </label>
            ))
          ) : (
            <p className="muted">The table has no field yet.</p>
          )}
          <ErrorText error={errors[list.key]} />
        </fieldset>
      ))}
    </div>
  );
}
