import { sql } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DatabaseHandle } from './db/index.js';
import { MAIL_MAX_ATTEMPTS } from './mail.js';

/** Latency buckets (seconds) for HTTP answers, tool calls and hook runs: 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];


/**
 * The Prometheus metrics of one server, in a registry of its own (several servers may share a
 * process in tests). Counters and histograms are updated where things happen; gauges that need
 * the database (mail outbox) are read when `/metrics` is scraped. Process metrics (memory, CPU,
 * event-loop lag, GC) start with the first scrape, so that a server nobody scrapes pays nothing.
 */
export class Metrics {
  readonly registry = new Registry();
  private defaultsStarted = false;

  readonly httpRequests = new Counter({
    name: 'trellis_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'trellis_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by method, route pattern and status class',
    labelNames: ['method', 'route', 'status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly mcpToolCalls = new Counter({
    name: 'trellis_mcp_tool_calls_total',
    help: 'MCP tool calls, by tool and outcome (ok, error, denied)',
    labelNames: ['tool', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly mcpToolDuration = new Histogram({
    name: 'trellis_mcp_tool_call_duration_seconds',
    help: 'Duration of MCP tool calls, by tool',
    labelNames: ['tool'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly hookRuns = new Counter({
    name: 'trellis_hook_runs_total',
    help: 'Hook runs, by hook type (beforeSave, afterSave, webHook) and outcome (ok, refused: a webhook that answered 4xx or 5xx, error, timeout, memory)',
    labelNames: ['type', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly hookDuration = new Histogram({
    name: 'trellis_hook_run_duration_seconds',
    help: 'Duration of hook runs including the wait for a worker, by hook type',
    labelNames: ['type'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly hookQueueWait = new Histogram({
    name: 'trellis_hook_queue_wait_seconds',
    help: 'Time hook runs waited for a hook worker while others held them all, by hook type',
    labelNames: ['type'] as const,
    buckets: [0, ...LATENCY_BUCKETS],
    registers: [this.registry],
  });

  /** Given to each rate limiter, which counts its own refusals. */
  readonly rateLimited = new Counter({
    name: 'trellis_rate_limit_refusals_total',
    help: 'Requests refused with 429, by limit (mcp, webhook, auth-failures)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly mailFailures = new Counter({
    name: 'trellis_mail_delivery_failures_total',
    help: 'Failed attempts to deliver an e-mail over SMTP',
    registers: [this.registry],
  });

  constructor(database: DatabaseHandle) {
    const registers = [this.registry];
    new Gauge({
      name: 'trellis_db_pool_connections',
      help: 'Connections of the PostgreSQL pool, by state (total, idle, waiting: queries queued for a connection); the embedded database has one connection',
      labelNames: ['state'] as const,
      registers,
      collect() {
        const stats = database.poolStats?.() ?? { total: 1, idle: 0, waiting: 0 };
        for (const [state, value] of Object.entries(stats)) this.set({ state }, value);
      },
    });
    new Gauge({
      name: 'trellis_mail_outbox_queued',
      help: 'E-mails waiting in the outbox: state pending (will be tried again) or failed (gave up after the last attempt)',
      labelNames: ['state'] as const,
      registers,
      async collect() {
        const { rows } = await sql<{ pending: number; failed: number }>`
          select count(*) filter (where attempts < ${MAIL_MAX_ATTEMPTS})::int as pending,
                 count(*) filter (where attempts >= ${MAIL_MAX_ATTEMPTS})::int as failed
          from mail_outbox where sent_at is null`.execute(database.db);
        this.set({ state: 'pending' }, rows[0]?.pending ?? 0);
        this.set({ state: 'failed' }, rows[0]?.failed ?? 0);
      },
    });
  }

  /** The exposition text of every metric. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    if (!this.defaultsStarted) {
      this.defaultsStarted = true;
      collectDefaultMetrics({ register: this.registry, prefix: 'trellis_' });
    }
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
