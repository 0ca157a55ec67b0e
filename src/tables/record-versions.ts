import type { RecordOutput } from './record-schema.js';

/**
 * A record as this process last wrote it, and the row version (`xmin`) that write produced: what
 * the updates that run beforeSave hooks without a transaction (RecordService.updateUnlocked) run
 * the hooks on, writing only if the row is still that version. A stale entry (another replica,
 * another path, a deleted record) is caught by that condition and costs one more read; it is never
 * trusted otherwise. RecordService keeps them in a ReadCache, forgotten at any configuration change
 * (tables may have changed shape).
 */
export interface RecordVersion {
  record: RecordOutput;
  version: string;
}

/** Records remembered per process; the one written longest ago goes first when full. */
export const RECORD_VERSIONS_MAX = 10_000;

/** The key of a record's remembered version. */
export function versionKey(tableId: string, recordId: string): string {
  return `${tableId}\u0000${recordId}`;
}
