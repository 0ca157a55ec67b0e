import { requirePermission, systemPrincipal, webhookPrincipal, type Principal } from '../access/permissions.js';
import { decryptEnvironment } from '../envvars/service.js';
import type { HookDb, HookFailureKind, HookRequest, HookResponse, HookRunner } from '../hooks/run-contract.js';
import { testWebhookInput, type TestWebhookInput } from '../hooks/schema.js';
import type { Hook, HookService } from '../hooks/service.js';
import { webhookSignature } from '../hooks/webhook-signing.js';
import type { PlatformContext } from '../platform/context.js';
import { TrellisError, badInput, errorBody } from '../platform/errors.js';
import { parseJsonText } from '../platform/json.js';
import { WindowLimiter } from '../platform/limits.js';
import { ReadValue } from '../platform/read-cache.js';
import { parseInput } from '../platform/validation.js';
import { withFields } from '../platform/objects.js';

/** What the dispatcher is handed of the other services (built in services.ts). */
export interface WebhookDependencies {
  /** To find a webhook by name or `_id`. */
  readonly hooks: Pick<HookService, 'getHook' | 'listHooks'>;
  /** The `db` capability of a webhook's run, with the webhook's rights (RecordService.hookDb). */
  readonly hookDb: (principal: Principal) => HookDb;
  /** Runs the webhook's code (HookRuntime). */
  readonly runner: HookRunner;
}

/** One inbound call: the parsed body (null without one), the request headers and the request as received. */
export interface WebhookCall {
  name: string;
  body: unknown;
  /** Lower-case names; the cookie header is never passed on. */
  headers: Record<string, string>;
  request: HookRequest;
  /** The caller's address, for the limit on calls naming no webhook. */
  ip: string;
  /** The HTTP request's id (x-request-id), recorded in the run log. */
  requestId?: string;
}

/** The code's return value (`undefined` when it returned nothing), or the answer it chose with `respond()`. */
export interface WebhookAnswer {
  value: unknown;
  response?: HookResponse;
}

/** An answer as HTTP sends it: status, headers (lower-case names) and the body's text (none for undefined). */
export interface WebhookReply {
  status: number;
  headers: Record<string, string>;
  body: string | undefined;
}

/** One HTTP header, lower-case name. */
export interface HeaderEntry {
  name: string;
  value: string;
}

/** What a test run answers: the webhook's reply, and the request headers it was sent with (a signature included). */
export interface WebhookTestAnswer {
  httpStatus: number;
  headers: HeaderEntry[];
  body: string;
  sentHeaders: HeaderEntry[];
}

/**
 * Set on every webhook answer, whatever the code chose: an answer the code builds from a caller's
 * input must never run as a page of the application's origin (where the designer keeps its session).
 */
export const WEBHOOK_FIXED_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; sandbox",
  'x-content-type-options': 'nosniff',
};

/** Headers never handed to webhook code: a browser's cookies are no business of server-to-server calls. */
export const WITHHELD_HEADERS: ReadonlySet<string> = new Set(['cookie']);

const UNSUPPORTED = 'Content-Type must be application/json, application/x-www-form-urlencoded or text/*';
const JSON_TYPE = 'application/json; charset=utf-8';

const APPLICATION_KEY = 'application';

const FAILURE_MESSAGES: Record<HookFailureKind, string> = {
  thrown: "The webhook's code failed",
  syntax: "The webhook's code failed",
  'invalid-return': "The webhook's code failed",
  timeout: "The webhook's code was stopped: it ran too long",
  memory: "The webhook's code was stopped: it used too much memory",
};

/** The path a webhook answers at: `/api/webhook/<name>`. */
export function webhookPath(name: string): string {
  return `/api/webhook/${encodeURIComponent(name)}`;
}

/** Where a webhook answers, absolute when the base URL of the asking request is known (`Principal.baseUrl`). */
export function webhookUrl(baseUrl: string | undefined, name: string): string {
  return `${baseUrl ?? ''}${webhookPath(name)}`;
}

/**
 * Runs inbound webhooks (docs/spec.md 4.5, 5.4, 8): finds the `webHook` hook by name (case-insensitive),
 * applies the per-instance limit shared by every webhook of the application, and runs the code
 * exactly once with the body as `instance`. Calls naming no webhook count per client IP like
 * failed authentications, so names cannot be guessed quickly.
 */
export class WebhookDispatcher {
  private readonly calls: WindowLimiter;
  private readonly probes: WindowLimiter;
  private readonly byName: ReadValue<Map<string, Hook>>;

  constructor(
    private readonly ctx: PlatformContext,
    private readonly dependencies: WebhookDependencies,
  ) {
    const { config } = ctx;
    this.calls = new WindowLimiter(config.webhookRateLimit, 60_000, 'webhook', ctx.metrics.rateLimited);
    this.probes = new WindowLimiter(config.authFailuresPerMinute, 60_000, 'auth-failures', ctx.metrics.rateLimited);
    this.byName = new ReadValue(ctx.changes, { topics: ['config'] });
  }

  /**
   * Runs the webhook named in `call` and returns what its code returned. Throws NOT_FOUND for an
   * unknown name, RATE_LIMITED (with `retryAfter` seconds) past either limit, and HOOK_FAILED
   * (500) when the code throws or is stopped: the message is generic, never the thrown one; the
   * run log (`hook_runs`) keeps the redacted error.
   */
  async dispatch(call: WebhookCall): Promise<WebhookAnswer> {
    this.probes.check(call.ip);
    const hook = (await this.webhooks()).get(call.name.toLowerCase());
    if (!hook) {
      this.probes.hit(call.ip);
      throw new TrellisError('NOT_FOUND', `No webhook named '${call.name}'`);
    }
    return this.run(hook, call, false);
  }

  /**
   * Runs a webhook's saved code as a POST of `input.body` to its URL would, and answers what the
   * caller would get, failures included (a 400 for a malformed body, 429 past the limit, 500 when
   * the code fails): the run counts towards the webhook limit and is in the run log, marked as a
   * test run. With `signWith` the server adds the provider's signature header, computed with the
   * environment variable's value, which never leaves the server; that needs 'hooks:write' (who
   * could read the value through hook code anyway), a test run without it 'config:read'.
   * Throws BAD_INPUT for input that is not a request (or a hook that is no webhook, or an unset
   * environment variable) and NOT_FOUND for an unknown hook.
   */
  async testRun(principal: Principal, input: TestWebhookInput): Promise<WebhookTestAnswer> {
    const data = parseInput(testWebhookInput, input);
    requirePermission(principal, data.signWith ? 'hooks:write' : 'config:read');
    const hook = await this.dependencies.hooks.getHook(principal, data._id);
    if (hook.type !== 'webHook') throw badInput(`_id: '${hook.name}' is a ${hook.type} hook: only webhooks have a test run`, { field: '_id' });
    const headers = testHeaders(data.headers, data.contentType);
    if (data.signWith) {
      const signature = webhookSignature(data.signWith.scheme, await this.environmentValue(data.signWith.envVar), data.body);
      headers[signature.name] = signature.value;
    }
    const request: HookRequest = { method: 'POST', url: webhookPath(hook.name), query: {}, headers, rawBody: data.body, contentType: mediaTypeOf(headers) };
    const reply = await this.replyTo(() => this.run(hook, { name: hook.name, body: parseWebhookBody(request), headers, request, ip: '', requestId: principal.requestId }, true));
    return {
      httpStatus: reply.status,
      headers: headerList(withFields(WEBHOOK_FIXED_HEADERS, reply.headers)),
      body: reply.body ?? '',
      sentHeaders: headerList(headers),
    };
  }

  private async replyTo(run: () => Promise<WebhookAnswer>): Promise<WebhookReply> {
    try {
      return webhookReply(await run());
    } catch (error) {
      if (!(error instanceof TrellisError)) throw error;
      return errorReply(error);
    }
  }

  private async run(hook: Hook, call: WebhookCall, testRun: boolean): Promise<WebhookAnswer> {
    this.calls.hit(APPLICATION_KEY);
    const { runner, hookDb } = this.dependencies;
    // No `runner.prepare()`: a webhook runs in no transaction, so its run may read the environment itself.
    const result = await runner.run({
      hook,
      trigger: 'webHook',
      instance: call.body,
      headers: call.headers,
      request: call.request,
      user: null,
      // Built whole, not spread from another object: an object spread per call here sent every copy
      // to the old generation (seen with --trace-gc-nvp), which brought on major collections.
      db: hookDb(webhookPrincipal(hook.name, call.requestId)),
      requestId: call.requestId,
      testRun,
    });
    if (result.ok) return result.response ? { value: result.value, response: result.response } : { value: result.value };
    throw new TrellisError('HOOK_FAILED', FAILURE_MESSAGES[result.error.kind], { reason: result.error.kind });
  }

  private async environmentValue(name: string): Promise<string> {
    const environment = await decryptEnvironment(this.ctx);
    const value = environment[name];
    if (value !== undefined) return value;
    const names = Object.keys(environment).sort();
    throw badInput(`signWith.envVar: no environment variable is named '${name}'; ${names.length ? `the set ones are ${names.join(', ')}` : 'none is set'}`, { field: 'signWith.envVar' });
  }

  private webhooks(): Promise<Map<string, Hook>> {
    return this.byName.load(() => this.loadWebhooks());
  }

  private async loadWebhooks(): Promise<Map<string, Hook>> {
    const hooks = await this.dependencies.hooks.listHooks(systemPrincipal(), { type: 'webHook' });
    return new Map(hooks.map((hook) => [hook.name.toLowerCase(), hook]));
  }
}

/**
 * The answer to send: the code's return value as JSON with 200, 204 without a body when it returned
 * undefined, or what it chose with respond() (a string body as text/plain, any other as JSON,
 * unless the code set content-type).
 */
export function webhookReply(answer: WebhookAnswer): WebhookReply {
  const { response } = answer;
  if (!response) {
    if (answer.value === undefined) return { status: 204, headers: {}, body: undefined };
    return { status: 200, headers: { 'content-type': JSON_TYPE }, body: JSON.stringify(answer.value) };
  }
  if (response.body === undefined) return { status: response.status, headers: response.headers, body: undefined };
  const text = typeof response.body === 'string';
  const headers = { 'content-type': text ? 'text/plain; charset=utf-8' : JSON_TYPE, ...response.headers };
  return { status: response.status, headers, body: text ? (response.body as string) : JSON.stringify(response.body) };
}

/** A failure as the webhook URL answers it (the REST error body). */
function errorReply(error: TrellisError): WebhookReply {
  const { retryAfter } = error;
  return {
    status: error.status,
    headers: { 'content-type': JSON_TYPE, ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}) },
    body: JSON.stringify(errorBody(error)),
  };
}

/** `instance`: JSON parsed, a form as an object, text as it is, null without a body. */
export function parseWebhookBody(request: HookRequest): unknown {
  const { contentType, rawBody } = request;
  if (contentType === '' && rawBody === '') return null;
  if (contentType === 'application/json' || contentType.endsWith('+json')) {
    if (rawBody.trim() === '') throw new TrellisError('BAD_INPUT', 'Request body is empty; send a JSON value');
    return parseJsonText(rawBody);
  }
  if (contentType === 'application/x-www-form-urlencoded') return paramsObject(new URLSearchParams(rawBody));
  if (contentType.startsWith('text/') || contentType === 'application/xml') return rawBody;
  throw new TrellisError('UNSUPPORTED_MEDIA_TYPE', UNSUPPORTED);
}

/** The media type of a request's content-type header without parameters, in lower case; '' without one. */
export function mediaTypeOf(headers: Record<string, string>): string {
  return (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The query string's parameters of a path as sent. */
export function queryOf(url: string): Record<string, string | string[]> {
  const mark = url.indexOf('?');
  return paramsObject(new URLSearchParams(mark === -1 ? '' : url.slice(mark + 1)));
}

/** Parameters as an object without a prototype (a parameter may be named `__proto__`); a repeated name gives an array. */
function paramsObject(params: URLSearchParams): Record<string, string | string[]> {
  const object: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of params) {
    const seen = object[name];
    object[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return object;
}

/**
 * A test run's request headers as Node would hand them over: lower-case names, a repeated one
 * joined with ', ', the cookie withheld, and content-type from `contentType` (none when empty).
 */
function testHeaders(given: readonly { name: string; value: string }[], contentType: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { name, value } of given) {
    const lower = name.toLowerCase();
    if (lower === 'content-type') throw badInput('headers: give the media type as contentType, not as a header', { field: 'headers' });
    if (WITHHELD_HEADERS.has(lower)) continue;
    headers[lower] = headers[lower] === undefined ? value : `${headers[lower]}, ${value}`;
  }
  if (contentType !== '') headers['content-type'] = contentType;
  return headers;
}

function headerList(headers: Record<string, string>): HeaderEntry[] {
  return Object.entries(headers).map(([name, value]) => ({ name, value }));
}
