// Roles: what each role may do, which features each role sees on the application page, and what
// each role may do with each table's records (set in a table's Access tab).
import { useId, useState, type FormEvent } from 'react';
import { errorMessage, fieldErrors, useDesigner, useLoad } from '../api.js';
import type { GrantMutation, RevokeMutation, RolesQuery } from '../../graphql-operations.js';
import { ConfirmButton, ErrorText, Loading, SectionHeader, TextField } from '../components.js';
import { accessSummary, isAdminRole, TABLE_ACCESS_SELECTION, TABLE_ACTIONS, type AccessLevel, type TableAccess } from '../data-access.js';
import { PERMISSION_MEANINGS, PERMISSIONS } from '../../../access/permission-list.js';

type Role = RolesQuery['roles'][number];
type Feature = RolesQuery['features'][number];
/** A table and every role's rules on it; a rule's filter (JSON in the schema) read as the object the server sends. */
type AccessTable = Omit<RolesQuery['tables'][number], 'access'> & { access: TableAccess[] };
/** What a feature grant did: who sees the feature now, the rules it set to ALL, and narrower rules it left. */
type FeatureGrant = GrantMutation['grantFeature'];
type DataGrant = FeatureGrant['granted'][number];

const LOAD = `query Roles { roles { _id name description permissions builtin } features { _id name roleIds } tables { _id name access { ${TABLE_ACCESS_SELECTION} } } }`;
const CREATE = `mutation CreateRole($name: String!, $description: String, $permissions: [Permission!]) {
  createRole(name: $name, description: $description, permissions: $permissions) { _id }
}`;
const UPDATE = `mutation UpdateRole($id: ID!, $permissions: [Permission!]) { updateRole(_id: $id, permissions: $permissions) { _id } }`;
const DELETE = `mutation DeleteRole($id: ID!) { deleteRole(_id: $id) }`;
const DATA_GRANT = 'roleId role table action level';
const GRANT = `mutation Grant($featureId: ID!, $roleIds: [ID!]!) {
  grantFeature(featureId: $featureId, roleIds: $roleIds) { roleIds granted { ${DATA_GRANT} } leftNarrower { ${DATA_GRANT} } }
}`;
const REVOKE = `mutation Revoke($featureId: ID!, $roleIds: [ID!]!) { revokeFeatureAccess(featureId: $featureId, roleIds: $roleIds) }`;

export default function RolesSection(_props: { id?: string }) {
  const { run, permissions, isAdmin } = useDesigner();
  const { data, error, loading, reload } = useLoad(() => run<Omit<RolesQuery, 'tables'> & { tables: AccessTable[] }>(LOAD), []);
  // The server lets roles:write holders change feature access, but creating, changing and
  // deleting roles needs the admin permission; offering those to others would only fail.
  const canGrant = permissions.has('roles:write');
  const canManage = canGrant && isAdmin;

  if (!data) return loading ? <Loading /> : <ErrorText error={error} onRetry={reload} />;
  return (
    <div className="stack">
      <SectionHeader title="Roles" />
      <ErrorText error={error} onRetry={reload} />
      {canGrant ? null : <p className="notice">You can see the roles; changing them or their feature access needs the roles:write permission.</p>}
      {canGrant && !canManage ? <p className="notice">Only admins can create, change or delete roles; you can change which features each role sees.</p> : null}
      <RoleTable roles={data.roles} canManage={canManage} onChanged={reload} />
      {canManage ? <CreateRoleForm onCreated={reload} /> : null}
      <FeatureAccess roles={data.roles} features={data.features} canGrant={canGrant} onDataAccessChanged={reload} />
      <DataAccess roles={data.roles} tables={data.tables} />
    </div>
  );
}

function RoleTable({ roles, canManage, onChanged }: { roles: Role[]; canManage: boolean; onChanged: () => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <section aria-labelledby="roles-list-title">
      <h2 id="roles-list-title">All roles</h2>
      <div className="scroll-x" role="region" aria-label="Roles" tabIndex={0}>
        <table className="grid">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Permissions</th>
              {canManage ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {roles.map((role) => (
              <tr key={role._id}>
                <td>
                  {role.name} {role.builtin ? <span className="pill">built-in</span> : null}
                </td>
                <td data-label="Description" className="wide">{role.description || <span className="muted">—</span>}</td>
                <td data-label="Permissions" className="wide">
                  {editing === role._id ? (
                    <EditPermissions
                      role={role}
                      onDone={() => {
                        setEditing(null);
                        onChanged();
                      }}
                      onCancel={() => setEditing(null)}
                    />
                  ) : (
                    <PermissionPills permissions={role.permissions} />
                  )}
                </td>
                {canManage ? (
                  <td className="wide">
                    {role.builtin ? (
                      <span className="muted">Built-in roles cannot be changed or deleted.</span>
                    ) : editing === role._id ? null : (
                      <RoleActions role={role} onEdit={() => setEditing(role._id)} onDeleted={onChanged} />
                    )}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <PermissionGlossary />
    </section>
  );
}

function PermissionPills({ permissions }: { permissions: string[] }) {
  if (!permissions.length) return <span className="muted">None</span>;
  return (
    <span className="row">
      {permissions.map((permission) => (
        <span key={permission} className="pill">
          {permission}
        </span>
      ))}
    </span>
  );
}

function RoleActions({ role, onEdit, onDeleted }: { role: Role; onEdit: () => void; onDeleted: () => void }) {
  const { run, toast } = useDesigner();
  const [error, setError] = useState<string | null>(null);
  return (
    <div>
      <div className="row">
        <button type="button" onClick={onEdit} aria-label={`Edit permissions of ${role.name}`}>
          Edit permissions
        </button>
        <ConfirmButton
          label="Delete"
          question={`Delete the role ${role.name}?`}
          onConfirm={async () => {
            setError(null);
            try {
              await run(DELETE, { id: role._id });
              toast(`Role ${role.name} deleted`);
              onDeleted();
            } catch (failure) {
              setError(errorMessage(failure));
            }
          }}
        />
      </div>
      <ErrorText error={error} />
    </div>
  );
}

/** Checkboxes of every permission, each described by what it allows; `legend` names the group for screen readers. */
function PermissionChecks({ legend, value, onChange }: { legend: string; value: ReadonlySet<string>; onChange: (next: Set<string>) => void }) {
  // The create form and an edit form can be on the page at once: each needs its own ids.
  const idPrefix = useId();
  return (
    <fieldset>
      <legend>{legend}</legend>
      {PERMISSIONS.map((permission) => {
        const descriptionId = `${idPrefix}-${permission.replace(':', '-')}`;
        return (
          <div key={permission} className="permission-check">
            <label className="check">
              <input
                type="checkbox"
                checked={value.has(permission)}
                aria-describedby={descriptionId}
                onChange={(event) => {
                  const next = new Set(value);
                  if (event.target.checked) next.add(permission);
                  else next.delete(permission);
                  onChange(next);
                }}
              />
              {permission}
            </label>
            <small id={descriptionId} className="muted">
              {PERMISSION_MEANINGS[permission]}
            </small>
          </div>
        );
      })}
    </fieldset>
  );
}

/** What each permission allows, for those who read the roles' bare permission codes without editing them. */
function PermissionGlossary() {
  return (
    <details>
      <summary>What each permission allows</summary>
      <dl className="permission-glossary">
        {PERMISSIONS.map((permission) => (
          <div key={permission}>
            <dt>{permission}</dt>
            <dd>{PERMISSION_MEANINGS[permission]}</dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

function EditPermissions({ role, onDone, onCancel }: { role: Role; onDone: () => void; onCancel: () => void }) {
  const { run, toast } = useDesigner();
  const [value, setValue] = useState<Set<string>>(() => new Set(role.permissions));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function save(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await run(UPDATE, { id: role._id, permissions: PERMISSIONS.filter((p) => value.has(p)) });
      toast(`Permissions of ${role.name} saved`);
      onDone();
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  }
  return (
    <form onSubmit={save} aria-label={`Permissions of ${role.name}`}>
      <PermissionChecks legend={`Permissions of ${role.name}`} value={value} onChange={setValue} />
      <ErrorText error={error} />
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          Save permissions
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function CreateRoleForm({ onCreated }: { onCreated: () => void }) {
  const { run, toast } = useDesigner();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [value, setValue] = useState<Set<string>>(() => new Set(['config:read']));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function create(event: FormEvent) {
    event.preventDefault();
    setError(null);
    if (!name.trim()) return setErrors({ name: 'Enter a name.' });
    setErrors({});
    setBusy(true);
    try {
      await run(CREATE, { name: name.trim(), description: description.trim(), permissions: PERMISSIONS.filter((p) => value.has(p)) });
      toast(`Role ${name.trim()} created`);
      setName('');
      setDescription('');
      setValue(new Set(['config:read']));
      onCreated();
    } catch (failure) {
      setErrors(fieldErrors(failure));
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form className="panel" onSubmit={create} aria-labelledby="create-role-title" noValidate>
      <h2 id="create-role-title">Create a role</h2>
      <div className="grid-2">
        <TextField label="Name" value={name} onChange={setName} error={errors.name} required />
        <TextField label="Description" value={description} onChange={setDescription} error={errors.description} />
      </div>
      <PermissionChecks legend="Permissions" value={value} onChange={setValue} />
      <ErrorText error={error} />
      <button type="submit" className="primary" disabled={busy}>
        Create role
      </button>
    </form>
  );
}

/**
 * Features × roles: a checkbox per pair grants or revokes that role's access at once. A grant also
 * gives the role what the feature's GraphQL documents need of the tables (D32); the feature's row
 * says what it granted and what it left narrower.
 */
function FeatureAccess({ roles, features, canGrant, onDataAccessChanged }: { roles: Role[]; features: Feature[]; canGrant: boolean; onDataAccessChanged: () => void }) {
  const { run } = useDesigner();
  // The roles of each feature as the server last answered, so a change shows without a reload.
  const [access, setAccess] = useState<Record<string, string[]>>(() => Object.fromEntries(features.map((f) => [f._id, f.roleIds])));
  // What the last change of each feature did, and whose box it was.
  const [changes, setChanges] = useState<Record<string, { roleId: string; message: string }>>({});
  const [pending, setPending] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const idPrefix = useId();

  async function toggle(feature: Feature, role: Role, grant: boolean) {
    const before = access[feature._id] ?? feature.roleIds;
    // The box follows the click at once; the server's answer (or a failure) then settles it.
    setAccess((current) => ({ ...current, [feature._id]: grant ? [...before, role._id] : before.filter((id) => id !== role._id) }));
    setChanges(({ [feature._id]: _previous, ...others }) => others);
    setPending(`${feature._id}/${role._id}`);
    setError(null);
    try {
      const variables = { featureId: feature._id, roleIds: [role._id] };
      if (grant) {
        const { grantFeature } = await run<GrantMutation>(GRANT, variables);
        setAccess((current) => ({ ...current, [feature._id]: grantFeature.roleIds }));
        setChanges((current) => ({ ...current, [feature._id]: { roleId: role._id, message: grantMessage(role, feature, grantFeature) } }));
        if (grantFeature.granted.length) onDataAccessChanged();
      } else {
        const { revokeFeatureAccess } = await run<RevokeMutation>(REVOKE, variables);
        setAccess((current) => ({ ...current, [feature._id]: revokeFeatureAccess }));
        setChanges((current) => ({ ...current, [feature._id]: { roleId: role._id, message: `${role.name} no longer sees ${feature.name}; its data access stays as it was.` } }));
      }
    } catch (failure) {
      setAccess((current) => ({ ...current, [feature._id]: before }));
      setError(`${feature.name} / ${role.name}: ${errorMessage(failure)}`);
    } finally {
      setPending(null);
    }
  }

  return (
    <section aria-labelledby="feature-access-title">
      <h2 id="feature-access-title">Feature access</h2>
      <p className="muted">
        Which roles see each feature on the application page. Granting a feature also lets the role read and write the records the feature&apos;s queries
        need, where the role had no access; narrower rules stay as they are.
      </p>
      <ErrorText error={error} />
      {features.length ? (
        <div className="scroll-x" role="region" aria-label="Feature access by role" tabIndex={0}>
          <table className="grid">
            <thead>
              <tr>
                <th scope="col">Feature</th>
                {roles.map((role) => (
                  <th key={role._id} scope="col">
                    {role.name}
                  </th>
                ))}
                <th scope="col">Last change</th>
              </tr>
            </thead>
            <tbody>
              {features.map((feature, index) => {
                const change = changes[feature._id];
                const changeId = `${idPrefix}-change-${index}`;
                return (
                  <tr key={feature._id}>
                    <th scope="row">{feature.name}</th>
                    {roles.map((role) => (
                      <td key={role._id} data-label={role.name}>
                        <input
                          type="checkbox"
                          aria-label={`${role.name} sees ${feature.name}`}
                          aria-describedby={change?.roleId === role._id ? changeId : undefined}
                          checked={(access[feature._id] ?? feature.roleIds).includes(role._id)}
                          disabled={!canGrant || pending === `${feature._id}/${role._id}`}
                          onChange={(event) => void toggle(feature, role, event.target.checked)}
                        />
                      </td>
                    ))}
                    <td className="wide">
                      {/* Always present, so that screen readers announce each new message. */}
                      <span id={changeId} role="status">
                        {change?.message}
                      </span>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="muted">No features yet.</p>
      )}
    </section>
  );
}

const NARROWER_LEVEL_WORDS: Record<AccessLevel, string> = { NONE: 'no records', OWN: 'own records', FILTER: 'records its filter matches', ALL: 'every record' };

/** "a", "a and b", "a, b and c". */
function wordList(words: string[]): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/** "read and create on Orders; read on Customers": each table's entries in the order of the actions. */
function onTables(grants: DataGrant[], describe: (grant: DataGrant) => string): string {
  const tables = [...new Set(grants.map((grant) => grant.table))];
  return tables
    .map((table) => {
      const entries = grants.filter((grant) => grant.table === table).sort((a, b) => TABLE_ACTIONS.indexOf(a.action) - TABLE_ACTIONS.indexOf(b.action));
      return `${wordList(entries.map(describe))} on ${table}`;
    })
    .join('; ');
}

/**
 * What granting a feature to a role did to the role's data access, e.g. "Granted clerk: read and
 * create on Orders. Left narrower: read (own records) on Orders."
 */
function grantMessage(role: Role, feature: Feature, grant: FeatureGrant): string {
  const granted = grant.granted.filter((entry) => entry.roleId === role._id);
  const narrower = grant.leftNarrower.filter((entry) => entry.roleId === role._id);
  const sentences = [granted.length ? `Granted ${role.name}: ${onTables(granted, (entry) => entry.action)}.` : `${role.name} sees ${feature.name}.`];
  if (narrower.length) sentences.push(`Left narrower: ${onTables(narrower, (entry) => `${entry.action} (${NARROWER_LEVEL_WORDS[entry.level]})`)}.`);
  else if (!granted.length) sentences.push("Its data access already covers the feature's queries.");
  return sentences.join(' ');
}

/** Each role's access to each table's records, one line per table, linked to the table's Access tab. */
function DataAccess({ roles, tables }: { roles: Role[]; tables: AccessTable[] }) {
  return (
    <section aria-labelledby="data-access-title">
      <h2 id="data-access-title">Data access</h2>
      <p className="muted">What each role may do with each table&apos;s records; a table&apos;s Access tab changes it.</p>
      {tables.length ? (
        <div className="scroll-x" role="region" aria-label="Data access by role" tabIndex={0}>
          <table className="grid">
            <thead>
              <tr>
                <th scope="col">Role</th>
                <th scope="col">Records it may read, create, update and delete</th>
              </tr>
            </thead>
            <tbody>
              {roles.map((role) => (
                <tr key={role._id}>
                  <th scope="row">{role.name}</th>
                  <td data-label="Records it may read, create, update and delete" className="wide">{isAdminRole(role) ? 'Every record of every table (admin)' : <RoleTables role={role} tables={tables} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="muted">No tables yet.</p>
      )}
    </section>
  );
}

function RoleTables({ role, tables }: { role: Role; tables: AccessTable[] }) {
  return (
    <ul className="access-summary" aria-label={`Data access of ${role.name}`}>
      {tables.map((table) => {
        const access = table.access.find((entry) => entry.roleId === role._id);
        return (
          <li key={table._id}>
            <a href={`#/tables/${encodeURIComponent(table._id)}/access`}>{table.name}</a>: {access ? accessSummary(access) : 'no access'}
          </li>
        );
      })}
    </ul>
  );
}
