import { sql } from 'kysely';
import { z } from 'zod';
import { requireAdmin, type Principal } from '../access/permissions.js';
import type { PlatformContext } from '../platform/context.js';
import type { Row } from '../platform/db/types.js';
import { MAIL_MAX_ATTEMPTS } from '../platform/mail.js';
import { cursorSchema, pageSizeSchema, parseInput } from '../platform/validation.js';

/**
 * Where an e-mail of `mail_outbox` stands: `queued` (not tried yet), `retrying` (failed, tried
 * again later), `failed` (given up after MAIL_MAX_ATTEMPTS) or `sent`.
 */
export const MAIL_STATES = ['queued', 'retrying', 'failed', 'sent'] as const;
export type MailState = (typeof MAIL_STATES)[number];

const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;

export const listMailOutboxInput = z.object({
  state: z.enum(MAIL_STATES, { error: `must be one of ${MAIL_STATES.join(', ')}` }).optional(),
  limit: pageSizeSchema(MAX_PAGE, DEFAULT_PAGE),
  /** The `nextCursor` of the previous page: e-mails queued before that one. */
  before: cursorSchema.optional(),
});

export type ListMailOutboxInput = z.input<typeof listMailOutboxInput>;

/** An e-mail of the outbox as the operator sees it: never its body, which may quote what it reports. */
export interface OutboxMail {
  _id: string;
  state: MailState;
  to: string;
  subject: string;
  attempts: number;
  lastError: string | null;
  /** When the sender tries next; null once sent or given up. */
  nextAttemptAt: Date | null;
  createdAt: Date;
  sentAt: Date | null;
}

export interface OutboxPage {
  items: OutboxMail[];
  nextCursor: string | null;
}

/** A row's state, computed where it is filtered on, so that both agree. */
const MAIL_STATE = sql<MailState>`case
  when sent_at is not null then 'sent'
  when attempts >= ${sql.lit(MAIL_MAX_ATTEMPTS)} then 'failed'
  when attempts > 0 then 'retrying'
  else 'queued' end`;

/** The outbox, newest first, filtered by state and paged by id (admin only). */
export async function listMailOutbox(ctx: PlatformContext, principal: Principal, input: ListMailOutboxInput = {}): Promise<OutboxPage> {
  const filter = parseInput(listMailOutboxInput, input);
  requireAdmin(principal);
  let query = ctx.db
    .selectFrom('mail_outbox')
    .select(['id', 'to_address', 'subject', 'attempts', 'last_error', 'next_attempt_at', 'created_at', 'sent_at'])
    .select(MAIL_STATE.as('state'));
  if (filter.state !== undefined) query = query.where(MAIL_STATE, '=', filter.state);
  if (filter.before !== undefined) query = query.where('id', '<', filter.before);
  const rows = await query.orderBy('id', 'desc').limit(filter.limit + 1).execute();
  const items = rows.slice(0, filter.limit).map(toOutboxMail);
  return { items, nextCursor: rows.length > filter.limit ? items[items.length - 1]!._id : null };
}

function toOutboxMail(row: Omit<Row<'mail_outbox'>, 'body'> & { state: MailState }): OutboxMail {
  const pending = row.state === 'queued' || row.state === 'retrying';
  return {
    _id: String(row.id),
    state: row.state,
    to: row.to_address,
    subject: row.subject,
    attempts: row.attempts,
    lastError: row.last_error,
    nextAttemptAt: pending ? row.next_attempt_at : null,
    createdAt: row.created_at,
    sentAt: row.sent_at,
  };
}
