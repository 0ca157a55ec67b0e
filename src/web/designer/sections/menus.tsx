// Menus: the navigation of the application page. Each entry is a label and a feature; the server
// stores the feature as the path /feature/<feature_id>.
import { useState, type FormEvent } from 'react';
import { errorMessage, fieldErrors, useDesigner, useLoad } from '../api.js';
import type { MenusQuery, UpsertMenuMutation } from '../../graphql-operations.js';
import { ConfirmButton, ErrorText, Loading, SectionHeader, SelectField, TextField } from '../components.js';

type Menu = MenusQuery['menus'][number];
type Feature = MenusQuery['features'][number];

/** An entry being edited; `key` keeps React's identity of a row stable while rows move. */
interface DraftEntry {
  key: number;
  label: string;
  featureId: string;
}

interface Draft {
  /** Set when editing a stored menu. */
  _id?: string;
  name: string;
  position: string;
  entries: DraftEntry[];
}

const LOAD = `query Menus { menus { _id name position entries { label path } } features { _id name } }`;
const UPSERT = `mutation UpsertMenu($name: String!, $entries: [MenuEntryInput!]!, $position: Int) {
  upsertMenu(name: $name, entries: $entries, position: $position) { created menu { _id } }
}`;
const DELETE = `mutation DeleteMenu($id: ID!) { deleteMenu(_id: $id, confirm: true) }`;

const PATH_PREFIX = '/feature/';

let nextKey = 1;

function toDraft(menu?: Menu): Draft {
  if (!menu) return { name: '', position: '0', entries: [] };
  return {
    _id: menu._id,
    name: menu.name,
    position: String(menu.position),
    entries: menu.entries.map((entry) => ({ key: nextKey++, label: entry.label, featureId: featureIdOf(entry.path) })),
  };
}

function featureIdOf(path: string): string {
  return path.startsWith(PATH_PREFIX) ? path.slice(PATH_PREFIX.length) : path;
}

export default function MenusSection(_props: { id?: string }) {
  const { run, permissions } = useDesigner();
  const { data, error, loading, reload } = useLoad(() => run<MenusQuery>(LOAD), []);
  const [draft, setDraft] = useState<Draft | null>(null);
  const canWrite = permissions.has('menus:write');

  if (!data) return loading ? <Loading /> : <ErrorText error={error} onRetry={reload} />;
  return (
    <div className="stack">
      <SectionHeader title="Menus">
        {canWrite ? (
          <button type="button" className="primary" onClick={() => setDraft(toDraft())}>
            New menu
          </button>
        ) : null}
      </SectionHeader>
      <ErrorText error={error} onRetry={reload} />
      {canWrite ? null : <p className="notice">You can see the menus; changing them needs the menus:write permission.</p>}
      <MenuTable menus={data.menus} features={data.features} canWrite={canWrite} onEdit={(menu) => setDraft(toDraft(menu))} />
      {draft ? (
        <MenuEditor
          key={draft._id ?? 'new'}
          initial={draft}
          features={data.features}
          onDone={() => {
            setDraft(null);
            reload();
          }}
          onCancel={() => setDraft(null)}
        />
      ) : null}
    </div>
  );
}

function MenuTable({ menus, features, canWrite, onEdit }: { menus: Menu[]; features: Feature[]; canWrite: boolean; onEdit: (menu: Menu) => void }) {
  if (!menus.length) return <p className="muted">No menus yet.</p>;
  const names = new Map(features.map((feature) => [feature._id, feature.name]));
  return (
    <div className="scroll-x" role="region" aria-label="Menu entries" tabIndex={0}>
      <table className="grid">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Position</th>
            <th scope="col">Entries</th>
            {canWrite ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {menus.map((menu) => (
            <tr key={menu._id}>
              <td>{menu.name}</td>
              <td data-label="Position">{menu.position}</td>
              <td data-label="Entries" className="wide">
                {menu.entries.length ? (
                  <ol>
                    {menu.entries.map((entry, index) => (
                      <li key={index}>
                        {entry.label} <span className="muted">→ {names.get(featureIdOf(entry.path)) ?? entry.path}</span>
                      </li>
                    ))}
                  </ol>
                ) : (
                  <span className="muted">No entries</span>
                )}
              </td>
              {canWrite ? (
                <td>
                  <button type="button" onClick={() => onEdit(menu)} aria-label={`Edit menu ${menu.name}`}>
                    Edit
                  </button>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function MenuEditor({ initial, features, onDone, onCancel }: { initial: Draft; features: Feature[]; onDone: () => void; onCancel: () => void }) {
  const { run, toast } = useDesigner();
  const [draft, setDraft] = useState(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const editing = Boolean(initial._id);

  // Entry errors are keyed by position (as the server names them): once entries change, they are stale.
  const setEntries = (update: (entries: DraftEntry[]) => DraftEntry[]) => {
    setDraft((d) => ({ ...d, entries: update(d.entries) }));
    setErrors((current) => Object.fromEntries(Object.entries(current).filter(([field]) => !field.startsWith('entries.'))));
  };
  const changeEntry = (index: number, change: Partial<DraftEntry>) => setEntries((entries) => entries.map((e, i) => (i === index ? { ...e, ...change } : e)));
  const move = (index: number, by: -1 | 1) =>
    setEntries((entries) => {
      const next = [...entries];
      const [moved] = next.splice(index, 1);
      next.splice(index + by, 0, moved!);
      return next;
    });

  async function save(event: FormEvent) {
    event.preventDefault();
    const position = Number(draft.position);
    const local: Record<string, string> = {};
    if (!draft.name.trim()) local.name = 'Enter a name.';
    if (!Number.isInteger(position) || position < 0) local.position = 'Enter a whole number, 0 or more.';
    draft.entries.forEach((entry, index) => {
      if (!entry.label.trim()) local[`entries.${index}.label`] = 'Enter a label.';
      if (!entry.featureId) local[`entries.${index}.path`] = 'Choose a feature.';
    });
    setErrors(local);
    setFormError(null);
    if (Object.keys(local).length) return;
    setBusy(true);
    try {
      const entries = draft.entries.map((entry) => ({ label: entry.label.trim(), path: `${PATH_PREFIX}${entry.featureId}` }));
      const result = await run<UpsertMenuMutation>(UPSERT, { name: draft.name.trim(), entries, position });
      toast(result.upsertMenu.created ? `Menu ${draft.name.trim()} created` : `Menu ${draft.name.trim()} saved`);
      onDone();
    } catch (failure) {
      setErrors(fieldErrors(failure));
      setFormError(errorMessage(failure));
      setBusy(false);
    }
  }

  async function remove() {
    setFormError(null);
    try {
      await run(DELETE, { id: initial._id });
      toast(`Menu ${initial.name} deleted`);
      onDone();
    } catch (failure) {
      setFormError(errorMessage(failure));
    }
  }

  const options = [{ value: '', label: 'Choose a feature…' }, ...features.map((feature) => ({ value: feature._id, label: feature.name }))];
  return (
    <form className="panel" onSubmit={save} aria-labelledby="menu-editor-title" noValidate>
      <h2 id="menu-editor-title">{editing ? `Edit menu ${initial.name}` : 'New menu'}</h2>
      <div className="grid-2">
        <TextField
          label="Name"
          value={draft.name}
          onChange={(name) => setDraft((d) => ({ ...d, name }))}
          error={errors.name}
          // The name identifies the menu (upsertMenu replaces the menu of that name): renaming would create another.
          disabled={editing}
          hint={editing ? 'The name identifies the menu; to rename it, create a new menu and delete this one.' : undefined}
          required
        />
        <TextField label="Position" type="number" min={0} step={1} value={draft.position} onChange={(position) => setDraft((d) => ({ ...d, position }))} error={errors.position} hint="Menus are shown by position, then name." />
      </div>
      <h3>Entries</h3>
      {draft.entries.length ? null : <p className="muted">No entries yet.</p>}
      {draft.entries.map((entry, index) => {
        const known = !entry.featureId || features.some((feature) => feature._id === entry.featureId);
        const entryOptions = known ? options : [...options, { value: entry.featureId, label: `Missing feature ${entry.featureId}` }];
        const number = index + 1;
        return (
          <fieldset key={entry.key}>
            <legend>Entry {number}</legend>
            <div className="grid-2">
              <TextField label="Label" value={entry.label} onChange={(label) => changeEntry(index, { label })} error={errors[`entries.${index}.label`]} required />
              <div>
                <SelectField label="Feature" value={entry.featureId} onChange={(featureId) => changeEntry(index, { featureId })} options={entryOptions} aria-invalid={errors[`entries.${index}.path`] ? true : undefined} />
                <ErrorText error={errors[`entries.${index}.path`]} />
              </div>
            </div>
            <div className="row">
              <button type="button" onClick={() => move(index, -1)} disabled={index === 0} aria-label={`Move up entry ${number}`}>
                Move up
              </button>
              <button type="button" onClick={() => move(index, 1)} disabled={index === draft.entries.length - 1} aria-label={`Move down entry ${number}`}>
                Move down
              </button>
              <button type="button" onClick={() => setEntries((entries) => entries.filter((_, i) => i !== index))} aria-label={`Remove entry ${number}`}>
                Remove
              </button>
            </div>
          </fieldset>
        );
      })}
      <p>
        <button type="button" onClick={() => setEntries((entries) => [...entries, { key: nextKey++, label: '', featureId: '' }])}>
          Add entry
        </button>
      </p>
      <ErrorText error={formError} />
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          Save
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        {editing ? <ConfirmButton label="Delete menu" question={`Delete the menu ${initial.name}?`} onConfirm={remove} /> : null}
      </div>
    </form>
  );
}
