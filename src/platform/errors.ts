/**
 * The one error type of Trellis. `code` is stable and what callers match on; `message` is safe to
 * show to the caller (never a secret, never a stack); `details` carries structured hints such as
 * the offending field.
 */
export class TrellisError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails) {
    super(message);
    this.name = 'TrellisError';
    this.code = code;
    this.status = STATUS_BY_CODE[code];
    this.details = details;
  }

  /** Seconds after which trying again can succeed (RATE_LIMITED, UNAVAILABLE): the `Retry-After` header. */
  get retryAfter(): number | undefined {
    const seconds = this.details?.retryAfter;
    return typeof seconds === 'number' ? seconds : undefined;
  }
}

/** One input path that failed validation, and why. */
export interface InputIssue {
  readonly field: string;
  readonly message: string;
}

/**
 * What an error's `details` say. The keys adapters act on are typed here, with the codes that carry
 * them; any other key is a hint passed on to the caller as it is (`resource`, `hook`, `limit`...).
 */
export interface ErrorDetails {
  /** RATE_LIMITED, UNAVAILABLE: seconds before a retry can succeed. */
  readonly retryAfter?: number;
  /** BAD_INPUT: every input path that failed, and why. */
  readonly issues?: readonly InputIssue[];
  /** BAD_INPUT, CONFLICT: the one field at fault. */
  readonly field?: string;
  readonly [hint: string]: unknown;
}

const STATUS_BY_CODE = {
  BAD_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  HOOK_FAILED: 500,
  UNAVAILABLE: 503,
  INSUFFICIENT_STORAGE: 507,
} as const;

export type ErrorCode = keyof typeof STATUS_BY_CODE;

export const badInput = (message: string, details?: ErrorDetails) =>
  new TrellisError('BAD_INPUT', message, details);
export const notFound = (what: string, id: string) =>
  new TrellisError('NOT_FOUND', `${what} '${id}' does not exist`, { resource: what, _id: id });
export const conflict = (message: string, details?: ErrorDetails) =>
  new TrellisError('CONFLICT', message, details);
export const forbidden = (message: string, details?: ErrorDetails) =>
  new TrellisError('FORBIDDEN', message, details);
/** Every authentication failure looks the same: no hint which part was wrong. */
export const unauthenticated = () => new TrellisError('UNAUTHENTICATED', 'Authentication required or invalid');
/** A write the database has no room for; reads go on. Never names the file that could not grow. */
export const diskFull = () => new TrellisError('INSUFFICIENT_STORAGE', "The database's disk is full: changes cannot be saved until space is freed");

/** The JSON error body of every REST endpoint (and of a webhook's test run, which answers as its URL would). */
export function errorBody(error: TrellisError) {
  return { error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } };
}

/** Error codes of a database that is down or restarting: the connection's (Node) and the server's (SQLSTATE class 08, 57P0x). */
const DATABASE_DOWN = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);
/**
 * What the PostgreSQL driver says, without a code, of a connection the server ended: during the
 * query, or before the next one (a transaction's ROLLBACK after its connection was lost).
 */
const CONNECTION_LOST = /^(?:Connection terminated|Client has encountered a connection error)/;

/** Turns anything thrown into a TrellisError whose message is safe to send. */
export function toTrellisError(error: unknown): TrellisError {
  if (error instanceof TrellisError) return error;
  const pg = error as { code?: unknown; constraint?: unknown; detail?: unknown; message?: unknown };
  if (pg && ((typeof pg.code === 'string' && DATABASE_DOWN.has(pg.code)) || CONNECTION_LOST.test(String(pg.message ?? '')))) {
    return new TrellisError('UNAVAILABLE', 'The database is not available right now; try again shortly', { retryAfter: 1 });
  }
  // 53100 disk_full: a table, index or transaction-status file of the database could not grow.
  if (pg && pg.code === '53100') return diskFull();
  if (pg && pg.code === '23505') {
    return conflict('A record with the same unique value already exists', { constraint: pg.constraint });
  }
  // 23001 is what PGlite (PostgreSQL 18) reports for ON DELETE RESTRICT; servers before 18 say 23503.
  if (pg && (pg.code === '23503' || pg.code === '23001')) {
    return conflict('The record is referenced by, or refers to, another record', { constraint: pg.constraint });
  }
  return new TrellisError('INTERNAL', 'Internal error');
}
