import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { createLogger } from '../server.js';
import { censorLogRecord, LOG_CENSOR } from './log-redaction.js';

describe('censorLogRecord', () => {
  it.each([
    ['a password one level down', { input: { email: 'a@example.com', password: 'hunter2' } }, { input: { email: 'a@example.com', password: LOG_CENSOR } }],
    ['an API key, a token and a value', { key: { apiKey: 'k', token: 't', value: 'v', name: 'n' } }, { key: { apiKey: LOG_CENSOR, token: LOG_CENSOR, value: LOG_CENSOR, name: 'n' } }],
    ['an authorization header', { headers: { authorization: 'Bearer abc', accept: '*/*' } }, { headers: { authorization: LOG_CENSOR, accept: '*/*' } }],
    ["a request's authorization header", { req: { method: 'POST', headers: { authorization: 'Bearer abc' } } }, { req: { method: 'POST', headers: { authorization: LOG_CENSOR } } }],
  ])('censors %s', (_case, record, expected) => {
    expect(censorLogRecord(record)).toEqual(expected);
  });

  it('answers the record itself when there is nothing to censor, and never changes the caller’s objects', () => {
    const plain = { method: 'POST', route: '/graphql', status: 200, detail: { a: 1 } };
    expect(censorLogRecord(plain)).toBe(plain);
    const input = { password: 'hunter2' };
    const record = { input };
    censorLogRecord(record);
    expect(record.input).toBe(input);
    expect(input.password).toBe('hunter2');
  });

  it('leaves top-level fields and deeper levels as pino’s `*.password` paths did', () => {
    expect(censorLogRecord({ password: 'top', a: { b: { password: 'deep' } } })).toEqual({ password: 'top', a: { b: { password: 'deep' } } });
  });
});

describe('the server’s logger', () => {
  it('writes no secret of a logged object', () => {
    const lines: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger(loadConfig({ TRELLIS_LOG_FORMAT: 'json' }), Object.assign(out, { isTTY: false }));
    const error = Object.assign(new Error('refused'), { token: 'secret-token' });
    logger.warn({ input: { password: 'hunter2', email: 'a@example.com' }, headers: { authorization: 'Bearer abc' }, err: error }, 'sign-in refused');
    const text = lines.join('');
    for (const secret of ['hunter2', 'Bearer abc', 'secret-token']) expect(text).not.toContain(secret);
    const record = JSON.parse(text) as { input: { email: string }; err: { message: string }; msg: string };
    expect(record.input.email).toBe('a@example.com');
    expect(record.err.message).toBe('refused');
    expect(record.msg).toBe('sign-in refused');
    // A child logger's bindings, at any generation.
    lines.length = 0;
    logger.child({ session: { token: 'bound-secret', user: 'u-1' } }).child({ request: { apiKey: 'nested-key' } }).warn('bound');
    const bound = JSON.parse(lines.join('')) as { session: { user: string } };
    expect(lines.join('')).not.toMatch(/bound-secret|nested-key/);
    expect(bound.session.user).toBe('u-1');
  });
});
