import type { Db } from '../platform/db/index.js';
import type { NewRow } from '../platform/db/types.js';
import { auditRow, type McpAuditEntry } from './mcp-log.js';

interface Pending {
  row: NewRow<'mcp_audit_logs'>;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit for the audit entries of read calls. The first entry of a batch waits `windowMs`
 * for others to join; entries that arrive while an insert runs go into the next one. Each caller's
 * promise settles when its own entry is stored, so an answer never leaves before its audit entry
 * exists. Writes keep their entry in their own transaction instead (see recordAudit).
 */
export class McpAuditBatcher {
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly db: Db,
    private readonly windowMs = 2,
    private readonly maxBatch = 500,
  ) {}

  write(entry: McpAuditEntry): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ row: auditRow(entry), resolve, reject });
      if (this.running || this.timer) return;
      if (this.queue.length >= this.maxBatch) void this.drain();
      else this.timer = setTimeout(() => void this.drain(), this.windowMs);
    });
  }

  private async drain(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.running = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        await this.db.insertInto('mcp_audit_logs').values(batch.map((p) => p.row)).execute();
        batch.forEach((p) => p.resolve());
      } catch (error) {
        batch.forEach((p) => p.reject(error));
      }
    }
    this.running = false;
  }
}
