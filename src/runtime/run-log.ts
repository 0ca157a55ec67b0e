import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../platform/db/index.js';

/** One `hook_runs` row; console lines and error already redacted. */
export interface HookRunRecord {
  hookId: string;
  hookName: string;
  trigger: string;
  durationMs: number;
  outcome: 'ok' | 'error' | 'timeout' | 'memory';
  console: string[];
  error: string | null;
}

/** How long records gather before an insert: under load one insert serves every run of the window. */
export const RUN_LOG_WINDOW_MS = 25;

/**
 * Stores run records in the background, several per insert. A run never waits for its row: a
 * `beforeSave` hook runs inside the record's transaction, and on the embedded database (one
 * connection) an insert awaited there would wait for that same transaction. A hook deleted in
 * the meantime leaves its rows with `hook_id` null.
 */
export class HookRunLog {
  private queue: HookRunRecord[] = [];
  private draining: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  record(run: HookRunRecord): void {
    this.queue.push(run);
    this.draining ??= new Promise<void>((resolve) => setTimeout(resolve, RUN_LOG_WINDOW_MS)).then(() => this.drain());
  }

  /** Resolves when every record given so far is stored (or its failure logged). */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, 200);
      try {
        await this.db
          .insertInto('hook_runs')
          .values(
            batch.map((run) => ({
              hook_id: sql<string | null>`(select id from hooks where id = ${run.hookId})`,
              hook_name: run.hookName,
              trigger: run.trigger,
              duration_ms: Math.round(run.durationMs),
              outcome: run.outcome,
              console: JSON.stringify(run.console),
              error: run.error,
            })),
          )
          .execute();
      } catch (error) {
        this.logger.error({ err: error, runs: batch.length }, 'could not store hook runs');
      }
    }
    this.draining = undefined;
  }
}
