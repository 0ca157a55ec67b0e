import { systemPrincipal, webhookPrincipal } from '../access/permissions.js';
import type { Hook, HookService } from '../hooks/service.js';
import type { PlatformContext } from '../platform/context.js';
import { TrellisError } from '../platform/errors.js';
import { WindowLimiter } from '../platform/limits.js';
import { ReadCache } from '../platform/read-cache.js';
import type { RecordService } from '../tables/records.js';
import type { HookResponse } from './sandbox.js';
import type { HookFailureKind, HookRequest, HookRuntime } from './service.js';

/** What the dispatcher needs from the other services. */
export interface WebhookDependencies {
  readonly ctx: PlatformContext;
  readonly hooks: HookService;
  readonly records: RecordService;
  readonly hookRuntime: HookRuntime;
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

const APPLICATION_KEY = 'application';

const FAILURE_MESSAGES: Record<HookFailureKind, string> = {
  thrown: "The webhook's code failed",
  syntax: "The webhook's code failed",
  'invalid-return': "The webhook's code failed",
  timeout: "The webhook's code was stopped: it ran too long",
  memory: "The webhook's code was stopped: it used too much memory",
};

/**
 * Runs inbound webhooks (spec 4.5, 5.4, 8): finds the `webHook` hook by name (case-insensitive),
 * applies the per-instance limit shared by every webhook of the application, and runs the code
 * exactly once with the body as `instance`. Calls naming no webhook count per client IP like
 * failed authentications, so names cannot be guessed quickly.
 */
export class WebhookDispatcher {
  private readonly calls: WindowLimiter;
  private readonly probes: WindowLimiter;
  private readonly byName: ReadCache<Map<string, Hook>>;

  constructor(private readonly services: WebhookDependencies) {
    const { config } = services.ctx;
    this.calls = new WindowLimiter(config.webhookRateLimit, 60_000, 'webhook', services.ctx.metrics.rateLimited);
    this.probes = new WindowLimiter(config.authFailuresPerMinute, 60_000, 'auth-failures', services.ctx.metrics.rateLimited);
    this.byName = new ReadCache(services.ctx.changes, { topics: ['config'], maxEntries: 1 });
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
    this.calls.hit(APPLICATION_KEY);
    await this.services.hookRuntime.prepare();
    const result = await this.services.hookRuntime.run({
      hook,
      trigger: 'webHook',
      instance: call.body,
      headers: call.headers,
      request: call.request,
      user: null,
      db: this.services.records.hookDb({ ...webhookPrincipal(hook.name), requestId: call.requestId }),
      requestId: call.requestId,
    });
    if (result.ok) return { value: result.value, ...(result.response ? { response: result.response } : {}) };
    throw new TrellisError('HOOK_FAILED', FAILURE_MESSAGES[result.error.kind], { reason: result.error.kind });
  }

  private webhooks(): Promise<Map<string, Hook>> {
    return this.byName.load('all', () => this.loadWebhooks());
  }


  private async loadWebhooks(): Promise<Map<string, Hook>> {
    const hooks = await this.services.hooks.listHooks(systemPrincipal(), { type: 'webHook' });
    return new Map(hooks.map((hook) => [hook.name.toLowerCase(), hook]));
  }
}
