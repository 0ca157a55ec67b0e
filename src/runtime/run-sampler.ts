import type { HookRunRecord } from './run-log.js';

/** Whether a run failed: its code threw, ran out of time or memory, or its webhook answered 4xx/5xx. */
export function isFailedRun(run: Pick<HookRunRecord, 'outcome' | 'httpStatus'>): boolean {
  return run.outcome !== 'ok' || (run.httpStatus !== null && run.httpStatus >= 400);
}

export interface RunSamplerOptions {
  /** Successful runs of one hook kept per minute; scaled to the period. */
  samplesPerMinute: number;
  /** The period the budget renews with (the run aggregates' period). */
  periodMs: number;
}

/**
 * Chooses the runs the run log keeps whole: every failure, every run asked for (a designer's test
 * run), and of the successes of each hook the first few of each period (the budget, on this
 * replica). The latest run of each hook is held back when not kept, for `takeLatest` to write at the
 * end of the period, so the log always shows how each hook last ran.
 */
export class RunSampler {
  private readonly budget: number;
  private readonly taken = new Map<string, { periodStart: number; count: number }>();
  private readonly latest = new Map<string, HookRunRecord>();

  constructor(private readonly options: RunSamplerOptions) {
    this.budget = Math.ceil((options.samplesPerMinute * options.periodMs) / 60_000);
  }

  /** Whether `run` is written now; if not, it is held as the latest run of its hook. */
  keep(run: HookRunRecord, always = false): boolean {
    if (always || isFailedRun(run) || this.takeSample(run)) {
      this.latest.delete(run.hookId);
      return true;
    }
    this.latest.set(run.hookId, run);
    return false;
  }

  /** The latest run of each hook that was not kept, handed over once. */
  takeLatest(): HookRunRecord[] {
    const runs = [...this.latest.values()];
    this.latest.clear();
    return runs;
  }

  /** Forgets the budgets of periods that ended before `now`: hooks that stopped running (or were deleted) leave nothing behind. */
  forgetEnded(now: number): void {
    for (const [hookId, taken] of this.taken) if (taken.periodStart + this.options.periodMs <= now) this.taken.delete(hookId);
  }

  private takeSample(run: HookRunRecord): boolean {
    const time = run.startedAt.getTime();
    const periodStart = time - (time % this.options.periodMs);
    const taken = this.taken.get(run.hookId);
    // A run that started in an earlier period and ended late counts against the current budget.
    if (!taken || periodStart > taken.periodStart) {
      this.taken.set(run.hookId, { periodStart, count: this.budget > 0 ? 1 : 0 });
      return this.budget > 0;
    }
    if (taken.count >= this.budget) return false;
    taken.count += 1;
    return true;
  }
}
