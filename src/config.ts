import { resolve } from 'node:path';
import { z } from 'zod';
import { DISK_RESERVE_MB, MIN_DISK_RESERVE_MB } from './platform/db/disk-reserve.js';
import { egressEntryProblem } from './platform/egress-allow-list.js';

/** A URL of one of `protocols` (e.g. 'smtp:') with a host name; `hostless` allows none when a `host` query parameter names a socket folder. */
function urlOf(protocols: readonly string[], hostless = false) {
  const expected = `must be a ${protocols.map((protocol) => `${protocol}//`).join(' or ')} URL with a host`;
  return z.string().superRefine((value, ctx) => {
    // `postgresql://user@/db?host=/run/postgresql` (a socket folder) is what pg takes, not a WHATWG URL.
    if (hostless && protocols.some((protocol) => value.startsWith(`${protocol}//`)) && /\?(?:[^#]*&)?host=[^&#]/.test(value)) return;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: `is not a URL: ${expected}` });
      return;
    }
    if (!protocols.includes(url.protocol)) ctx.addIssue({ code: 'custom', message: `${expected}, not ${url.protocol}//` });
    else if (!url.hostname && !(hostless && url.searchParams.get('host'))) ctx.addIssue({ code: 'custom', message: `${expected}: the host is missing` });
  });
}

/** A whole number from `min` to `max` (coerced from the variable's text), refused with one plain message. */
function wholeNumber(min: number, max?: number) {
  const message = max === undefined ? `must be a whole number of at least ${min}` : `must be a whole number from ${min} to ${max}`;
  const number = z.coerce.number({ error: message }).int({ error: message }).min(min, { error: message });
  return max === undefined ? number : number.max(max, { error: message });
}

const DURATION_UNITS_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d{1,9})([smhd])$/;

/** Milliseconds of a length of time written as a whole number and a unit: `90s`, `5m`, `12h`, `30d`. */
export function durationMs(text: string): number {
  const [, amount, unit] = DURATION.exec(text) ?? [];
  if (!amount || !unit) throw new ConfigError(`not a length of time: ${text}`);
  return Number(amount) * DURATION_UNITS_MS[unit as keyof typeof DURATION_UNITS_MS];
}

/** A number of milliseconds in the largest unit that divides it: 86400000 -> 1d. */
export function describeDuration(ms: number): string {
  const unit = (['d', 'h', 'm', 's'] as const).find((candidate) => ms % DURATION_UNITS_MS[candidate] === 0) ?? 's';
  return `${ms / DURATION_UNITS_MS[unit]}${unit}`;
}

/** A length of time (see durationMs) from `min` to `max` milliseconds, kept as written. */
function duration(min: number, max: number) {
  const message = `must be a whole number followed by s, m, h or d (for example 30d), from ${describeDuration(min)} to ${describeDuration(max)}`;
  return z.string().refine((text) => DURATION.test(text) && durationMs(text) >= min && durationMs(text) <= max, { error: message });
}

/** A setting that cannot be used; its message names each bad variable (no stack is printed for it). */
export class ConfigError extends Error {}

/**
 * Every environment variable Trellis reads, with its default and its meaning. `trellis serve --help`
 * lists them from here (`describeSettings`); README.md documents each one.
 */
const envSchema = z.object({
  PORT: wholeNumber(0, 65535)
    .default(3000).describe('HTTP port (0 picks a free one)'),
  HOST: z.string().min(1).default('127.0.0.1').describe('Interface to listen on (0.0.0.0 for every interface)'),
  TRELLIS_DATA_DIR: z.string().min(1).default('./data').describe('Folder of the embedded database, its lock file and its generated secret'),
  TRELLIS_DATABASE_URL: urlOf(['postgres:', 'postgresql:'], true)
    .optional()
    .describe('postgres://… of a PostgreSQL server; when set, the embedded database is not used'),
  TRELLIS_DISK_RESERVE_MB: wholeNumber(MIN_DISK_RESERVE_MB, 1024 * 1024)
    .default(DISK_RESERVE_MB)
    .describe(
      `Free space, in MB, kept on the disk of the embedded database: below it writes are refused (507) and reads go on. At least ${MIN_DISK_RESERVE_MB}, one segment of the write-ahead log: PGlite 0.5 hangs for good when it cannot create the next one`,
    ),
  TRELLIS_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters')
    .optional()
    .describe('Key material (at least 32 characters) for environment-variable encryption; generated into the data folder when unset, required with TRELLIS_DATABASE_URL'),
  TRELLIS_APP_NAME: z.string().min(1).max(100).default('My Trellis app').describe('Name given to the application on first start'),
  TRELLIS_ADMIN_EMAIL: z.string().email().default('owner@example.com').describe('Owner created on first start'),
  TRELLIS_ADMIN_PASSWORD: z
    .string()
    .min(8, 'must be at least 8 characters')
    .optional()
    .describe("Owner's password on first start (at least 8 characters); generated and printed once when unset"),
  TRELLIS_PUBLIC_URL: urlOf(['https:', 'http:'])
    .optional()
    .describe("The application's public base URL (e.g. https://app.example.com); its host and origin pass the MCP endpoint's Host/Origin checks"),
  TRELLIS_SESSION_TTL: wholeNumber(60)
    .default(12 * 3600).describe('Lifetime of a sign-in session, in seconds'),
  TRELLIS_TOKEN_TTL: wholeNumber(60)
    .default(3600).describe('Lifetime of an integration access token, in seconds'),
  TRELLIS_SMTP_URL: urlOf(['smtp:', 'smtps:'])
    .optional()
    .describe('smtp://user:pass@host:port (or smtps://…) for owner notifications; unset, e-mails stay queued in mail_outbox'),
  TRELLIS_MAIL_FROM: z.string().min(3).default('Trellis <trellis@localhost>').describe('Sender of e-mails'),
  TRELLIS_MAIL_RETRY_BASE_MS: wholeNumber(1, 3_600_000)
    .default(5000)
    .describe('Delay before the first retry of a failed e-mail; doubles after each failure (at most 1 h), 10 attempts in all'),
  TRELLIS_LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('fatal, error, warn, info, debug, trace or silent (log lines on stdout, see TRELLIS_LOG_FORMAT)'),
  TRELLIS_LOG_FORMAT: z
    .enum(['auto', 'pretty', 'json'])
    .default('auto')
    .describe('pretty: one readable line per event, requests answered without a failure only at debug level; json: one JSON object per line (pino), every request answered at info; auto: pretty when stdout is a terminal, json otherwise'),
  TRELLIS_AUTH_FAILURES_PER_MINUTE: wholeNumber(1)
    .default(20)
    .describe("Failed authentications per client IP and minute after which that IP's further failures answer 429 (valid credentials still pass)"),
  TRELLIS_MCP_RATE_LIMIT: wholeNumber(1)
    .default(60).describe('MCP requests allowed per MCP key and minute before 429'),
  TRELLIS_WEBHOOK_RATE_LIMIT: wholeNumber(1)
    .default(10)
    .describe('Webhook calls allowed per minute, all webhooks of the application together, before 429 (per server instance)'),
  TRELLIS_TRUST_PROXY: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .describe('true behind a reverse proxy, so client IPs come from X-Forwarded-For'),
  TRELLIS_HOOK_EGRESS_ALLOW: z
    .string()
    .default('')
    .superRefine((value, ctx) => {
      for (const entry of value.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
        const problem = egressEntryProblem(entry.toLowerCase());
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }
    })
    .describe('Comma-separated host, host:port, IP addresses or CIDR ranges hook code may fetch although they are loopback, private, link-local, documentation or otherwise special-purpose, or an address of this server (all refused by default)'),
  TRELLIS_HOOK_TIMEOUT_MS: wholeNumber(10, 300_000)
    .default(5000)
    .describe('Wall-clock limit of one hook run, awaited fetch and db calls included'),
  TRELLIS_HOOK_CPU_MS: wholeNumber(1, 60_000)
    .default(200)
    .describe('Computation limit of one hook run (an endless loop is stopped after this)'),
  TRELLIS_HOOK_MEMORY_MB: wholeNumber(4, 1024)
    .default(32)
    .describe("Memory limit of one hook run; the engine's whole heap in the run's worker is capped at this plus 16 MB"),
  TRELLIS_HOOK_WORKERS: wholeNumber(1, 256)
    .default(8)
    .describe('Worker threads running hook code (started on demand; after a minute without a run all but one stop); a run that waits for one longer than twice TRELLIS_HOOK_TIMEOUT_MS fails as timeout'),
  TRELLIS_RUN_LOG_SAMPLES_PER_MINUTE: wholeNumber(0, 1_000_000)
    .default(5)
    .describe(
      'Successful runs of each hook kept whole in the run log per minute (per server instance); every failed run is kept, and the latest run of each hook; the others are only counted in the per-minute aggregates',
    ),
  TRELLIS_RUN_STATS_PERIOD_MS: wholeNumber(100, 3_600_000)
    .default(60_000)
    .describe('Length of one period of the run aggregates (runs, failures, durations per hook), in ms; each is written once it has ended, and at shutdown'),
  TRELLIS_RUN_LOG_RETENTION: duration(60_000, 3650 * 86_400_000)
    .default('30d')
    .describe('How long runs stay in the run log (failures and sampled successes, with their redacted input and output), e.g. 30d, 12h, 5m'),
  TRELLIS_RUN_STATS_RETENTION: duration(60_000, 3650 * 86_400_000)
    .default('90d')
    .describe('How long the per-minute run aggregates (counts and durations, no record data) are kept'),
  TRELLIS_AUDIT_RETENTION: duration(60_000, 3650 * 86_400_000)
    .default('365d')
    .describe("How long audit entries are kept, the MCP audit's and the builder's (the spec requires one year)"),
  TRELLIS_MAIL_RETENTION: duration(60_000, 3650 * 86_400_000)
    .default('30d')
    .describe('How long e-mail stays in the outbox once sent (unsent e-mail stays until it is sent)'),
  TRELLIS_RETENTION_SWEEP_INTERVAL: duration(1000, 86_400_000)
    .default('1h')
    .describe('How often expired run-log entries, aggregates and audit entries are deleted (in batches); the first sweep runs a minute after start'),
  TRELLIS_METRICS_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters')
    .optional()
    .describe('Bearer token that GET /metrics (Prometheus) requires; unset, /metrics answers only direct loopback callers that name localhost or a loopback IP'),
});

/** One environment variable as `trellis serve --help` lists it. */
export interface SettingDescription {
  name: string;
  /** The value used when the variable is unset or empty, as it would be written; undefined when there is none. */
  defaultValue: string | undefined;
  meaning: string;
}

/** Every setting, in the order of the schema, with its default and meaning. */
export function describeSettings(): SettingDescription[] {
  const defaults = envSchema.parse({}) as Record<string, unknown>;
  return Object.entries(envSchema.shape).map(([name, schema]) => {
    const value = defaults[name];
    return {
      name,
      defaultValue: value === undefined || value === '' ? undefined : String(value),
      meaning: schema.description ?? '',
    };
  });
}

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Free space kept on the embedded database's disk; writes are refused (507) below it. */
  diskReserveMb: number;
  secret: string | undefined;
  appName: string;
  adminEmail: string;
  adminPassword: string | undefined;
  publicUrl: string | undefined;
  sessionTtlSeconds: number;
  tokenTtlSeconds: number;
  smtpUrl: string | undefined;
  mailFrom: string;
  /** First retry delay of a failed e-mail; each further failure doubles it, up to one hour. */
  mailRetryBaseMs: number;
  logLevel: z.infer<typeof envSchema>['TRELLIS_LOG_LEVEL'];
  /** How log lines are written; `auto` chooses `pretty` when stdout is a terminal (see createLogger). */
  logFormat: z.infer<typeof envSchema>['TRELLIS_LOG_FORMAT'];
  authFailuresPerMinute: number;
  /** MCP requests allowed per key and minute before 429. */
  mcpRateLimit: number;
  /** Webhook calls allowed per minute, all webhooks together, before 429 (spec section 8). */
  webhookRateLimit: number;
  trustProxy: boolean;
  /** Hosts (`host`, `host:port`), addresses and CIDR ranges hook code may fetch although they are loopback, private or link-local. */
  hookEgressAllow: string[];
  /** Wall-clock limit of one hook run, awaited fetches and db calls included. */
  hookTimeoutMs: number;
  /** Limit on the time one hook run spends computing. */
  hookCpuMs: number;
  hookMemoryMb: number;
  /** Hook runs at a time, each in a worker thread of its own; further runs wait for a free one. */
  hookWorkers: number;
  /** The bearer token /metrics requires; unset, only direct loopback callers may read it. */
  metricsToken: string | undefined;
  /** Successful runs of a hook kept whole per minute (per instance); failures and the latest run are always kept. */
  runLogSamplesPerMinute: number;
  /** Length of one period of the run aggregates (hook_run_stats), in ms. */
  runStatsPeriodMs: number;
  /** How long run-log rows, run aggregates and MCP audit entries are kept, in ms. */
  runLogRetentionMs: number;
  runStatsRetentionMs: number;
  auditRetentionMs: number;
  mailRetentionMs: number;
  /** Time between two retention sweeps, in ms. */
  retentionSweepIntervalMs: number;
};

/** Reads the environment once. Throws a message naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(stripEmpty(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid environment:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: resolve(e.TRELLIS_DATA_DIR),
    databaseUrl: e.TRELLIS_DATABASE_URL,
    diskReserveMb: e.TRELLIS_DISK_RESERVE_MB,
    secret: e.TRELLIS_SECRET,
    appName: e.TRELLIS_APP_NAME,
    adminEmail: e.TRELLIS_ADMIN_EMAIL.toLowerCase(),
    adminPassword: e.TRELLIS_ADMIN_PASSWORD,
    publicUrl: e.TRELLIS_PUBLIC_URL,
    sessionTtlSeconds: e.TRELLIS_SESSION_TTL,
    tokenTtlSeconds: e.TRELLIS_TOKEN_TTL,
    smtpUrl: e.TRELLIS_SMTP_URL,
    mailFrom: e.TRELLIS_MAIL_FROM,
    mailRetryBaseMs: e.TRELLIS_MAIL_RETRY_BASE_MS,
    logLevel: e.TRELLIS_LOG_LEVEL,
    logFormat: e.TRELLIS_LOG_FORMAT,
    authFailuresPerMinute: e.TRELLIS_AUTH_FAILURES_PER_MINUTE,
    mcpRateLimit: e.TRELLIS_MCP_RATE_LIMIT,
    webhookRateLimit: e.TRELLIS_WEBHOOK_RATE_LIMIT,
    trustProxy: e.TRELLIS_TRUST_PROXY,
    hookEgressAllow: e.TRELLIS_HOOK_EGRESS_ALLOW.split(',').map((entry) => entry.trim()).filter((entry) => entry !== ''),
    hookTimeoutMs: e.TRELLIS_HOOK_TIMEOUT_MS,
    hookCpuMs: e.TRELLIS_HOOK_CPU_MS,
    hookMemoryMb: e.TRELLIS_HOOK_MEMORY_MB,
    hookWorkers: e.TRELLIS_HOOK_WORKERS,
    metricsToken: e.TRELLIS_METRICS_TOKEN,
    runLogSamplesPerMinute: e.TRELLIS_RUN_LOG_SAMPLES_PER_MINUTE,
    runStatsPeriodMs: e.TRELLIS_RUN_STATS_PERIOD_MS,
    runLogRetentionMs: durationMs(e.TRELLIS_RUN_LOG_RETENTION),
    runStatsRetentionMs: durationMs(e.TRELLIS_RUN_STATS_RETENTION),
    auditRetentionMs: durationMs(e.TRELLIS_AUDIT_RETENTION),
    mailRetentionMs: durationMs(e.TRELLIS_MAIL_RETENTION),
    retentionSweepIntervalMs: durationMs(e.TRELLIS_RETENTION_SWEEP_INTERVAL),
  };
}

function stripEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && value !== '') out[key] = value;
  return out;
}
