// A table's fields in the designer: the list, adding a field (the form starts over after each add),
// changing one (name, label, type, referenced table, required, unique, description) and deleting a
// field or the whole table. Before a change or a deletion is sent, what uses the field (features,
// hooks, roles' rules: builder GraphQL's fieldUsage) and what is lost (recordCount) are shown.
import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { errorMessage, useDesigner } from '../api.js';
import type { ImpactQuery, TablesQuery } from '../../graphql-operations.js';
import { ErrorText, SelectField, TextField } from '../components.js';

export type Field = TablesQuery['tables'][number]['fields'][number];
export type FieldsTable = Pick<TablesQuery['tables'][number], '_id' | 'name' | 'fields'>;
type FieldUse = ImpactQuery['fieldUsage'][number];

/** What a change or a deletion touches: the records that lose a value (null: not countable by this user) and what uses it. */
interface Impact {
  records: number | null;
  uses: FieldUse[];
}

export const FIELD_TYPES = ['text', 'number', 'boolean', 'date', 'datetime', 'json', 'reference', 'multi-reference'];
export const FIELD_SELECTION = '_id name label type required unique referenceTableId description';
const isReference = (type: string) => type === 'reference' || type === 'multi-reference';

const IMPACT = `query Impact($tableId: ID!, $field: String) {
  fieldUsage(tableId: $tableId, field: $field) { kind _id name detail line }
  table(_id: $tableId) { recordCount(field: $field) }
}`;
const UPDATE_FIELD = `mutation UpdateField($tableId: ID!, $field: String!, $name: String, $label: String, $description: String, $type: FieldType, $referenceTableId: ID, $required: Boolean, $unique: Boolean) {
  updateTableField(tableId: $tableId, field: $field, name: $name, label: $label, description: $description, type: $type, referenceTableId: $referenceTableId, required: $required, unique: $unique) { _id }
}`;

/** The name people read for a field: its label, or its name. */
export function fieldTitle(field: Pick<Field, 'name' | 'label'>): string {
  return field.label || field.name;
}

function useImpact() {
  const { run } = useDesigner();
  return async (tableId: string, field?: string): Promise<Impact> => {
    const data = await run<ImpactQuery>(IMPACT, { tableId, field: field ?? null });
    return { records: data.table?.recordCount ?? null, uses: data.fieldUsage };
  };
}

/** The fields of a table with what a designer may do to them. */
export function TableFields({ table, tables, canWrite, canDelete, onChanged }: { table: FieldsTable; tables: FieldsTable[]; canWrite: boolean; canDelete: boolean; onChanged: () => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const edited = table.fields.find((field) => field._id === editing);
  const deleted = table.fields.find((field) => field._id === deleting);
  const referenced = (field: Field) => (field.referenceTableId ? ` → ${tables.find((t) => t._id === field.referenceTableId)?.name ?? field.referenceTableId}` : '');
  return (
    <section aria-labelledby="fields-title" className="stack">
      <h3 id="fields-title" style={{ margin: 0 }}>
        Fields
      </h3>
      <div className="scroll-x" role="region" aria-label="Fields" tabIndex={0}>
        <table className="grid field-list">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Required</th>
              <th scope="col">Unique</th>
              <th scope="col">Description</th>
              {canWrite || canDelete ? (
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {table.fields.map((field) => (
              <tr key={field._id}>
                <td>
                  {field.name}
                  {field.label ? <small className="muted" style={{ display: 'block' }}>{field.label}</small> : null}
                </td>
                <td data-label="Type">
                  {field.type}
                  {referenced(field)}
                </td>
                <td data-label="Required">{field.required ? 'Yes' : 'No'}</td>
                <td data-label="Unique">{field.unique ? 'Yes' : 'No'}</td>
                <td data-label="Description" className="wide">
                  {canWrite ? <FieldDescription key={field.description} table={table} field={field} onSaved={onChanged} /> : field.description}
                </td>
                {canWrite || canDelete ? (
                  <td className="wide">
                    <div className="row" style={{ flexWrap: 'nowrap' }}>
                      {canWrite ? (
                        <button type="button" aria-label={`Edit field ${field.name}`} aria-expanded={editing === field._id} onClick={() => (setDeleting(null), setEditing(editing === field._id ? null : field._id))}>
                          Edit
                        </button>
                      ) : null}
                      {canDelete ? (
                        <button type="button" className="danger" aria-label={`Delete field ${field.name}`} onClick={() => (setEditing(null), setDeleting(field._id))}>
                          Delete
                        </button>
                      ) : null}
                    </div>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {edited ? <FieldEditor key={edited._id} table={table} tables={tables} field={edited} onDone={(saved) => (setEditing(null), saved && onChanged())} /> : null}
      {deleted ? <DeleteField key={deleted._id} table={table} field={deleted} onDone={(done) => (setDeleting(null), done && onChanged())} /> : null}
      {canWrite ? <AddField table={table} tables={tables} onAdded={onChanged} /> : null}
    </section>
  );
}

/** A field's description, changed in place (the field's metadata; its name and type stay). */
function FieldDescription({ table, field, onSaved }: { table: FieldsTable; field: Field; onSaved: () => void }) {
  const { run, toast } = useDesigner();
  const [description, setDescription] = useState(field.description);
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      className="row"
      onSubmit={async (event) => {
        event.preventDefault();
        setError(null);
        try {
          await run(`mutation UpdateFieldDescription($t: ID!, $f: String!, $d: String!) { updateTableField(tableId: $t, field: $f, description: $d) { _id } }`, { t: table._id, f: field._id, d: description });
          toast(`Description of ${field.name} saved`);
          onSaved();
        } catch (failure) {
          setError(errorMessage(failure));
        }
      }}
    >
      <input aria-label={`Description of ${field.name}`} value={description} onChange={(event) => setDescription(event.target.value)} />
      <button type="submit" disabled={description === field.description} aria-label={`Save the description of ${field.name}`}>
        Save
      </button>
      <ErrorText error={error} />
    </form>
  );
}

const NEW_FIELD = { name: '', label: '', type: 'text', required: false, unique: false, referenceTableId: '', description: '' };

/** Adds a field; after each add the form starts over: not required, not unique. */
function AddField({ table, tables, onAdded }: { table: FieldsTable; tables: FieldsTable[]; onAdded: () => void }) {
  const { run, toast } = useDesigner();
  const [field, setField] = useState(NEW_FIELD);
  const [error, setError] = useState<string | null>(null);
  const form = useRef<HTMLFormElement>(null);
  async function add(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      await run(`mutation AddField($tableId: ID!, $field: AppFieldInput!) { addTableField(tableId: $tableId, field: $field) { _id } }`, {
        tableId: table._id,
        field: {
          name: field.name,
          label: field.label,
          type: field.type,
          required: field.required,
          unique: field.unique,
          description: field.description,
          ...(isReference(field.type) ? { referenceTableId: field.referenceTableId || tables[0]?._id } : {}),
        },
      });
      toast(`Field ${field.name} added`);
      setField(NEW_FIELD);
      form.current?.querySelector('input')?.focus();
      onAdded();
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }
  return (
    <form className="panel" onSubmit={add} aria-label="Add a field" ref={form}>
      <h4 style={{ marginTop: 0 }}>Add a field</h4>
      <FieldInputs value={field} onChange={setField} tables={tables} names={{ name: 'Field name', label: 'Field label', type: 'Field type', description: 'Field description' }} />
      <div className="row">
        <button type="submit">Add field</button>
      </div>
      <ErrorText error={error} />
    </form>
  );
}

type FieldDraft = typeof NEW_FIELD;

/** The inputs of a field's properties, shared by adding and changing one. */
function FieldInputs({
  value,
  onChange,
  tables,
  names,
  hint,
}: {
  value: FieldDraft;
  onChange: (next: FieldDraft) => void;
  tables: FieldsTable[];
  names: { name: string; label: string; type: string; description: string };
  hint?: ReactNode;
}) {
  return (
    <>
      <div className="grid-2">
        <TextField label={names.name} value={value.name} onChange={(name) => onChange({ ...value, name })} required autoComplete="off" />
        <TextField label={names.label} value={value.label} onChange={(label) => onChange({ ...value, label })} hint="What people read, e.g. Due date; empty: the name" autoComplete="off" />
        <SelectField label={names.type} value={value.type} onChange={(type) => onChange({ ...value, type })} options={FIELD_TYPES.map((type) => ({ value: type, label: type }))} />
        {isReference(value.type) ? (
          <SelectField
            label="Referenced table"
            value={value.referenceTableId || tables[0]?._id || ''}
            onChange={(referenceTableId) => onChange({ ...value, referenceTableId })}
            options={tables.map((t) => ({ value: t._id, label: t.name }))}
          />
        ) : null}
        <TextField label={names.description} value={value.description} onChange={(description) => onChange({ ...value, description })} autoComplete="off" />
      </div>
      {hint}
      <div className="row">
        <label className="check">
          <input type="checkbox" checked={value.required} onChange={(event) => onChange({ ...value, required: event.target.checked })} /> Required
        </label>
        <label className="check">
          <input type="checkbox" checked={value.unique} onChange={(event) => onChange({ ...value, unique: event.target.checked })} /> Unique
        </label>
      </div>
    </>
  );
}

/** The changes of a draft against the field, as updateTableField's arguments; structural ones need a look at what uses the field. */
function changesOf(field: Field, draft: FieldDraft, tables: FieldsTable[]): { variables: Record<string, unknown>; structural: string[] } {
  const variables: Record<string, unknown> = {};
  const structural: string[] = [];
  const change = (key: string, value: unknown, described?: string) => {
    variables[key] = value;
    if (described) structural.push(described);
  };
  if (draft.name !== field.name) change('name', draft.name, `renamed to ${draft.name}`);
  if (draft.label !== field.label) change('label', draft.label);
  if (draft.description !== field.description) change('description', draft.description);
  if (draft.type !== field.type) change('type', draft.type, `${field.type} → ${draft.type}`);
  const reference = isReference(draft.type) ? draft.referenceTableId || field.referenceTableId || tables[0]?._id || '' : '';
  if (isReference(draft.type) && reference !== field.referenceTableId) change('referenceTableId', reference, `referencing ${tables.find((t) => t._id === reference)?.name ?? reference}`);
  if (draft.required !== field.required) change('required', draft.required, draft.required ? 'required' : 'optional');
  if (draft.unique !== field.unique) change('unique', draft.unique, draft.unique ? 'unique' : 'not unique');
  return { variables, structural };
}

/** Changes one field; when features, hooks or rules use it, they are listed and the change waits for a confirmation. */
function FieldEditor({ table, tables, field, onDone }: { table: FieldsTable; tables: FieldsTable[]; field: Field; onDone: (saved: boolean) => void }) {
  const { run, toast } = useDesigner();
  const impactOf = useImpact();
  const [draft, setDraft] = useState<FieldDraft>({ ...field, referenceTableId: field.referenceTableId ?? '' });
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<{ variables: Record<string, unknown>; structural: string[]; uses: FieldUse[] } | null>(null);
  const [busy, setBusy] = useState(false);
  const { variables, structural } = changesOf(field, draft, tables);
  const unchanged = Object.keys(variables).length === 0;
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => form.current?.querySelector('input')?.focus(), []);

  async function save(toSend: Record<string, unknown>) {
    setBusy(true);
    setError(null);
    try {
      await run(UPDATE_FIELD, { tableId: table._id, field: field._id, ...toSend });
      toast(`Field ${String(toSend.name ?? field.name)} saved`);
      onDone(true);
    } catch (failure) {
      setPending(null);
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (unchanged) return;
    if (!structural.length) return save(variables);
    setBusy(true);
    try {
      const { uses } = await impactOf(table._id, field._id);
      setBusy(false);
      if (!uses.length) return save(variables);
      setPending({ variables, structural, uses });
    } catch (failure) {
      setBusy(false);
      setError(errorMessage(failure));
    }
  }

  return (
    <form className="panel" onSubmit={submit} aria-label={`Change field ${field.name}`} ref={form}>
      <h4 style={{ marginTop: 0 }}>Change field {field.name}</h4>
      <FieldInputs
        value={draft}
        onChange={(next) => (setPending(null), setDraft(next))}
        tables={tables}
        names={{ name: 'Name', label: 'Label', type: 'Type', description: 'Description' }}
        hint={
          draft.type !== field.type ? (
            <p className="muted hint">
              Stored values are converted when every one of them fits the new type (text to number only if each is a number, a reference only while the field is empty); otherwise nothing changes and the message names a value.
            </p>
          ) : null
        }
      />
      {pending ? (
        <Confirmation
          title={`Change ${field.name} of ${table.name}: ${pending.structural.join(', ')}?`}
          uses={pending.uses}
          usesIntro="These use the field and may need changing too:"
          confirm="Save the change"
          busy={busy}
          onConfirm={() => save(pending.variables)}
          onCancel={() => setPending(null)}
        />
      ) : (
        <div className="row">
          <button type="submit" className="primary" disabled={unchanged || busy}>
            Save field
          </button>
          <button type="button" onClick={() => onDone(false)}>
            Cancel
          </button>
        </div>
      )}
      <ErrorText error={error} />
    </form>
  );
}

/** Deletes a field after saying how many values go and what uses it. */
function DeleteField({ table, field, onDone }: { table: FieldsTable; field: Field; onDone: (deleted: boolean) => void }) {
  const { run, toast } = useDesigner();
  const impactOf = useImpact();
  const [impact, setImpact] = useState<Impact | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    impactOf(table._id, field._id).then(setImpact, (failure) => setError(errorMessage(failure)));
  }, [table._id, field._id]);
  async function remove() {
    setBusy(true);
    setError(null);
    try {
      await run(`mutation DeleteField($tableId: ID!, $field: String!) { deleteTableField(tableId: $tableId, field: $field, confirm: true) { _id } }`, { tableId: table._id, field: field._id });
      toast(`Field ${field.name} deleted`);
      onDone(true);
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  }
  return (
    <div className="panel stack">
      {impact ? (
        <Confirmation
          title={`Delete field ${field.name} of ${table.name}?`}
          lost={impact.records === null ? `Its value in every record is lost.` : `Its value in ${records(impact.records)} is lost; this cannot be undone.`}
          uses={impact.uses}
          usesIntro="These use the field and will stop working until changed:"
          confirm={`Yes, delete ${field.name}`}
          danger
          busy={busy}
          onConfirm={remove}
          onCancel={() => onDone(false)}
        />
      ) : (
        <p className="muted" aria-busy="true">
          Looking for what uses {field.name}…
        </p>
      )}
      <ErrorText error={error} />
    </div>
  );
}

/** Deletes the whole table after saying how many records and fields go and what uses it. */
export function DeleteTable({ table, onDeleted }: { table: FieldsTable; onDeleted: () => void }) {
  const { run, toast } = useDesigner();
  const impactOf = useImpact();
  const [impact, setImpact] = useState<Impact | null>(null);
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function ask() {
    setError(null);
    setAsking(true);
    try {
      setImpact(await impactOf(table._id));
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }
  async function remove() {
    setBusy(true);
    setError(null);
    try {
      await run(`mutation DeleteTable($id: ID!) { deleteTable(_id: $id, confirm: true) }`, { id: table._id });
      toast(`Table ${table.name} deleted`);
      onDeleted();
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  }
  if (!asking) {
    return (
      <div>
        <button type="button" className="danger" onClick={ask}>
          Delete table
        </button>
        <ErrorText error={error} />
      </div>
    );
  }
  const fields = table.fields.length === 1 ? '1 field' : `${table.fields.length} fields`;
  return (
    <div className="panel stack">
      {impact ? (
        <Confirmation
          title={`Delete table ${table.name}?`}
          lost={impact.records === null ? `All its records and its ${fields} are lost.` : `Its ${records(impact.records)} and ${fields} are lost; this cannot be undone.`}
          uses={impact.uses}
          usesIntro="These use the table and will stop working:"
          confirm={`Yes, delete ${table.name}`}
          danger
          busy={busy}
          onConfirm={remove}
          onCancel={() => (setAsking(false), setImpact(null))}
        />
      ) : (
        <p className="muted" aria-busy="true">
          Looking for what uses {table.name}…
        </p>
      )}
      <ErrorText error={error} />
    </div>
  );
}

const KIND_LABELS: Record<FieldUse['kind'], string> = { FEATURE: 'Feature', HOOK: 'Hook', ACCESS_RULE: 'Access rule of role' };

/** A question before a change or a deletion: what is lost, what uses it, and the two answers. */
function Confirmation({
  title,
  lost,
  uses,
  usesIntro,
  confirm,
  danger = false,
  busy,
  onConfirm,
  onCancel,
}: {
  title: string;
  lost?: string;
  uses: FieldUse[];
  usesIntro: string;
  confirm: string;
  danger?: boolean;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const titleId = useId();
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => button.current?.focus(), []);
  const groups = groupedUses(uses);
  return (
    <div role="group" aria-labelledby={titleId} className="stack" style={{ gap: '.5rem', marginTop: '.75rem' }}>
      <p id={titleId} style={{ margin: 0, fontWeight: 600 }}>
        {title}
      </p>
      {lost ? <p style={{ margin: 0 }}>{lost}</p> : null}
      {groups.length ? (
        <>
          <p style={{ margin: 0 }}>{usesIntro}</p>
          <ul aria-label="What uses it" style={{ margin: 0 }}>
            {groups.map((group) => (
              <li key={`${group[0]!.kind}:${group[0]!._id}`}>
                {KIND_LABELS[group[0]!.kind]} <strong>{group[0]!.name}</strong>: {group.map((use) => `${use.detail}${use.line ? ` (line ${use.line})` : ''}`).join('; ')}
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p className="muted" style={{ margin: 0 }}>
          No feature, hook or access rule uses it.
        </p>
      )}
      <div className="row">
        <button type="button" ref={button} className={danger ? 'danger' : 'primary'} disabled={busy} onClick={onConfirm}>
          {confirm}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** Uses of the same feature, hook or role together, in the order they came. */
function groupedUses(uses: readonly FieldUse[]): FieldUse[][] {
  const groups = new Map<string, FieldUse[]>();
  for (const use of uses) {
    const key = `${use.kind}:${use._id}`;
    groups.set(key, [...(groups.get(key) ?? []), use]);
  }
  return [...groups.values()];
}

function records(count: number): string {
  return count === 1 ? '1 record' : `${count} records`;
}
