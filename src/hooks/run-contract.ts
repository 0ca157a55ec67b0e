import type { HookType } from './schema.js';
import type { Hook } from './service.js';

/**
 * The hook-run contract: what a run of hook code is asked with and answers, shared by the record
 * layer (tables/, which runs the save hooks), the webhook dispatcher and the hook runtime (runtime/,
 * which runs the code). Types only: hooks/ imports neither tables/ nor runtime/, and both import this.
 */

/** What starts a run: a hook runs on the event its type names. */
export type HookTrigger = HookType;

/** The triggers of a table's save hooks. */
export type SaveTrigger = Exclude<HookTrigger, 'webHook'>;

/** What a run reads of a stored hook. */
export type HookCode = Pick<Hook, '_id' | 'name' | 'type' | 'content' | 'contentSha256'>;

/**
 * The `db` capability of hook code: the application's tables by name, with the hook's rights,
 * implemented by the record layer (RecordService.hookDb). Arguments arrive as the hook passed them
 * (JSON values): validate them. Results must be JSON-serialisable (the record layer's records and
 * pages). Throw a TrellisError to give the hook a message; other errors reach the hook as
 * `db.<operation> failed`.
 */
export interface HookDb {
  /** `filter` as in tables/record-query.ts; `options` holds `sort`, `limit` and `offset`. */
  find(table: string, filter?: unknown, options?: unknown): Promise<unknown>;
  get(table: string, _id: string): Promise<unknown>;
  create(table: string, data: unknown): Promise<unknown>;
  update(table: string, _id: string, data: unknown): Promise<unknown>;
  delete(table: string, _id: string): Promise<unknown>;
}

/** The user a save is made for, as hooks see it (`user`). */
export interface HookUser {
  _id: string;
  email: string;
  /** The name of the user's role: a hook refuses a save to a role by it. */
  role: string;
  /** The integration key's name when an integration acts for the user (`x-userid`). */
  via?: string;
}

/** What a webhook's code sees of its request as `request`; null for save hooks. */
export interface HookRequest {
  method: string;
  /** The path and query string as received, e.g. `/api/webhook/pay-confirm?attempt=2`. */
  url: string;
  /** The query string's parameters; a repeated name gives an array. */
  query: Record<string, string | string[]>;
  /** Lower-case names (the cookie header withheld). */
  headers: Record<string, string>;
  /** The body exactly as received, as UTF-8 text ('' without a body): what providers sign. */
  rawBody: string;
  /** The media type of the body without parameters, e.g. `application/json`; '' without one. */
  contentType: string;
}

/** A webhook answer chosen by the code with `respond(status, body, headers)`. */
export interface HookResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: unknown;
}

/** Why a run failed: the code threw, did not compile, returned what cannot be sent, or was stopped at a limit. */
export type HookFailureKind = 'thrown' | 'timeout' | 'memory' | 'syntax' | 'invalid-return';

/** One run of hook code, as the hook runtime takes it. */
export interface HookInvocation {
  hook: HookCode;
  trigger: HookTrigger;
  /** JSON-serialisable: the record (save hooks) or the request body (webhooks). */
  instance: unknown;
  /** Webhooks: the request headers, lower-case names. */
  headers?: Record<string, string>;
  /** Webhooks: the request as received, the code's `request`. */
  request?: HookRequest;
  /** The author of the operation, visible to the code as `user`. */
  user?: (Pick<HookUser, '_id'> & Partial<HookUser>) | null;
  /** Record access for the app's tables; without it the code has no `db`. */
  db?: HookDb;
  /** The HTTP request that caused the run, recorded in the run log. */
  requestId?: string;
  /** A test run from the designer (builder GraphQL `testWebhook`): the run log says so in its trigger. */
  testRun?: boolean;
}

/** A save hook's run, as the record layer asks for it: a record as `instance`, its author as `user`, no request. */
export interface HookRunRequest extends Omit<HookInvocation, 'trigger' | 'instance' | 'user' | 'headers' | 'request' | 'testRun'> {
  trigger: SaveTrigger;
  instance: Record<string, unknown>;
  user?: HookUser | null;
}

/** How a run ended; `response` when a webhook's code chose its answer with respond(). */
export type HookResult =
  | { ok: true; value: unknown; instance: unknown; durationMs: number; response?: HookResponse }
  | { ok: false; error: { message: string; kind: HookFailureKind }; durationMs: number };

/**
 * Runs hook code in the sandbox (runtime/service.ts's HookRuntime); `run` never throws (a failure
 * is `ok: false`). `Invocation` narrows what a caller may ask: the record layer runs save hooks only.
 */
export interface HookRunner<Invocation extends HookInvocation = HookInvocation> {
  /** Loads what a run needs from the database; called before a transaction in which hooks run. */
  prepare(): Promise<void>;
  run(invocation: Invocation): Promise<HookResult>;
}
