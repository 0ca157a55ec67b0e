import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { DatabaseHandle } from './db/index.js';

/** What changed: `auth` (keys, users, roles) or `config` (any configuration write). */
export type ChangeTopic = 'auth' | 'config';

const CHANNEL = 'trellis_changes';
const TOPICS: readonly ChangeTopic[] = ['auth', 'config'];

/**
 * Tells every replica that cached state is stale. Handlers on this process run at once, before
 * `publish` resolves; other replicas hear it through PostgreSQL NOTIFY.
 */
export class ChangeBus {
  private readonly handlers = new Map<ChangeTopic, Array<() => void>>();
  private readonly origin = randomBytes(8).toString('hex');

  constructor(
    private readonly database: DatabaseHandle,
    private readonly logger: Logger,
  ) {}

  on(topic: ChangeTopic, handler: () => void): void {
    this.handlers.set(topic, [...(this.handlers.get(topic) ?? []), handler]);
  }

  async publish(topic: ChangeTopic): Promise<void> {
    this.run(topic);
    try {
      await this.database.notify(CHANNEL, JSON.stringify({ topic, origin: this.origin }));
    } catch (error) {
      this.logger.warn({ err: error, topic }, 'could not notify other replicas of a change');
    }
  }

  /**
   * Starts hearing other replicas. While the listening connection is lost (and once it is back)
   * anything may have changed unheard, so every topic counts as changed; a failure to start leaves
   * caches to expire on their own.
   */
  async listen(): Promise<void> {
    try {
      await this.database.listen(
        CHANNEL,
        (payload) => {
          const message = parse(payload);
          if (message && message.origin !== this.origin) this.run(message.topic);
        },
        () => {
          this.logger.warn('change notifications were interrupted: every cache is read anew');
          for (const topic of TOPICS) this.run(topic);
        },
      );
    } catch (error) {
      this.logger.warn({ err: error }, 'change notifications unavailable; caches expire on their own');
    }
  }

  private run(topic: ChangeTopic): void {
    for (const handler of this.handlers.get(topic) ?? []) handler();
  }
}

function parse(payload: string): { topic: ChangeTopic; origin: string } | undefined {
  try {
    return JSON.parse(payload) as { topic: ChangeTopic; origin: string };
  } catch {
    return undefined;
  }
}
