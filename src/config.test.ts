import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

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
