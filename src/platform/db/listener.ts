import type pg from 'pg';

/** The first retry after a lost connection, doubled after each failure up to the maximum. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;
/** A connection that silently went away (no FIN) is noticed by a query this often. */
const HEARTBEAT_MS = 10_000;

export interface ListenerEvents {
  /** The connection was lost: notifications may be missed until `reconnected`. */
  lost(error: unknown): void;
  /** Listening again after a loss; whatever was announced meanwhile was missed. */
  reconnected(): void;
}

/**
 * PostgreSQL LISTEN on a connection of its own that never gives up: when the connection ends or
 * fails (the backend was terminated, the server restarted, the network dropped), it reconnects
 * with a growing delay, listens to every channel again and says so, so that callers can treat the
 * gap as a change of everything.
 */
export class NotificationListener {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private readonly handlers = new Map<string, Array<(payload: string) => void>>();
  private retryDelay = RETRY_FIRST_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly newClient: () => pg.Client,
    private readonly escapeIdentifier: (name: string) => string,
    private readonly events: ListenerEvents,
  ) {}

  /** Listens to `channel`; the first call connects and throws if that fails (later losses are retried). */
  async listen(channel: string, onMessage: (payload: string) => void): Promise<void> {
    const known = this.handlers.has(channel);
    this.handlers.set(channel, [...(this.handlers.get(channel) ?? []), onMessage]);
    if (!this.client) {
      await this.connect();
      return;
    }
    if (!known) await this.client.query(`listen ${this.escapeIdentifier(channel)}`);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.heartbeat);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private connect(): Promise<void> {
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    const client = this.newClient();
    let lost = false;
    const onLost = (error: unknown) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.lose(error);
    };
    client.on('error', onLost);
    client.on('end', () => onLost(new Error('the listening connection ended')));
    client.on('notification', (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`listen ${this.escapeIdentifier(channel)}`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => {});
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.retryDelay = RETRY_FIRST_MS;
    clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      client.query('select 1').catch(onLost);
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private lose(error: unknown): void {
    this.client = undefined;
    clearInterval(this.heartbeat);
    if (this.closed) return;
    this.events.lost(error);
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    const delay = this.retryDelay;
    this.retryDelay = Math.min(this.retryDelay * 2, RETRY_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.connect().then(
        () => {
          if (!this.closed) this.events.reconnected();
        },
        () => this.scheduleRetry(),
      );
    }, delay + Math.floor(Math.random() * delay * 0.2));
    this.retryTimer.unref();
  }
}
