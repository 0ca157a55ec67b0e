import { describe, expect, it } from 'vitest';
import { ConfigError, describeDuration, loadConfig } from './config.js';

describe('TRELLIS_HOOK_WORKERS', () => {
  it('defaults to 8 and takes a whole number from 1 to 256', () => {
    expect(loadConfig({}).hookWorkers).toBe(8);
    expect(loadConfig({ TRELLIS_HOOK_WORKERS: '2' }).hookWorkers).toBe(2);
  });

  it.each([['0'], ['257'], ['1.5'], ['many']])('refuses %s with a message naming the variable', (value) => {
    expect(() => loadConfig({ TRELLIS_HOOK_WORKERS: value })).toThrow(/Invalid environment:\n {2}TRELLIS_HOOK_WORKERS: /);
  });
});

describe('URLs and the egress allow-list', () => {
  it.each([
    ['TRELLIS_SMTP_URL', 'http://mail.example.com', 'must be a smtp:// or smtps:// URL with a host, not http://'],
    ['TRELLIS_SMTP_URL', 'smtp://', 'the host is missing'],
    ['TRELLIS_SMTP_URL', 'mail.example.com:25', 'must be a smtp:// or smtps:// URL with a host, not mail.example.com://'],
    ['TRELLIS_DATABASE_URL', 'mysql://db/trellis', 'must be a postgres:// or postgresql:// URL with a host, not mysql://'],
    ['TRELLIS_DATABASE_URL', 'not a url', 'is not a URL'],
    ['TRELLIS_PUBLIC_URL', 'ftp://app.example.com', 'must be a https:// or http:// URL with a host, not ftp://'],
    ['TRELLIS_HOOK_EGRESS_ALLOW', 'hooks.internal, not a host!!', "'not a host!!' is not a host, host:port, IP address or CIDR range"],
    ['TRELLIS_HOOK_EGRESS_ALLOW', '10.0.0.0/99', "'10.0.0.0/99' is not a valid CIDR range"],
  ])('refuses %s=%s naming the variable and the problem', (name, value, problem) => {
    expect(() => loadConfig({ [name]: value })).toThrow(`Invalid environment:\n  ${name}: `);
    expect(() => loadConfig({ [name]: value })).toThrow(problem);
  });

  it('names every bad variable in one message', () => {
    expect(() => loadConfig({ TRELLIS_SMTP_URL: 'http://x', PORT: '70000', TRELLIS_HOOK_EGRESS_ALLOW: '1.2.3.4/40' })).toThrow(
      /PORT: [^\n]+\n {2}TRELLIS_SMTP_URL: [^\n]+\n {2}TRELLIS_HOOK_EGRESS_ALLOW: /,
    );
  });

  it('takes the URLs and entries that are right, a socket folder for PostgreSQL included', () => {
    const config = loadConfig({
      TRELLIS_SMTP_URL: 'smtps://user:pass@mail.example.com:465',
      TRELLIS_DATABASE_URL: 'postgresql://trellis@/trellis?host=/var/run/postgresql',
      TRELLIS_PUBLIC_URL: 'https://app.example.com',
      TRELLIS_HOOK_EGRESS_ALLOW: 'hooks.internal:8080, 10.0.0.0/8, ::1, 127.0.0.1',
    });
    expect(config.hookEgressAllow).toEqual(['hooks.internal:8080', '10.0.0.0/8', '::1', '127.0.0.1']);
    expect(config.smtpUrl).toBe('smtps://user:pass@mail.example.com:465');
  });
});

describe('TRELLIS_METRICS_TOKEN', () => {
  it.each([['a'], ['fifteen-chars-x']])('refuses %s, shorter than 16 characters, with a message naming the variable', (token) => {
    expect(() => loadConfig({ TRELLIS_METRICS_TOKEN: token })).toThrow('Invalid environment:\n  TRELLIS_METRICS_TOKEN: must be at least 16 characters');
  });

  it('takes a token of 16 characters or more, and none when unset', () => {
    expect(loadConfig({ TRELLIS_METRICS_TOKEN: 'sixteen-chars-xx' }).metricsToken).toBe('sixteen-chars-xx');
    expect(loadConfig({}).metricsToken).toBeUndefined();
  });
});

describe('TRELLIS_DISK_RESERVE_MB', () => {
  it('defaults to 32 and takes a whole number of MB from 16, one segment of the write-ahead log', () => {
    expect(loadConfig({}).diskReserveMb).toBe(32);
    expect(loadConfig({ TRELLIS_DISK_RESERVE_MB: '16' }).diskReserveMb).toBe(16);
    expect(loadConfig({ TRELLIS_DISK_RESERVE_MB: '512' }).diskReserveMb).toBe(512);
  });

  it.each(['0', '15', '1.5', '33554432', 'lots'])('refuses %s with a message naming the variable and the range', (value) => {
    expect(() => loadConfig({ TRELLIS_DISK_RESERVE_MB: value })).toThrow(
      new ConfigError('Invalid environment:\n  TRELLIS_DISK_RESERVE_MB: must be a whole number from 16 to 1048576'),
    );
  });

  it('is named in the same message as the other bad variables', () => {
    expect(() => loadConfig({ PORT: '70000', TRELLIS_DISK_RESERVE_MB: '8' })).toThrow(/PORT: [^\n]+\n {2}TRELLIS_DISK_RESERVE_MB: [^\n]+$/);
  });
});

describe('the run log and retention settings', () => {
  const DAY_MS = 24 * 60 * 60 * 1000;

  it('default to 5 samples a minute, one-minute aggregates, a 30-day run log, 90-day aggregates, the audit’s year and an hourly sweep', () => {
    expect(loadConfig({})).toMatchObject({
      runLogSamplesPerMinute: 5,
      runStatsPeriodMs: 60_000,
      runLogRetentionMs: 30 * DAY_MS,
      runStatsRetentionMs: 90 * DAY_MS,
      auditRetentionMs: 365 * DAY_MS,
      retentionSweepIntervalMs: 3_600_000,
    });
  });

  it.each([
    ['90s', 90_000],
    ['5m', 300_000],
    ['12h', 12 * 3_600_000],
    ['730d', 730 * DAY_MS],
  ])('reads a retention of %s as %i ms', (text, ms) => {
    expect(loadConfig({ TRELLIS_RUN_LOG_RETENTION: text }).runLogRetentionMs).toBe(ms);
  });

  it.each(['30', '5 m', '1w', '-5m', '30s'])('refuses a retention of %s, naming the variable, the form and the range', (text) => {
    expect(() => loadConfig({ TRELLIS_AUDIT_RETENTION: text })).toThrow(
      new ConfigError('Invalid environment:\n  TRELLIS_AUDIT_RETENTION: must be a whole number followed by s, m, h or d (for example 30d), from 1m to 3650d'),
    );
  });

  it('describes a number of ms in the largest unit that divides it', () => {
    expect([describeDuration(365 * DAY_MS), describeDuration(3_600_000), describeDuration(90_000), describeDuration(1500)]).toEqual(['365d', '1h', '90s', '1.5s']);
  });
});

describe('TRELLIS_LOG_FORMAT', () => {
  it('defaults to auto and takes pretty and json', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ TRELLIS_LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(loadConfig({ TRELLIS_LOG_FORMAT: 'json' }).logFormat).toBe('json');
  });

  it('refuses another format with a message naming the variable', () => {
    expect(() => loadConfig({ TRELLIS_LOG_FORMAT: 'xml' })).toThrow(/TRELLIS_LOG_FORMAT: /);
  });
});
