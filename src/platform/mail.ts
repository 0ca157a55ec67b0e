import type { Db } from './db/index.js';

export interface OutgoingMail {
  to: string;
  subject: string;
  /** Plain text. */
  body: string;
}

/**
 * Queues an e-mail in `mail_outbox`. Call it inside the transaction of the write it reports, so
 * the mail exists exactly when the write commits; the sender delivers it later.
 */
export async function enqueueMail(trx: Db, mail: OutgoingMail): Promise<void> {
  await trx.insertInto('mail_outbox').values({ to_address: mail.to, subject: mail.subject, body: mail.body, next_attempt_at: new Date() }).execute();
}
