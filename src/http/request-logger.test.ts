import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { RequestLogger } from './request-logger.js';

/** A pino logger at `level` whose lines are kept, parsed, in `lines`. */
function capturingLogger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { parent: pino({ level }, sink), lines };
}

describe("a request's logger", () => {
  it('makes the child logger only when the request first logs, and logs each level with the request id bound', () => {
    const { parent, lines } = capturingLogger('trace');
    let children = 0;
    const child = parent.child.bind(parent);
    parent.child = ((...args: Parameters<typeof child>) => {
      children += 1;
      return child(...args);
    }) as typeof parent.child;
    const logger = new RequestLogger(parent, { reqId: 'req-1' }, {});
    expect(logger.level).toBe('trace');
    logger.silent();
    expect(children).toBe(0);

    logger.fatal('a fatal line');
    logger.error({ detail: 1 }, 'an error line');
    logger.warn('a warning');
    logger.info('an info line');
    logger.debug('a debug line');
    logger.trace('a trace line');
    expect(children).toBe(1);
    expect(lines.map((line) => [line.level, line.msg, line.reqId])).toEqual([
      [60, 'a fatal line', 'req-1'],
      [50, 'an error line', 'req-1'],
      [40, 'a warning', 'req-1'],
      [30, 'an info line', 'req-1'],
      [20, 'a debug line', 'req-1'],
      [10, 'a trace line', 'req-1'],
    ]);
    expect(lines[1]!.detail).toBe(1);
  });

  it("takes its level from the route's options, then from the parent, and a level set applies to its own lines only", () => {
    const { parent, lines } = capturingLogger('info');
    expect(new RequestLogger(parent, { reqId: 'a' }, { level: 'warn' }).level).toBe('warn');
    const logger = new RequestLogger(parent, { reqId: 'b' }, {});
    expect(logger.level).toBe('info');
    logger.level = 'error';
    expect(logger.level).toBe('error');
    logger.warn('left out');
    logger.error('kept');
    parent.warn('the parent still logs warnings');
    expect(lines.map((line) => line.msg)).toEqual(['kept', 'the parent still logs warnings']);
  });

  it("gives children that keep the request's bindings and add their own", () => {
    const { parent, lines } = capturingLogger('info');
    const logger = new RequestLogger(parent, { reqId: 'req-2' }, {});
    logger.child({ hook: 'onPayment' }).info('from the child');
    expect(lines).toEqual([expect.objectContaining({ reqId: 'req-2', hook: 'onPayment', msg: 'from the child' })]);
  });
});
