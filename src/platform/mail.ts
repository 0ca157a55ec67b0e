import { sql } from 'kysely';
import type { Transporter } from 'nodemailer';
import type { PlatformContext } from './context.js';
import type { Db } from './db/index.js';

export interface OutgoingMail {
  to: string;
  subject: string;
  /** Plain text. */
  body: string;
}

/** After this many failed attempts a mail stays in `mail_outbox` unsent and is no longer retried. */
export const MAIL_MAX_ATTEMPTS = 10;
const MAX_RETRY_DELAY_MS = 3_600_000;
const POLL_INTERVAL_MS = 1000;
const BATCH_SIZE = 20;
/** How long a claimed row is reserved for one sender; longer than the SMTP timeouts of a whole batch. */
const CLAIM_LEASE_SECONDS = 15 * 60;
const MAX_ERROR_LENGTH = 500;
const MAIL_CHANNEL = 'trellis_mail';

/**
 * Queues an e-mail in `mail_outbox`. Call it inside the transaction of the write it reports, so
 * the mail exists exactly when the write commits; the sender delivers it later.
 */
export async function enqueueMail(trx: Db, mail: OutgoingMail): Promise<void> {
  await trx.insertInto('mail_outbox').values({ to_address: mail.to, subject: mail.subject, body: mail.body, next_attempt_at: new Date() }).execute();
  // Delivered at commit, so every replica's sender wakes at once instead of at its next poll.
  await sql`select pg_notify(${MAIL_CHANNEL}, '')`.execute(trx);
}

/**
 * Delay before the next attempt once `failedAttempts` attempts have failed: `baseMs`, then
 * doubled after each failure, capped at one hour. `undefined` when the mail is given up.
 */
export function retryDelayMs(failedAttempts: number, baseMs: number): number | undefined {
  if (failedAttempts >= MAIL_MAX_ATTEMPTS) return undefined;
  return Math.min(baseMs * 2 ** (failedAttempts - 1), MAX_RETRY_DELAY_MS);
}

/** A delivery error as stored and logged: the message only, without the SMTP URL's password, shortened. */
export function describeMailError(error: unknown, smtpUrl: string): string {
  let message = error instanceof Error ? error.message : String(error);
  for (const secret of smtpSecrets(smtpUrl)) message = message.split(secret).join('***');
  return message.slice(0, MAX_ERROR_LENGTH);
}

function smtpSecrets(smtpUrl: string): string[] {
  const password = URL.canParse(smtpUrl) ? new URL(smtpUrl).password : '';
  if (!password) return [smtpUrl];
  return [smtpUrl, password, safeDecode(password)].sort((a, b) => b.length - a.length);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Starts the outbox sender when `TRELLIS_SMTP_URL` is set; otherwise logs that mails stay queued. */
export async function startMailSender(ctx: PlatformContext): Promise<MailSender | undefined> {
  if (!ctx.config.smtpUrl) {
    ctx.logger.info('e-mail is disabled (TRELLIS_SMTP_URL is not set); notifications stay queued in mail_outbox');
    return undefined;
  }
  const sender = new MailSender(ctx, ctx.config.smtpUrl);
  await sender.start();
  return sender;
}

interface ClaimedMail {
  id: number;
  to_address: string;
  subject: string;
  body: string;
  attempts: number;
}

/**
 * Delivers `mail_outbox` over SMTP: every second, and at once when a mail is queued. Rows are
 * claimed with `for update skip locked` and a lease, so replicas never send the same row twice
 * while a sender lives; a sender that dies mid-send leaves its rows to be retried after the lease
 * (at-least-once). Failures are retried with exponential backoff up to MAIL_MAX_ATTEMPTS.
 */
export class MailSender {
  private transport: Transporter | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private rerun = false;
  private stopped = false;

  constructor(
    private readonly ctx: PlatformContext,
    private readonly smtpUrl: string,
  ) {}

  /** Listens for newly queued mails (falling back to polling alone) and delivers those already due. */
  async start(): Promise<void> {
    // nodemailer is loaded only where e-mail is configured, not on every start.
    const { createTransport } = await import('nodemailer');
    this.transport = createTransport({ url: this.smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
    try {
      await this.ctx.database.listen(MAIL_CHANNEL, () => this.nudge());
    } catch (error) {
      this.ctx.logger.warn({ err: describeMailError(error, this.smtpUrl) }, 'e-mail sender cannot listen for new mails; polling only');
    }
    this.ctx.logger.info({ smtpHost: URL.canParse(this.smtpUrl) ? new URL(this.smtpUrl).host : undefined }, 'e-mail sender started');
    this.nudge();
  }

  /** Delivers due mails now (or right after the pass in progress). */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) {
      this.rerun = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.deliverDue().finally(() => {
      this.running = undefined;
      const again = this.rerun;
      this.rerun = false;
      if (again) this.nudge();
      else this.schedule();
    });
  }

  /** Stops polling and waits for the send in progress; claimed mails not yet sent are released. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    this.transport?.close();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.nudge(), POLL_INTERVAL_MS);
    this.timer.unref();
  }

  private async deliverDue(): Promise<void> {
    try {
      let batch: ClaimedMail[];
      do {
        batch = await this.claim();
        for (const [index, mail] of batch.entries()) {
          if (this.stopped) return await this.release(batch.slice(index));
          await this.deliver(mail);
        }
      } while (batch.length === BATCH_SIZE && !this.stopped);
    } catch (error) {
      this.ctx.logger.warn({ err: describeMailError(error, this.smtpUrl) }, 'e-mail outbox pass failed');
    }
  }

  private async claim(): Promise<ClaimedMail[]> {
    const db = this.ctx.db;
    const rows = await db
      .updateTable('mail_outbox')
      .set({ next_attempt_at: sql`now() + make_interval(secs => ${CLAIM_LEASE_SECONDS})` })
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('mail_outbox')
          .select('id')
          .where('sent_at', 'is', null)
          .where('attempts', '<', MAIL_MAX_ATTEMPTS)
          .where('next_attempt_at', '<=', sql<Date>`now()`)
          .orderBy('id')
          .limit(BATCH_SIZE)
          .forUpdate()
          .skipLocked(),
      )
      .returning(['id', 'to_address', 'subject', 'body', 'attempts'])
      .execute();
    return rows.sort((a, b) => a.id - b.id);
  }

  private async deliver(mail: ClaimedMail): Promise<void> {
    try {
      await this.transport!.sendMail({ from: this.ctx.config.mailFrom, to: mail.to_address, subject: mail.subject, text: mail.body });
    } catch (error) {
      return this.recordFailure(mail, describeMailError(error, this.smtpUrl));
    }
    await this.ctx.db.updateTable('mail_outbox').set({ sent_at: sql`now()`, last_error: null }).where('id', '=', mail.id).execute();
    this.ctx.logger.info({ mailId: mail.id }, 'e-mail sent');
  }

  private async recordFailure(mail: ClaimedMail, error: string): Promise<void> {
    this.ctx.metrics.mailFailures.inc();
    const attempts = mail.attempts + 1;
    const delay = retryDelayMs(attempts, this.ctx.config.mailRetryBaseMs);
    await this.ctx.db
      .updateTable('mail_outbox')
      .set({
        attempts,
        last_error: error,
        next_attempt_at: sql`now() + make_interval(secs => ${(delay ?? 0) / 1000})`,
      })
      .where('id', '=', mail.id)
      .execute();
    if (delay === undefined) {
      this.ctx.logger.error({ mailId: mail.id, attempts, err: error }, 'e-mail not delivered; giving up');
    } else {
      this.ctx.logger.warn({ mailId: mail.id, attempts, retryInMs: delay, err: error }, 'e-mail delivery failed; will retry');
    }
  }

  private async release(mails: ClaimedMail[]): Promise<void> {
    if (!mails.length) return;
    const ids = mails.map((mail) => mail.id);
    await this.ctx.db.updateTable('mail_outbox').set({ next_attempt_at: sql`now()` }).where('id', 'in', ids).where('sent_at', 'is', null).execute();
  }
}
