import { resolve } from 'node:path';
import { z } from 'zod';

/** Every environment variable Trellis reads, with its default. README.md documents each one. */
const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  TRELLIS_DATA_DIR: z.string().min(1).default('./data'),
  TRELLIS_DATABASE_URL: z.string().url().optional(),
  TRELLIS_SECRET: z.string().min(32, 'TRELLIS_SECRET must be at least 32 characters').optional(),
  TRELLIS_APP_NAME: z.string().min(1).max(100).default('My Trellis app'),
  TRELLIS_ADMIN_EMAIL: z.string().email().default('owner@example.com'),
  TRELLIS_ADMIN_PASSWORD: z.string().min(8, 'TRELLIS_ADMIN_PASSWORD must be at least 8 characters').optional(),
  TRELLIS_PUBLIC_URL: z.string().url().optional(),
  TRELLIS_SESSION_TTL: z.coerce.number().int().min(60).default(12 * 3600),
  TRELLIS_TOKEN_TTL: z.coerce.number().int().min(60).default(3600),
  TRELLIS_SMTP_URL: z.string().url().optional(),
  TRELLIS_MAIL_FROM: z.string().min(3).default('Trellis <trellis@localhost>'),
  TRELLIS_MAIL_RETRY_BASE_MS: z.coerce.number().int().min(1).max(3_600_000).default(5000),
  TRELLIS_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRELLIS_AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).default(20),
  TRELLIS_MCP_RATE_LIMIT: z.coerce.number().int().min(1).default(60),
  TRELLIS_WEBHOOK_RATE_LIMIT: z.coerce.number().int().min(1).default(10),
  TRELLIS_TRUST_PROXY: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  TRELLIS_HOOK_EGRESS_ALLOW: z.string().default(''),
  TRELLIS_HOOK_TIMEOUT_MS: z.coerce.number().int().min(10).max(300_000).default(5000),
  TRELLIS_HOOK_CPU_MS: z.coerce.number().int().min(1).max(60_000).default(200),
  TRELLIS_HOOK_MEMORY_MB: z.coerce.number().int().min(4).max(1024).default(32),
  TRELLIS_HOOK_WORKERS: z.coerce.number().int().min(1).max(256).default(8),
});

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
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
};

/** Reads the environment once. Throws a message naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(stripEmpty(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid environment:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: resolve(e.TRELLIS_DATA_DIR),
    databaseUrl: e.TRELLIS_DATABASE_URL,
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
    authFailuresPerMinute: e.TRELLIS_AUTH_FAILURES_PER_MINUTE,
    mcpRateLimit: e.TRELLIS_MCP_RATE_LIMIT,
    webhookRateLimit: e.TRELLIS_WEBHOOK_RATE_LIMIT,
    trustProxy: e.TRELLIS_TRUST_PROXY,
    hookEgressAllow: e.TRELLIS_HOOK_EGRESS_ALLOW.split(',').map((entry) => entry.trim()).filter((entry) => entry !== ''),
    hookTimeoutMs: e.TRELLIS_HOOK_TIMEOUT_MS,
    hookCpuMs: e.TRELLIS_HOOK_CPU_MS,
    hookMemoryMb: e.TRELLIS_HOOK_MEMORY_MB,
    hookWorkers: e.TRELLIS_HOOK_WORKERS,
  };
}

function stripEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && value !== '') out[key] = value;
  return out;
}
