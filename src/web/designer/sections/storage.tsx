// Settings › Storage (admins): what the database holds, as `trellis db stats` prints it: its size
// (and the embedded data folder's), what the run log, its aggregates and the MCP audit keep and for
// how long, and each table and index, largest first (the largest tables at first, every one on demand).
import { useState } from 'react';
import { useDesigner, useLoad } from '../api.js';
import type { StorageStatsQuery } from '../../graphql-operations.js';
import { ErrorText, formatTime, Loading } from '../components.js';

type StorageStats = StorageStatsQuery['storageStats'];
type TableStorage = StorageStats['tables'][number];

const LOAD = `query StorageStats { storageStats {
  database databaseBytes dataFolderBytes
  tables { name label rows deadRows tableBytes indexBytes totalBytes partitions lastVacuum lastAutovacuum }
  indexes { name table bytes }
  runLog { rows oldest retention failures samplesPerMinute }
  runStats { rows oldest retention periodMs }
  mcpAudit { rows oldest retention }
} }`;

/** Bytes as people read them: 512 B, 1.5 kB, 23.4 MB (powers of 1024), as the CLI prints them. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** Tables listed before "Show all": the largest, where the space is; every table on demand (there are 30 and more). */
export const LARGEST_TABLES_SHOWN = 10;

const count = (value: number) => value.toLocaleString('en');
const since = (oldest: string | null) => (oldest ? `, oldest ${formatTime(oldest)}` : '');

export default function StorageStatsPanel() {
  const { run } = useDesigner();
  const stats = useLoad(() => run<StorageStatsQuery>(LOAD), []);
  const data = stats.data?.storageStats;
  const [allTables, setAllTables] = useState(false);
  const tables = data ? (allTables ? data.tables : data.tables.slice(0, LARGEST_TABLES_SHOWN)) : [];
  return (
    <section className="panel" aria-labelledby="storage-title">
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h2 id="storage-title" style={{ margin: 0 }}>
          Storage
        </h2>
        <button type="button" onClick={stats.reload} disabled={stats.loading}>
          Refresh
        </button>
      </div>
      <ErrorText error={stats.error} onRetry={stats.reload} />
      {!data ? (
        stats.loading ? <Loading what="Measuring the database…" /> : null
      ) : (
        <>
          <dl aria-label="Storage summary" style={{ margin: '.75rem 0' }}>
            <dt>Database</dt>
            <dd>
              {data.database === 'embedded' ? 'Embedded (PGlite)' : 'PostgreSQL'}, {formatBytes(data.databaseBytes)}
              {data.dataFolderBytes === null ? null : `; data folder ${formatBytes(data.dataFolderBytes)}`}
            </dd>
            <dt>Run log</dt>
            <dd>
              {count(data.runLog.rows)} runs kept ({count(data.runLog.failures)} failed){since(data.runLog.oldest)}, kept {data.runLog.retention}. Every failure is kept; of the successes {data.runLog.samplesPerMinute} per hook and minute, and the latest.
            </dd>
            <dt>Run counts</dt>
            <dd>
              {count(data.runStats.rows)} hook periods of {data.runStats.periodMs / 1000} s{since(data.runStats.oldest)}, kept {data.runStats.retention}.
            </dd>
            <dt>MCP audit</dt>
            <dd>
              {count(data.mcpAudit.rows)} entries{since(data.mcpAudit.oldest)}, kept {data.mcpAudit.retention}.
            </dd>
          </dl>
          <div className="scroll-x" role="region" aria-label="Tables by size" tabIndex={0}>
            <table className="grid">
              <caption style={{ textAlign: 'left' }}>
                Tables, largest first{tables.length < data.tables.length ? `: the ${tables.length} largest of ${data.tables.length}` : ''} (rows are estimates from the statistics)
              </caption>
              <thead>
                <tr>
                  <th scope="col">Table</th>
                  <th scope="col">Rows</th>
                  <th scope="col">Dead rows</th>
                  <th scope="col">Data</th>
                  <th scope="col">Indexes</th>
                  <th scope="col">Total</th>
                  <th scope="col">Last vacuum</th>
                </tr>
              </thead>
              <tbody>
                {tables.map((table) => (
                  <tr key={table.name}>
                    <th scope="row" style={{ fontWeight: 'normal', fontSize: 'inherit', color: 'inherit' }}>
                      {table.label ? (
                        <>
                          {table.label} <small className="muted">{table.name}</small>
                        </>
                      ) : (
                        table.name
                      )}
                      {table.partitions > 1 ? <small className="muted"> · {table.partitions} partitions</small> : null}
                    </th>
                    <td data-label="Rows">{count(table.rows)}</td>
                    <td data-label="Dead rows">{count(table.deadRows)}</td>
                    <td data-label="Data">{formatBytes(table.tableBytes)}</td>
                    <td data-label="Indexes">{formatBytes(table.indexBytes)}</td>
                    <td data-label="Total">{formatBytes(table.totalBytes)}</td>
                    <td data-label="Last vacuum">{lastVacuum(table)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {data.tables.length > LARGEST_TABLES_SHOWN ? (
            <button type="button" style={{ marginTop: '.5rem' }} onClick={() => setAllTables((all) => !all)}>
              {allTables ? `Show the ${LARGEST_TABLES_SHOWN} largest tables` : `Show all ${data.tables.length} tables`}
            </button>
          ) : null}
          <details style={{ marginTop: '.75rem' }}>
            <summary>Indexes ({data.indexes.length})</summary>
            <div className="scroll-x" role="region" aria-label="Indexes by size" tabIndex={0}>
              <table className="grid">
                <thead>
                  <tr>
                    <th scope="col">Index</th>
                    <th scope="col">Table</th>
                    <th scope="col">Size</th>
                  </tr>
                </thead>
                <tbody>
                  {data.indexes.map((index) => (
                    <tr key={index.name}>
                      <td>{index.name}</td>
                      <td data-label="Table">{index.table}</td>
                      <td data-label="Size">{formatBytes(index.bytes)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </details>
        </>
      )}
    </section>
  );
}

/** The later of the last vacuum and the last autovacuum, or a dash. */
function lastVacuum(table: TableStorage): string {
  const times = [table.lastVacuum, table.lastAutovacuum].filter((time): time is string => time !== null).sort();
  return times.length ? formatTime(times[times.length - 1]) : '–';
}
