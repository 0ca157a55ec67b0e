// Tables: tables and their fields (create, rename, delete; fields in table-fields.tsx) and a record
// browser per table on the generated GraphQL: filter, sort, paging, create, edit, delete; a hook's
// refusal is shown on the form. A table's Access tab (table-access.tsx) sets each role's rules.
import { useState, type FormEvent } from 'react';
import { errorMessage, fieldErrors, useDesigner, useLoad } from '../api.js';
import type { CreateTableMutation, TablesQuery } from '../../graphql-operations.js';
import { cellText, ConfirmButton, ErrorText, ItemList, Loading, SectionHeader, SelectField, Tabs, TextField, useDisclosure } from '../components.js';
import { navigate } from '../routes.js';
import { TableAccessTab } from './table-access.js';
import { DeleteTable, FIELD_SELECTION, TableFields, fieldTitle, type Field } from './table-fields.js';

type Table = TablesQuery['tables'][number];
type Operations = NonNullable<Table['operations']>;

const TABLE_FIELDS = `_id name description fields { ${FIELD_SELECTION} } operations { type input filter sort list create update delete }`;
const PAGE_SIZE = 20;

/** The tabs of a table, each at #/tables/<id>/<tab> (the first at #/tables/<id>). */
const TABS = [
  { id: 'fields', label: 'Fields and records' },
  { id: 'access', label: 'Access' },
] as const;
type TabId = (typeof TABS)[number]['id'];

export default function TablesSection({ id, tab }: { id?: string; tab?: string }) {
  const { run, permissions } = useDesigner();
  const tables = useLoad(() => run<TablesQuery>(`query Tables { tables { ${TABLE_FIELDS} } }`), []);
  const table = tables.data?.tables.find((candidate) => candidate._id === id);
  return (
    <>
      <SectionHeader title="Tables">{permissions.has('tables:write') ? <NewTable onCreated={(created) => (tables.reload(), navigate('tables', created))} /> : null}</SectionHeader>
      <div className="split">
        <div>
          <ErrorText error={tables.error} onRetry={tables.reload} />
          <ItemList label="Tables" section="tables" items={tables.data?.tables} current={id} failed={!!tables.error} empty="No table yet.">
            {(candidate) => (
              <>
                {candidate.name}
                <small>
                  {candidate.fields.length} {candidate.fields.length === 1 ? 'field' : 'fields'}
                </small>
              </>
            )}
          </ItemList>
        </div>
        {table ? <TableDetail key={table._id} table={table} tables={tables.data!.tables} tab={tab === 'access' ? 'access' : 'fields'} onChanged={tables.reload} /> : <p className="muted">{id && tables.data ? `The table '${id}' does not exist.` : 'Choose a table, or create one.'}</p>}
      </div>
    </>
  );
}

function NewTable({ onCreated }: { onCreated: (id: string) => void }) {
  const { run } = useDesigner();
  const { open, setOpen, opener, closeOnEscape } = useDisclosure();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<string | null>(null);
  if (!open) {
    return (
      <button type="button" className="primary" ref={opener} onClick={() => setOpen(true)}>
        New table
      </button>
    );
  }
  async function create(event: FormEvent) {
    event.preventDefault();
    try {
      const { createTable } = await run<CreateTableMutation>(`mutation CreateTable($name: String!, $description: String) { createTable(name: $name, description: $description) { _id } }`, { name, description });
      setOpen(false);
      onCreated(createTable._id);
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }
  return (
    <form className="panel" onSubmit={create} onKeyDown={closeOnEscape} aria-label="New table">
      <TextField label="Name of the new table" value={name} onChange={setName} required autoFocus />
      <TextField label="Description" value={description} onChange={setDescription} />
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

function TableDetail({ table, tables, tab, onChanged }: { table: Table; tables: Table[]; tab: TabId; onChanged: () => void }) {
  const { permissions } = useDesigner();
  const canWrite = permissions.has('tables:write');
  const canDelete = permissions.has('config:delete');
  return (
    <article className="stack" aria-label={`Table ${table.name}`}>
      {/* Top-aligned: the deletion's confirmation is taller than the name, which stays at the top. */}
      <div className="section-header" style={{ margin: 0, alignItems: 'flex-start' }}>
        <h2 style={{ margin: 0 }}>{table.name}</h2>
        {canDelete ? <DeleteTable table={table} onDeleted={() => (navigate('tables'), onChanged())} /> : null}
      </div>
      {canWrite ? <TableMetadata table={table} onChanged={onChanged} /> : table.description ? <p>{table.description}</p> : null}
      <Tabs label={`Parts of ${table.name}`} tabs={[...TABS]} current={tab} onSelect={(next) => (next === 'fields' ? navigate('tables', table._id) : navigate('tables', table._id, next))}>
        {tab === 'access' ? <TableAccessTab table={table} /> : <FieldsAndRecords table={table} tables={tables} canWrite={canWrite} canDelete={canDelete} onChanged={onChanged} />}
      </Tabs>
    </article>
  );
}

function FieldsAndRecords({ table, tables, canWrite, canDelete, onChanged }: { table: Table; tables: Table[]; canWrite: boolean; canDelete: boolean; onChanged: () => void }) {
  return (
    <div className="stack">
      <TableFields table={table} tables={tables} canWrite={canWrite} canDelete={canDelete} onChanged={onChanged} />
      {table.operations && table.fields.length ? <Records key={table.fields.map((field) => `${field.name}:${field.type}`).join()} table={table} operations={table.operations} /> : <p className="muted">Add a field to browse and create records.</p>}
    </div>
  );
}

function TableMetadata({ table, onChanged }: { table: Table; onChanged: () => void }) {
  const { run, toast } = useDesigner();
  const [name, setName] = useState(table.name);
  const [description, setDescription] = useState(table.description);
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      className="row"
      aria-label="Table name and description"
      onSubmit={async (event) => {
        event.preventDefault();
        setError(null);
        try {
          await run(`mutation UpdateTable($id: ID!, $name: String, $description: String) { updateTable(_id: $id, name: $name, description: $description) { _id } }`, { id: table._id, name, description });
          toast('Table saved');
          onChanged();
        } catch (failure) {
          setError(errorMessage(failure));
        }
      }}
    >
      <TextField label="Table name" value={name} onChange={setName} />
      <TextField label="Table description" value={description} onChange={setDescription} />
      <button type="submit" disabled={name === table.name && description === table.description}>
        Save table
      </button>
      <ErrorText error={error} />
    </form>
  );
}

type RecordRow = Record<string, unknown> & { _id: string };

/** A form value as the field's GraphQL type expects it; '' means no value. */
function toValue(field: Field, text: string): unknown {
  if (text === '') return null;
  switch (field.type) {
    case 'number':
      return Number(text);
    case 'boolean':
      return text === 'true';
    case 'json':
      return JSON.parse(text);
    case 'multi-reference':
      return text.split(',').map((part) => part.trim()).filter(Boolean);
    default:
      return text;
  }
}

function toText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function Records({ table, operations }: { table: Table; operations: Operations }) {
  const { run } = useDesigner();
  const [filter, setFilter] = useState({ field: table.fields[0]!.name, operator: 'eq', value: '' });
  const [applied, setApplied] = useState<Record<string, unknown> | null>(null);
  const [sort, setSort] = useState({ field: '_createdAt', direction: 'DESC' });
  const [offset, setOffset] = useState(0);
  const [editing, setEditing] = useState<RecordRow | 'new' | null>(null);
  const columns = table.fields.map((field) => field.name);
  const sortable = ['_createdAt', '_updatedAt', ...table.fields.filter((field) => !['json', 'multi-reference'].includes(field.type)).map((field) => field.name)];
  const records = useLoad(
    () =>
      run<Record<string, { items: RecordRow[]; total: number }>>(
        `query($filter: ${operations.filter}, $sort: [${operations.sort}!], $limit: Int, $offset: Int) { page: ${operations.list}(filter: $filter, sort: $sort, limit: $limit, offset: $offset) { total items { _id ${columns.join(' ')} } } }`,
        { filter: applied, sort: [sort], limit: PAGE_SIZE, offset },
      ),
    [table._id, JSON.stringify(applied), sort.field, sort.direction, offset],
  );
  const page = records.data?.page;
  const [actionError, setActionError] = useState<string | null>(null);
  const filterField = table.fields.find((field) => field.name === filter.field) ?? table.fields[0]!;

  return (
    <section aria-labelledby="records-title" className="stack">
      <div className="row">
        <h3 id="records-title" style={{ margin: 0 }}>
          Records
        </h3>
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          New record
        </button>
      </div>
      <form
        className="row"
        aria-label="Filter records"
        onSubmit={(event) => {
          event.preventDefault();
          setOffset(0);
          try {
            const value = filter.operator === 'isNull' ? true : filter.operator === 'contains' && filterField.type === 'text' ? filter.value : toValue(filterField, filter.value);
            setApplied(filter.value === '' && filter.operator !== 'isNull' ? null : { [filter.field]: { [filter.operator]: value } });
          } catch {
            setApplied(null);
          }
        }}
      >
        <SelectField label="Filter field" value={filter.field} onChange={(field) => setFilter({ ...filter, field })} options={table.fields.map((field) => ({ value: field.name, label: fieldTitle(field) }))} />
        <SelectField
          label="Condition"
          value={filter.operator}
          onChange={(operator) => setFilter({ ...filter, operator })}
          options={[
            { value: 'eq', label: 'equals' },
            { value: 'contains', label: 'contains' },
            { value: 'gt', label: 'greater than' },
            { value: 'lt', label: 'less than' },
            { value: 'isNull', label: 'is empty' },
          ]}
        />
        <TextField label="Value" value={filter.value} onChange={(value) => setFilter({ ...filter, value })} />
        <button type="submit">Apply filter</button>
        {applied ? (
          <button
            type="button"
            onClick={() => {
              setApplied(null);
              setFilter({ ...filter, value: '' });
            }}
          >
            Clear filter
          </button>
        ) : null}
        <SelectField label="Sort by" value={sort.field} onChange={(field) => setSort({ ...sort, field })} options={sortable.map((name) => ({ value: name, label: name }))} />
        <SelectField label="Order" value={sort.direction} onChange={(direction) => setSort({ ...sort, direction })} options={[{ value: 'ASC', label: 'ascending' }, { value: 'DESC', label: 'descending' }]} />
      </form>
      <ErrorText error={records.error ?? actionError} onRetry={records.error ? records.reload : undefined} />
      {editing ? <RecordForm table={table} operations={operations} record={editing === 'new' ? null : editing} onDone={(saved) => (setEditing(null), saved && records.reload())} /> : null}
      {!page ? (
        <Loading />
      ) : (
        <>
          <p className="muted" role="status">
            {page.total} {page.total === 1 ? 'record' : 'records'}
            {page.total > PAGE_SIZE ? ` · ${offset + 1}–${Math.min(offset + PAGE_SIZE, page.total)}` : ''}
          </p>
          <div className="scroll-x" role="region" aria-label="Records" tabIndex={0}>
            <table className="grid" aria-label={`Records of ${table.name}`}>
              <thead>
                <tr>
                  {table.fields.map((field) => (
                    <th key={field.name} scope="col">
                      {fieldTitle(field)}
                    </th>
                  ))}
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((record) => (
                  <tr key={record._id}>
                    {table.fields.map((field) => (
                      <td key={field.name} data-label={fieldTitle(field)}>
                        {cellText(record[field.name])}
                      </td>
                    ))}
                    <td className="wide">
                      <div className="row">
                        <button type="button" onClick={() => setEditing(record)} aria-label={`Edit record ${record._id}`}>
                          Edit
                        </button>
                        <ConfirmButton
                          label="Delete"
                          name={`Delete record ${record._id}`}
                          question="Delete this record?"
                          onConfirm={async () => {
                            setActionError(null);
                            try {
                              await run(`mutation($id: ID!) { ${operations.delete}(Id: $id) }`, { id: record._id });
                              records.reload();
                            } catch (failure) {
                              setActionError(errorMessage(failure));
                            }
                          }}
                        />
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="row">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
              Previous page
            </button>
            <button type="button" disabled={offset + PAGE_SIZE >= page.total} onClick={() => setOffset(offset + PAGE_SIZE)}>
              Next page
            </button>
          </div>
        </>
      )}
    </section>
  );
}

function RecordForm({ table, operations, record, onDone }: { table: Table; operations: Operations; record: RecordRow | null; onDone: (saved: boolean) => void }) {
  const { run, toast } = useDesigner();
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(table.fields.map((field) => [field.name, toText(record?.[field.name])])));
  const [error, setError] = useState<string | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  async function save(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setErrors({});
    let data: Record<string, unknown>;
    try {
      data = Object.fromEntries(
        table.fields
          .filter((field) => record || values[field.name] !== '')
          .map((field) => [field.name, toValue(field, values[field.name] ?? '')]),
      );
    } catch {
      setError('A JSON field does not hold valid JSON.');
      return;
    }
    try {
      if (record) await run(`mutation($id: ID!, $data: ${operations.input}!) { ${operations.update}(Id: $id, data: $data) { _id } }`, { id: record._id, data });
      else await run(`mutation($data: ${operations.input}!) { ${operations.create}(data: $data) { _id } }`, { data });
      toast(record ? 'Record saved' : 'Record created');
      onDone(true);
    } catch (failure) {
      const byField = Object.fromEntries(Object.entries(fieldErrors(failure)).map(([name, message]) => [name.replace(/^data\./, ''), message]));
      setErrors(byField);
      setError(errorMessage(failure));
    }
  }
  return (
    <form className="panel" onSubmit={save} aria-label={record ? 'Edit record' : 'New record'}>
      <h4 style={{ marginTop: 0 }}>{record ? 'Edit record' : 'New record'}</h4>
      <div className="grid-2">
        {table.fields.map((field) =>
          field.type === 'boolean' ? (
            <SelectField
              key={field._id}
              label={fieldTitle(field)}
              value={values[field.name] ?? ''}
              onChange={(value) => setValues({ ...values, [field.name]: value })}
              options={[
                { value: '', label: '(empty)' },
                { value: 'true', label: 'Yes' },
                { value: 'false', label: 'No' },
              ]}
            />
          ) : (
            <TextField
              key={field._id}
              label={fieldTitle(field)}
              type={field.type === 'number' ? 'number' : field.type === 'date' ? 'date' : 'text'}
              step={field.type === 'number' ? 'any' : undefined}
              value={values[field.name] ?? ''}
              onChange={(value) => setValues({ ...values, [field.name]: value })}
              required={field.required && !record}
              error={errors[field.name]}
              hint={field.type === 'multi-reference' ? 'Ids separated by commas' : field.type === 'json' ? 'JSON' : field.type === 'datetime' ? 'ISO 8601, e.g. 2026-01-31T12:00:00Z' : undefined}
            />
          ),
        )}
      </div>
      <ErrorText error={error} />
      <div className="row">
        <button type="submit" className="primary">
          {record ? 'Save record' : 'Create record'}
        </button>
        <button type="button" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
