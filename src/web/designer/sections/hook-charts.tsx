// The runs of a hook over the last hour, from the run aggregates (every run is counted there, while
// the run log below keeps failures and a sample of successes): runs and failures per period, and the
// 95th percentile of the duration. Drawn as small SVG charts, no chart library.
import { useDesigner, useLoad } from '../api.js';
import type { HookRunStatsQuery } from '../../graphql-operations.js';
import { ErrorText, Loading } from '../components.js';

export type HookRunPeriod = HookRunStatsQuery['hookRunStats'][number];

const WINDOW_MS = 60 * 60 * 1000;
/** Bars drawn at most: the newest periods of the window. */
const MAX_PERIODS = 60;
const WIDTH = 300;
const HEIGHT = 80;
const FAILURE_COLOR = '#991b1b';
const RUN_COLOR = '#2563eb';
const LINE_COLOR = '#7c3aed';

/** The periods ending with the current one, MAX_PERIODS at most, with 0 runs where none were counted. */
export function fillPeriods(periods: HookRunPeriod[], now: number): HookRunPeriod[] {
  const periodMs = periods[0]?.periodMs ?? 60_000;
  const last = now - (now % periodMs);
  const count = Math.min(MAX_PERIODS, Math.ceil(WINDOW_MS / periodMs));
  const byStart = new Map(periods.map((period) => [Date.parse(period.periodStart), period]));
  return Array.from({ length: count }, (_, index) => {
    const start = last - (count - 1 - index) * periodMs;
    return byStart.get(start) ?? { periodStart: new Date(start).toISOString(), periodMs, runs: 0, failures: 0, durationP95Ms: 0 };
  });
}

function periodName(periodMs: number): string {
  if (periodMs === 60_000) return 'minute';
  return periodMs % 1000 === 0 ? `${periodMs / 1000} s` : `${periodMs} ms`;
}

export default function HookRunCharts({ hookId }: { hookId: string }) {
  const { run } = useDesigner();
  const stats = useLoad(
    () =>
      run<HookRunStatsQuery>(`query HookRunStats($id: ID, $since: DateTime) { hookRunStats(hookId: $id, since: $since) { periodStart periodMs runs failures durationP95Ms } }`, {
        id: hookId,
        since: new Date(Date.now() - WINDOW_MS).toISOString(),
      }),
    [hookId],
  );
  if (stats.error) return <ErrorText error={stats.error} onRetry={stats.reload} />;
  if (!stats.data) return <Loading what="Loading the run counts…" />;
  const counted = stats.data.hookRunStats;
  const periods = fillPeriods(counted, Date.now());
  const runs = counted.reduce((sum, period) => sum + period.runs, 0);
  const failures = counted.reduce((sum, period) => sum + period.failures, 0);
  const slowest = counted.reduce((most, period) => Math.max(most, period.durationP95Ms), 0);
  const per = periodName(periods[0]!.periodMs);
  return (
    <section aria-labelledby="run-charts-title">
      <h3 id="run-charts-title" style={{ margin: '0 0 .25rem' }}>
        Last hour
      </h3>
      <p className="muted" style={{ margin: '0 0 .5rem' }} aria-label="Run summary">
        {runs} {runs === 1 ? 'run' : 'runs'}, {failures} {failures === 1 ? 'failure' : 'failures'}
        {runs ? `, p95 duration up to ${slowest} ms` : ''}. Every run is counted here at the end of its {per === 'minute' ? per : `${per} period`} (a run
        just made shows in the run log first); the run log below keeps every failure, a sample of the successes and the latest run.
      </p>
      <div style={{ display: 'flex', flexWrap: 'wrap', gap: '1rem' }}>
        <RunsChart periods={periods} per={per} />
        <DurationChart periods={periods} per={per} />
      </div>
    </section>
  );
}

/** The time axis under a chart: how long ago its first period began, and now. */
function TimeAxis({ periods }: { periods: HookRunPeriod[] }) {
  const spanMs = periods.length * periods[0]!.periodMs;
  const ago = spanMs >= 60_000 ? `${Math.round(spanMs / 60_000)} min ago` : `${Math.round(spanMs / 1000)} s ago`;
  return (
    <div className="muted" aria-hidden="true" style={{ display: 'flex', justifyContent: 'space-between', fontSize: '.8rem' }}>
      <span>{ago}</span>
      <span>now</span>
    </div>
  );
}

function RunsChart({ periods, per }: { periods: HookRunPeriod[]; per: string }) {
  const most = Math.max(1, ...periods.map((period) => period.runs));
  const width = WIDTH / periods.length;
  const height = (value: number) => (value / most) * (HEIGHT - 12);
  const total = periods.reduce((sum, period) => sum + period.runs, 0);
  const failed = periods.reduce((sum, period) => sum + period.failures, 0);
  return (
    <figure style={{ margin: 0, flex: '1 1 16rem', minWidth: 0 }}>
      <figcaption>
        Runs per {per}, up to {most} <span style={{ color: FAILURE_COLOR }}>(failures in red)</span>
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width="100%" height={HEIGHT} preserveAspectRatio="none" role="img" aria-label={`Runs per ${per} over the last hour: ${total} runs, ${failed} failed, at most ${most} in one ${per}`}>
        <line x1={0} y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} stroke="#94a3b8" strokeWidth={1} />
        {periods.map((period, index) => (
          <g key={period.periodStart}>
            <rect x={index * width + 0.5} y={HEIGHT - height(period.runs)} width={Math.max(0.5, width - 1)} height={height(period.runs)} fill={RUN_COLOR} />
            <rect x={index * width + 0.5} y={HEIGHT - height(period.failures)} width={Math.max(0.5, width - 1)} height={height(period.failures)} fill={FAILURE_COLOR} />
          </g>
        ))}
      </svg>
      <TimeAxis periods={periods} />
    </figure>
  );
}

function DurationChart({ periods, per }: { periods: HookRunPeriod[]; per: string }) {
  const most = Math.max(1, ...periods.map((period) => period.durationP95Ms));
  const step = WIDTH / periods.length;
  const points = periods.map((period, index) => `${(index + 0.5) * step},${HEIGHT - 1 - (period.durationP95Ms / most) * (HEIGHT - 12)}`).join(' ');
  return (
    <figure style={{ margin: 0, flex: '1 1 16rem', minWidth: 0 }}>
      <figcaption>p95 duration per {per}, up to {most} ms</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width="100%" height={HEIGHT} preserveAspectRatio="none" role="img" aria-label={`95th percentile of the run duration per ${per} over the last hour: at most ${most} ms`}>
        <line x1={0} y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} stroke="#94a3b8" strokeWidth={1} />
        <polyline points={points} fill="none" stroke={LINE_COLOR} strokeWidth={1.5} vectorEffect="non-scaling-stroke" />
      </svg>
      <TimeAxis periods={periods} />
    </figure>
  );
}
