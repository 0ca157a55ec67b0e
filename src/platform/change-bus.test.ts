import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ChangeBus, type ChangeTopic } from './change-bus.js';
import type { DatabaseHandle } from './db/index.js';

/**
 * Two replicas' buses over one stand-in for PostgreSQL's NOTIFY (what the PostgreSQL suite runs
 * for real between replicas): what one publishes reaches every listener, its own included, as
 * NOTIFY does. `failing` makes notify or listen throw.
 */
function replicas(failing: { notify?: boolean; listen?: boolean } = {}) {
  const listeners: { onMessage: (payload: string) => void; onGap?: () => void }[] = [];
  const database = {
    notify: async (_channel: string, payload: string) => {
      if (failing.notify) throw new Error('connection lost');
      for (const listener of listeners) listener.onMessage(payload);
    },
    listen: async (_channel: string, onMessage: (payload: string) => void, onGap?: () => void) => {
      if (failing.listen) throw new Error('no listening connection');
      listeners.push({ onMessage, onGap });
    },
  } as unknown as DatabaseHandle;
  const warnings: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      warnings.push((JSON.parse(String(chunk)) as { msg: string }).msg);
      done();
    },
  });
  const logger = pino({ level: 'warn' }, sink);
  const heard = (bus: ChangeBus) => {
    const topics: ChangeTopic[] = [];
    bus.on('auth', () => topics.push('auth'));
    bus.on('config', () => topics.push('config'));
    return topics;
  };
  return { database, logger, warnings, listeners, heard };
}

describe('the change bus', () => {
  it("runs a change's handlers at once on its own replica, and once on every other one", async () => {
    const { database, logger, heard } = replicas();
    const [one, two] = [new ChangeBus(database, logger), new ChangeBus(database, logger)];
    await one.listen();
    await two.listen();
    const [onOne, onTwo] = [heard(one), heard(two)];
    await one.publish('config');
    await two.publish('auth');
    expect(onOne).toEqual(['config', 'auth']);
    expect(onTwo).toEqual(['config', 'auth']);
  });

  it('ignores a notification that is not its JSON, and counts every topic as changed when notifications were interrupted', async () => {
    const { database, logger, warnings, listeners, heard } = replicas();
    const bus = new ChangeBus(database, logger);
    await bus.listen();
    const topics = heard(bus);
    listeners[0]!.onMessage('not json');
    expect(topics).toEqual([]);
    listeners[0]!.onGap!();
    expect(topics).toEqual(['auth', 'config']);
    expect(warnings).toEqual(['change notifications were interrupted: every cache is read anew']);
  });

  it("still runs its own handlers when other replicas cannot be told, and says so; without listening it says caches expire on their own", async () => {
    const { database, logger, warnings, heard } = replicas({ notify: true, listen: true });
    const bus = new ChangeBus(database, logger);
    await bus.listen();
    const topics = heard(bus);
    await bus.publish('config');
    expect(topics).toEqual(['config']);
    expect(warnings).toEqual(['change notifications unavailable; caches expire on their own', 'could not notify other replicas of a change']);
  });
});
