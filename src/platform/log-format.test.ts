import { describe, expect, it } from 'vitest';
import { prettyLine, resolveLogFormat } from './log-format.js';

const at = new Date(2026, 0, 2, 9, 5, 7).getTime();

describe('prettyLine', () => {
  it.each([
    ['a plain record with its fields', { level: 30, time: at, pid: 1, hostname: 'h', msg: 'mail sent', to: 'a@example.com', attempts: 2 }, '09:05:07 INFO  mail sent to=a@example.com attempts=2\n'],
    ['a request answered, the request id last', { level: 30, time: at, reqId: 'r-1', msg: 'request answered', method: 'POST', route: '/graphql', path: '/graphql', status: 200, ms: 12.3 }, '09:05:07 INFO  POST /graphql 200 12.3 ms reqId=r-1\n'],
    ['a text with spaces and an object, as JSON', { level: 40, time: at, msg: 'slow', note: 'two words', detail: { a: 1 } }, '09:05:07 WARN  slow note="two words" detail={"a":1}\n'],
    ['a debug record', { level: 20, time: at, msg: 'x' }, '09:05:07 DEBUG x\n'],
  ])('writes %s on one line', (_case, record, line) => {
    expect(prettyLine(`${JSON.stringify(record)}\n`)).toBe(line);
  });

  it("puts an error's stack on the lines below", () => {
    const line = prettyLine(JSON.stringify({ level: 50, time: at, msg: 'request failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (x.js:1:1)' } }));
    expect(line).toBe('09:05:07 ERROR request failed\n    Error: boom\n    at f (x.js:1:1)\n');
  });

  it('colours the level for a terminal', () => {
    expect(prettyLine(JSON.stringify({ level: 50, time: at, msg: 'x' }), true)).toBe('09:05:07 \u001b[31mERROR\u001b[0m x\n');
  });

  it('passes text that is not JSON through', () => {
    expect(prettyLine('not json\n')).toBe('not json\n');
  });
});

describe('resolveLogFormat', () => {
  it.each([
    ['auto', true, 'pretty'],
    ['auto', false, 'json'],
    ['json', true, 'json'],
    ['pretty', false, 'pretty'],
  ] as const)('%s with a terminal: %s gives %s', (setting, terminal, format) => {
    expect(resolveLogFormat(setting, terminal)).toBe(format);
  });
});
