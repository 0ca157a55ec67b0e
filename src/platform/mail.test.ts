import { describe, expect, it } from 'vitest';
import { MAIL_MAX_ATTEMPTS, describeMailError, retryDelayMs } from './mail.js';

describe('retryDelayMs', () => {
  it.each([
    [1, 5_000],
    [2, 10_000],
    [3, 20_000],
    [4, 40_000],
    [9, 1_280_000],
  ])('waits %i failure(s) -> %i ms with the default 5 s base', (failures, delay) => {
    expect(retryDelayMs(failures, 5_000)).toBe(delay);
  });

  it('never waits longer than one hour', () => {
    expect(retryDelayMs(9, 60_000)).toBe(3_600_000);
  });

  it('gives up after the last attempt', () => {
    expect(MAIL_MAX_ATTEMPTS).toBe(10);
    expect(retryDelayMs(MAIL_MAX_ATTEMPTS, 5_000)).toBeUndefined();
  });
});

describe('describeMailError', () => {
  it.each([
    ['the plain password', 'smtp://mailer:s3cret@mail.example.com:587', 'Invalid login for s3cret', 'Invalid login for ***'],
    ['a percent-encoded password', 'smtp://mailer:p%40ss%2Fword@mail.example.com', 'rejected p@ss/word and p%40ss%2Fword', 'rejected *** and ***'],
    ['the whole URL', 'smtp://mailer:s3cret@mail.example.com', 'cannot reach smtp://mailer:s3cret@mail.example.com', 'cannot reach ***'],
  ])('removes %s from the message', (_case, url, message, expected) => {
    expect(describeMailError(new Error(message), url)).toBe(expected);
  });

  it('keeps a message without credentials and shortens long ones to 500 characters', () => {
    expect(describeMailError(new Error('connect ECONNREFUSED 127.0.0.1:25'), 'smtp://127.0.0.1:25')).toBe('connect ECONNREFUSED 127.0.0.1:25');
    expect(describeMailError(new Error('x'.repeat(2_000)), 'smtp://127.0.0.1:25')).toHaveLength(500);
  });
});
