// Audit (admin only): the MCP tool calls, newest first, filtered and paged. Arguments were redacted
// by the server before they were stored, so showing them here shows no secret.
import { Fragment, useState, type FormEvent } from 'react';
import { useDesigner, useLoad } from '../api.js';
import type { McpAuditLogsQuery } from '../../graphql-operations.js';
import { ErrorText, Loading, SectionHeader, SelectField, TextField, formatTime } from '../components.js';

type Entry = McpAuditLogsQuery['mcpAuditLogs']['items'][number];

interface Filters {
  tool: string;
  key: string;
  user: string;
  outcome: string;
  since: string;
  until: string;
}

const EMPTY: Filters = { tool: '', key: '', user: '', outcome: '', since: '', until: '' };
const PAGE_SIZE = 50;

const LOAD = `query McpAuditLogs($tool: String, $key: String, $user: String, $outcome: AuditOutcome, $since: DateTime, $until: DateTime, $limit: Int, $before: ID) {
  mcpAuditLogs(tool: $tool, key: $key, user: $user, outcome: $outcome, since: $since, until: $until, limit: $limit, before: $before) {
    items { _id at keyId keyName keyPrefix userId userEmail tool arguments outcome error durationMs codeSha256 }
    nextCursor
  }
}`;

/** A datetime-local value (the browser's local time) as an ISO instant; null when empty or invalid. */
function isoInstant(local: string): string | null {
  if (!local) return null;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** The query's variables: empty filters are left out rather than matched. */
function variablesOf(filters: Filters, before: string | null): Record<string, unknown> {
  return {
    tool: filters.tool.trim() || null,
    key: filters.key.trim() || null,
    user: filters.user.trim() || null,
    outcome: filters.outcome || null,
    since: isoInstant(filters.since),
    until: isoInstant(filters.until),
    limit: PAGE_SIZE,
    before,
  };
}

export default function AuditSection(_props: { id?: string }) {
  const { run } = useDesigner();
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [applied, setApplied] = useState<Filters>(EMPTY);
  /** The cursor of the page shown: null for the newest page. */
  const [before, setBefore] = useState<string | null>(null);
  const [page, setPage] = useState(1);
  const { data, error, loading, reload } = useLoad(
    () => run<McpAuditLogsQuery>(LOAD, variablesOf(applied, before)),
    [applied, before],
  );

  function apply(event: FormEvent) {
    event.preventDefault();
    setApplied(draft);
    setBefore(null);
    setPage(1);
  }

  const field = (name: keyof Filters) => ({ value: draft[name], onChange: (value: string) => setDraft((d) => ({ ...d, [name]: value })) });
  return (
    <div className="stack">
      <SectionHeader title="Audit">
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </SectionHeader>
      <p className="muted">Every MCP tool call of the last year, newest first. Secret values were redacted before they were stored.</p>
      <form className="panel" onSubmit={apply} aria-labelledby="audit-filters-title">
        <h2 id="audit-filters-title">Filters</h2>
        <div className="grid-2">
          <TextField label="Tool" {...field('tool')} placeholder="e.g. create_feature" />
          <TextField label="Key" {...field('key')} placeholder="name or prefix (trellis_…)" />
          <TextField label="User" {...field('user')} placeholder="e-mail" />
          <SelectField
            label="Outcome"
            {...field('outcome')}
            options={[
              { value: '', label: 'Any' },
              { value: 'ok', label: 'ok' },
              { value: 'error', label: 'error' },
              { value: 'denied', label: 'denied' },
            ]}
          />
          <TextField label="Since" type="datetime-local" {...field('since')} />
          <TextField label="Until" type="datetime-local" {...field('until')} hint="Entries before this time." />
        </div>
        <div className="row">
          <button type="submit" className="primary">
            Apply filters
          </button>
          <button
            type="button"
            onClick={() => {
              setDraft(EMPTY);
              setApplied(EMPTY);
              setBefore(null);
              setPage(1);
            }}
          >
            Clear filters
          </button>
        </div>
      </form>
      <ErrorText error={error} onRetry={reload} />
      {data ? <EntryTable entries={data.mcpAuditLogs.items} /> : loading ? <Loading /> : null}
      <nav className="row" aria-label="Audit pages">
        <button
          type="button"
          disabled={!before}
          onClick={() => {
            setBefore(null);
            setPage(1);
          }}
        >
          First page
        </button>
        <span className="muted">Page {page}</span>
        <button
          type="button"
          disabled={!data?.mcpAuditLogs.nextCursor || loading}
          onClick={() => {
            setBefore(data!.mcpAuditLogs.nextCursor);
            setPage((p) => p + 1);
          }}
        >
          Next page
        </button>
      </nav>
    </div>
  );
}

function EntryTable({ entries }: { entries: Entry[] }) {
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  if (!entries.length) return <p className="muted">No calls match.</p>;
  const toggle = (id: string) =>
    setOpen((current) => {
      const next = new Set(current);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  return (
    <div className="scroll-x" role="region" aria-label="Audit entries" tabIndex={0}>
      <table className="grid">
        <caption className="sr-only">MCP tool calls</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Tool</th>
            <th scope="col">Outcome</th>
            <th scope="col">Key</th>
            <th scope="col">User</th>
            <th scope="col">Duration</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => {
            const expanded = open.has(entry._id);
            const detailsId = `audit-entry-${entry._id}`;
            return (
              <Fragment key={entry._id}>
                <tr>
                  <td data-label="Time">{formatTime(entry.at)}</td>
                  <td data-label="Tool">
                    <code>{entry.tool}</code>
                  </td>
                  <td data-label="Outcome">
                    <span className="pill">{entry.outcome}</span>
                  </td>
                  <td data-label="Key">
                    <KeyName entry={entry} />
                  </td>
                  <td data-label="User">{entry.userEmail ?? (entry.userId ? <code title="This user no longer exists">{entry.userId}</code> : <span className="muted">—</span>)}</td>
                  <td data-label="Duration">{entry.durationMs} ms</td>
                  <td className="wide">
                    <button type="button" aria-expanded={expanded} aria-controls={expanded ? detailsId : undefined} aria-label={`${expanded ? 'Hide' : 'Show'} arguments of ${entry.tool} at ${formatTime(entry.at)}`} onClick={() => toggle(entry._id)}>
                      {expanded ? 'Hide arguments' : 'Show arguments'}
                    </button>
                  </td>
                </tr>
                {expanded ? (
                  <tr id={detailsId}>
                    <td colSpan={7}>
                      <EntryDetails entry={entry} />
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** A key as its owner knows it: its name and visible prefix; its id only when the key is gone. */
function KeyName({ entry }: { entry: Entry }) {
  if (entry.keyName !== null && entry.keyPrefix !== null) {
    return (
      <>
        {entry.keyName} <code className="muted">{entry.keyPrefix}…</code>
      </>
    );
  }
  return entry.keyId ? <code title="This key no longer exists">{entry.keyId}</code> : <span className="muted">—</span>;
}

function EntryDetails({ entry }: { entry: Entry }) {
  return (
    <div className="stack">
      <div>
        <h3>Arguments</h3>
        <pre>{JSON.stringify(entry.arguments, null, 2)}</pre>
      </div>
      {entry.error ? (
        <div>
          <h3>Error</h3>
          <pre className="error">{entry.error}</pre>
        </div>
      ) : null}
      {entry.codeSha256 ? (
        <p className="muted">
          SHA-256 of the code written: <code>{entry.codeSha256}</code>
        </p>
      ) : null}
    </div>
  );
}
