import type { StorageStats, TableStorage } from '../storage/service.js';

/** Bytes as people read them: 512 B, 1.5 kB, 23.4 MB, 1.2 GB (powers of 1024). */
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

/** A date as the CLI prints it (ISO, to the second); dates may arrive as ISO strings from a server. */
function when(value: Date | string | null): string {
  return value === null ? '-' : new Date(value).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function tableName(table: TableStorage): string {
  const partitions = table.partitions > 1 ? ` [${table.partitions} partitions]` : '';
  return `${table.label ? `${table.label} (${table.name})` : table.name}${partitions}`;
}

/** Lines of columns padded to their widest cell; numbers aligned right. */
function columns(rows: string[][], rightAligned: ReadonlySet<number>): string[] {
  const widths = rows[0]!.map((_, index) => Math.max(...rows.map((row) => row[index]!.length)));
  return rows.map((row) => row.map((cell, index) => (rightAligned.has(index) ? cell.padStart(widths[index]!) : cell.padEnd(widths[index]!))).join('  ').trimEnd());
}

/**
 * `trellis db stats` for people: the database's size (and the embedded data folder's), what the
 * run log, its aggregates and the MCP audit keep and for how long, then one line per table and
 * per index, largest first.
 */
export function describeStorageStats(stats: StorageStats): string {
  const folder = stats.dataFolderBytes === null ? '' : `; data folder ${formatBytes(stats.dataFolderBytes)}`;
  const lines = [
    `Database: ${stats.database === 'embedded' ? 'embedded (PGlite)' : 'PostgreSQL'}, ${formatBytes(stats.databaseBytes)}${folder}`,
    `Run log: ${stats.runLog.rows} runs kept (${stats.runLog.failures} failed), oldest ${when(stats.runLog.oldest)}, kept ${stats.runLog.retention}; every failure kept, successes sampled ${stats.runLog.samplesPerMinute} per hook per minute`,
    `Run aggregates: ${stats.runStats.rows} hook periods of ${stats.runStats.periodMs / 1000} s, oldest ${when(stats.runStats.oldest)}, kept ${stats.runStats.retention}`,
    `MCP audit: ${stats.mcpAudit.rows} entries, oldest ${when(stats.mcpAudit.oldest)}, kept ${stats.mcpAudit.retention}`,
    '',
  ];
  const tableRows = stats.tables.map((table) => [
    tableName(table),
    String(table.rows),
    String(table.deadRows),
    formatBytes(table.tableBytes),
    formatBytes(table.indexBytes),
    formatBytes(table.totalBytes),
    when(table.lastVacuum),
    when(table.lastAutovacuum),
  ]);
  lines.push(...columns([['Table', 'Rows (est.)', 'Dead rows', 'Data', 'Indexes', 'Total', 'Last vacuum', 'Last autovacuum'], ...tableRows], new Set([1, 2, 3, 4, 5])), '');
  const indexRows = stats.indexes.map((index) => [index.name, index.table, formatBytes(index.bytes)]);
  lines.push(...columns([['Index', 'Table', 'Size'], ...indexRows], new Set([2])));
  return lines.join('\n');
}
