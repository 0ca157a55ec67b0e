import type { RecordOutput } from './record-schema.js';

/** A record as this process last wrote it, and the row version (`xmin`) that write produced. */
export interface RecordVersion {
  record: RecordOutput;
  version: string;
}

/** Records remembered per process; the oldest entry goes first when full. */
export const RECORD_VERSIONS_MAX = 10_000;

/**
 * The records this process wrote last, each with its row version, for the updates that run
 * beforeSave hooks without a transaction (RecordService.updateUnlocked): they run the hooks on
 * the remembered record and write only if the row is still that version. A stale entry (another
 * replica, another path, a deleted record) is caught by that condition and costs one more read;
 * it is never trusted otherwise. Cleared whenever the configuration changes (tables may have
 * changed shape).
 */
export class RecordVersions {
  private readonly entries = new Map<string, RecordVersion>();
  private generation = -1;

  constructor(private readonly max: number = RECORD_VERSIONS_MAX) {}

  get(generation: number, tableId: string, recordId: string): RecordVersion | undefined {
    if (generation !== this.generation) return undefined;
    return this.entries.get(key(tableId, recordId));
  }

  set(generation: number, tableId: string, entry: RecordVersion): void {
    if (generation < this.generation) return;
    if (generation !== this.generation) {
      this.entries.clear();
      this.generation = generation;
    }
    const id = key(tableId, entry.record._id);
    this.entries.delete(id);
    this.entries.set(id, entry);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  delete(tableId: string, recordId: string): void {
    this.entries.delete(key(tableId, recordId));
  }

  get size(): number {
    return this.entries.size;
  }
}

function key(tableId: string, recordId: string): string {
  return `${tableId}\u0000${recordId}`;
}
