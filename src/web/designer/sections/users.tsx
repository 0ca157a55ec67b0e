// Users (admin only): who may sign in, with which role. Disabling a user ends their sessions at once.
import { useState, type FormEvent } from 'react';
import { errorMessage, fieldErrors, useDesigner, useLoad } from '../api.js';
import type { UsersQuery } from '../../graphql-operations.js';
import { ErrorText, Loading, SectionHeader, SelectField, TextField, formatTime } from '../components.js';

type User = UsersQuery['users'][number];
type Role = UsersQuery['roles'][number];

const USER_FIELDS = '_id email name roleId roleName isOwner disabled createdAt';
const LOAD = `query Users { users { ${USER_FIELDS} } roles { _id name } }`;
const CREATE = `mutation CreateUser($email: String!, $password: String!, $name: String, $role: String) {
  createUser(email: $email, password: $password, name: $name, role: $role) { _id }
}`;
const UPDATE = `mutation UpdateUser($id: ID!, $role: String, $disabled: Boolean) { updateUser(_id: $id, role: $role, disabled: $disabled) { _id } }`;

export default function UsersSection(_props: { id?: string }) {
  const { run } = useDesigner();
  const { data, error, loading, reload } = useLoad(() => run<UsersQuery>(LOAD), []);
  if (!data) return loading ? <Loading /> : <ErrorText error={error} onRetry={reload} />;
  return (
    <div className="stack">
      <SectionHeader title="Users" />
      <ErrorText error={error} onRetry={reload} />
      <UserTable users={data.users} roles={data.roles} onChanged={reload} />
      <CreateUserForm roles={data.roles} onCreated={reload} />
    </div>
  );
}

function UserTable({ users, roles, onChanged }: { users: User[]; roles: Role[]; onChanged: () => void }) {
  const { run, toast, me } = useDesigner();
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function update(user: User, change: { role?: string; disabled?: boolean }, done: string) {
    setBusy(user._id);
    setError(null);
    try {
      await run(UPDATE, { id: user._id, ...change });
      toast(done);
      onChanged();
    } catch (failure) {
      setError(`${user.email}: ${errorMessage(failure)}`);
    } finally {
      setBusy(null);
    }
  }

  const roleOptions = roles.map((role) => ({ value: role._id, label: role.name }));
  return (
    <section aria-labelledby="users-list-title">
      <h2 id="users-list-title">All users</h2>
      <ErrorText error={error} />
      <div className="scroll-x" role="region" aria-label="Users" tabIndex={0}>
        <table className="grid">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Owner</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {users.map((user) => {
              // Changing one's own role or disabling oneself would lock the page out from under the user.
              const self = user._id === me._id;
              return (
                <tr key={user._id}>
                  <td>
                    {user.email} {self ? <span className="muted">(you)</span> : null}
                  </td>
                  <td data-label="Name">{user.name || <span className="muted">—</span>}</td>
                  <td data-label="Role">
                    <label className="sr-only" htmlFor={`role-${user._id}`}>
                      Role of {user.email}
                    </label>
                    <select
                      id={`role-${user._id}`}
                      value={user.roleId}
                      disabled={self || busy === user._id}
                      onChange={(event) => {
                        const role = roles.find((r) => r._id === event.target.value);
                        void update(user, { role: event.target.value }, `${user.email} is now ${role?.name ?? 'changed'}`);
                      }}
                    >
                      {roleOptions.map((option) => (
                        <option key={option.value} value={option.value}>
                          {option.label}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td data-label="Owner">{user.isOwner ? 'Owner' : <span className="muted">—</span>}</td>
                  <td data-label="Status">{user.disabled ? <span className="pill">Disabled</span> : 'Active'}</td>
                  <td data-label="Created">{formatTime(user.createdAt)}</td>
                  <td className="wide">
                    <button
                      type="button"
                      disabled={self || busy === user._id}
                      aria-label={`${user.disabled ? 'Enable' : 'Disable'} ${user.email}`}
                      onClick={() => void update(user, { disabled: !user.disabled }, `${user.email} ${user.disabled ? 'enabled' : 'disabled'}`)}
                    >
                      {user.disabled ? 'Enable' : 'Disable'}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function CreateUserForm({ roles, onCreated }: { roles: Role[]; onCreated: () => void }) {
  const { run, toast } = useDesigner();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState(() => roles.find((r) => r.name === 'viewer')?._id ?? roles[0]?._id ?? '');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function create(event: FormEvent) {
    event.preventDefault();
    const local: Record<string, string> = {};
    if (!/^[^\s@]+@[^\s@]+$/.test(email.trim())) local.email = 'Enter an e-mail address.';
    if (!password) local.password = 'Enter a password.';
    setErrors(local);
    setError(null);
    if (Object.keys(local).length) return;
    setBusy(true);
    try {
      await run(CREATE, { email: email.trim(), password, name: name.trim() || null, role });
      toast(`User ${email.trim()} created`);
      setEmail('');
      setName('');
      setPassword('');
      onCreated();
    } catch (failure) {
      setErrors(fieldErrors(failure));
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="panel" onSubmit={create} aria-labelledby="create-user-title" noValidate>
      <h2 id="create-user-title">Create a user</h2>
      <div className="grid-2">
        <TextField label="Email" type="email" autoComplete="off" value={email} onChange={setEmail} error={errors.email} required />
        <TextField label="Name" value={name} onChange={setName} error={errors.name} />
        <TextField label="Password" type="password" autoComplete="new-password" value={password} onChange={setPassword} error={errors.password} required />
        <SelectField label="Role" value={role} onChange={setRole} options={roles.map((r) => ({ value: r._id, label: r.name }))} />
      </div>
      <ErrorText error={error} />
      <button type="submit" className="primary" disabled={busy}>
        Create user
      </button>
    </form>
  );
}
