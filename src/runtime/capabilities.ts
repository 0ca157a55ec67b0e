import type { HookDb, HookInvocation, HookRequest } from '../hooks/run-contract.js';
import { TrellisError } from '../platform/errors.js';
import { EgressError, guardedFetch, type EgressLimits, type EgressPolicy } from './egress.js';
import { shown } from './guest-library.js';
import type { RemoteMember, SandboxPoolGlobals } from './sandbox-pool.js';
import { Unserialisable, WithBody } from './sandbox-types.js';

/**
 * What one run grants. A value left undefined is not given to the code at all: the runtime leaves
 * out what the code does not name (see `namesCapability`), which it then cannot reach.
 */
export interface Grants {
  instance: unknown;
  headers?: Record<string, string>;
  /** Webhooks: the request as received; null for save hooks. */
  request?: HookRequest | null;
  user?: HookInvocation['user'];
  env?: Record<string, string>;
  /** Whether the code gets `fetch`: only code that names it (see `namesCapability`). */
  fetch: boolean;
  db: boolean;
}

const VALUE_NAMES = ['headers', 'request', 'user', 'env'] as const;

/** Outbound requests one run may start: a loop of un-awaited fetches must not become a flood. */
export const FETCHES_PER_RUN = 20;
export const DB_CALLS_PER_RUN = 1000;

export interface CapabilityOptions {
  db: HookDb | undefined;
  egress: EgressPolicy;
  egressLimits: EgressLimits;
}

/**
 * The granted capabilities of one run as sandbox globals: `instance`, `headers`, `user` and `env`
 * as values; `fetch` and `db`, when granted, as host functions on the server's thread. (`console`
 * and `crypto` run beside the engine: src/runtime/guest-library.ts.)
 */
export class HookCapabilities {
  private fetches = 0;
  private dbCalls = 0;

  constructor(private readonly options: CapabilityOptions) {}

  /** `readInstance`: see SandboxPoolGlobals. */
  globals(grants: Grants, readInstance = true): SandboxPoolGlobals {
    const host: SandboxPoolGlobals['host'] = {};
    if (grants.fetch) host.fetch = ([url, init], signal) => this.fetch(url, init, signal);
    if (grants.db) {
      const operation = (name: string): RemoteMember => (args) => this.db([name, ...args]);
      host.db = { find: operation('find'), get: operation('get'), create: operation('create'), update: operation('update'), delete: operation('delete') };
    }
    const values: Record<string, unknown> = { instance: grants.instance };
    for (const name of VALUE_NAMES) if (grants[name] !== undefined) values[name] = grants[name];
    return { values, host, readInstance };
  }

  private async fetch(url: unknown, init: unknown, signal: AbortSignal): Promise<WithBody> {
    if (++this.fetches > FETCHES_PER_RUN) throw new Error(`fetch: at most ${FETCHES_PER_RUN} requests per run`);
    if (init instanceof Unserialisable || (init !== undefined && init !== null && typeof init !== 'object')) throw new Error('fetch: init must be an object');
    const { method, headers, body } = (init ?? {}) as Record<string, unknown>;
    if (method !== undefined && typeof method !== 'string') throw new Error('fetch: method must be a string');
    if (body !== undefined && body !== null && typeof body !== 'string') throw new Error('fetch: body must be a string (use JSON.stringify)');
    if (headers !== undefined && (typeof headers !== 'object' || headers === null || Array.isArray(headers))) {
      throw new Error('fetch: headers must be an object of strings');
    }
    try {
      const answer = await guardedFetch(
        { url: shown(url), method, headers: headers as Record<string, string> | undefined, body: body ?? undefined },
        this.options.egress,
        this.options.egressLimits,
        signal,
      );
      return new WithBody({ status: answer.status, ok: answer.status >= 200 && answer.status < 300, url: answer.url, headers: answer.headers }, answer.body);
    } catch (error) {
      throw error instanceof EgressError ? error : new Error('fetch failed');
    }
  }

  private async db(args: unknown[]): Promise<unknown> {
    const db = this.options.db;
    const [operation, table, ...rest] = args;
    if (!db) throw new Error('db is not available to this hook');
    if (++this.dbCalls > DB_CALLS_PER_RUN) throw new Error(`db: at most ${DB_CALLS_PER_RUN} calls per run`);
    if (typeof table !== 'string') throw new Error(`db.${String(operation)}(table, ...): table must be a string`);
    if (rest.some((arg) => arg instanceof Unserialisable)) throw new Error(`db.${String(operation)}: arguments must be JSON values`);
    const call = dbCall(db, String(operation), table, rest);
    try {
      return await call();
    } catch (error) {
      throw error instanceof TrellisError ? new Error(error.message) : new Error(`db.${String(operation)} failed`);
    }
  }
}

function dbCall(db: HookDb, operation: string, table: string, rest: unknown[]): () => Promise<unknown> {
  switch (operation) {
    case 'find':
      return () => db.find(table, rest[0], rest[1]);
    case 'create':
      return () => db.create(table, rest[0]);
  }
  const _id = id(rest[0], operation);
  switch (operation) {
    case 'get':
      return () => db.get(table, _id);
    case 'update':
      return () => db.update(table, _id, rest[1]);
    case 'delete':
      return () => db.delete(table, _id);
    default:
      throw new Error(`db: unknown operation ${operation}`);
  }
}

function id(value: unknown, operation: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`db.${operation}(table, _id, ...): _id must be a non-empty string`);
  return value;
}

/** Replaces each environment value (4 characters or longer) with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  const lower = text.toLowerCase();
  for (const secret of secrets) {
    if (!lower.includes(secret.toLowerCase())) continue;
    out = out.replace(new RegExp(secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'), '[redacted]');
  }
  return out;
}

/**
 * Environment values worth redacting (and each one reversed), longest first so a value inside
 * another is not half-replaced; `redact` matches them in any letter case. Defence in depth only:
 * the run log is readable by admins alone (`mayReadRunDetails`), since code can disguise a value
 * in endless ways.
 */
export function redactable(env: Record<string, string>): string[] {
  const values = Object.values(env).filter((value) => value.length >= 4);
  return [...new Set([...values, ...values.map((value) => [...value].reverse().join(''))])].sort((a, b) => b.length - a.length);
}
