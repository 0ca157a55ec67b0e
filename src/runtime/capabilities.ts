import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { TrellisError } from '../platform/errors.js';
import { EgressError, guardedFetch, type EgressLimits, type EgressPolicy } from './egress.js';
import type { SandboxHost } from './sandbox.js';

/**
 * Record access for the application's tables, implemented by the record layer with the rights
 * of the hook. Arguments arrive as the hook passed them (JSON values): validate them. Results must
 * be JSON-serialisable. Throw a TrellisError to give the hook a message; other errors reach the
 * hook as `db.<operation> failed`.
 */
export interface HookDb {
  find(table: string, filter?: unknown, options?: unknown): Promise<unknown>;
  get(table: string, _id: string): Promise<unknown>;
  create(table: string, data: unknown): Promise<unknown>;
  update(table: string, _id: string, data: unknown): Promise<unknown>;
  delete(table: string, _id: string): Promise<unknown>;
}

/** What one run grants, copied into the sandbox as JSON. */
export interface Grants {
  instance: unknown;
  headers: Record<string, string>;
  user: { _id: string; email?: string } | null;
  env: Record<string, string>;
  db: boolean;
}

export const CONSOLE_MAX_LINES = 100;
export const CONSOLE_MAX_CHARS = 500;
/** Outbound requests one run may start: a loop of un-awaited fetches must not become a flood. */
export const FETCHES_PER_RUN = 20;
export const DB_CALLS_PER_RUN = 1000;

/**
 * Evaluated in every fresh context before the hook. It keeps the two host bridges in its closure
 * (hook code cannot reach them), defines the granted globals, and returns the function that runs
 * the hook and serialises its outcome with the JSON functions captured before hook code ran.
 */
export const PRELUDE = `(function (hostCall, hostCallAsync, grantsJson) {
  'use strict';
  const { parse, stringify } = JSON;
  const decode = (text) => (text === undefined ? undefined : parse(text));
  const call = (op, args) => decode(hostCall(op, stringify(args)));
  const callAsync = (op, args) => hostCallAsync(op, stringify(args)).then(decode);
  const grants = parse(grantsJson);
  const text = (value) => {
    if (typeof value === 'string') return value;
    try {
      const json = stringify(value);
      return json === undefined ? String(value) : json;
    } catch {
      return String(value);
    }
  };
  const log = (level) => (...args) => { hostCall('console', stringify([level, args.map(text).join(' ')])); };
  const grant = (name, value) => Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
  grant('instance', grants.instance);
  grant('headers', grants.headers);
  grant('user', grants.user);
  grant('env', grants.env);
  grant('console', { log: log('log'), info: log('info'), warn: log('warn'), error: log('error') });
  grant('crypto', {
    sha256: (data) => call('sha256', [data]),
    hmacSha256: (key, data) => call('hmacSha256', [key, data]),
    timingSafeEqual: (a, b) => call('timingSafeEqual', [a, b]),
  });
  grant('fetch', async (url, init) => {
    const answer = await callAsync('fetch', [String(url), init === undefined ? {} : init]);
    const ok = answer.status >= 200 && answer.status < 300;
    return { status: answer.status, ok, url: answer.url, headers: answer.headers, text: async () => answer.body, json: async () => parse(answer.body) };
  });
  if (grants.db) {
    grant('db', {
      find: (table, filter, options) => callAsync('db', ['find', table, filter, options]),
      get: (table, id) => callAsync('db', ['get', table, id]),
      create: (table, data) => callAsync('db', ['create', table, data]),
      update: (table, id, data) => callAsync('db', ['update', table, id, data]),
      delete: (table, id) => callAsync('db', ['delete', table, id]),
    });
  }
  const serialise = (what, value) => {
    let json;
    try {
      json = stringify(value);
    } catch (error) {
      throw { invalid: what + ' is not JSON-serialisable: ' + (error && error.message) };
    }
    if (json === undefined && value !== undefined) throw { invalid: what + ' is not JSON-serialisable: a ' + typeof value };
    return json;
  };
  return async (hook) => {
    const value = await hook(grants.instance);
    try {
      return { value: serialise('The returned value', value), instance: serialise('instance', grants.instance) };
    } catch (failure) {
      return { invalid: failure.invalid };
    }
  };
})`;

export interface CapabilityOptions {
  db: HookDb | undefined;
  egress: EgressPolicy;
  egressLimits: EgressLimits;
}

/** The host side of the granted capabilities for one run; collects the run's console lines. */
export class HookCapabilities implements SandboxHost {
  readonly consoleLines: string[] = [];
  private fetches = 0;
  private dbCalls = 0;

  constructor(private readonly options: CapabilityOptions) {}

  call(op: string, args: unknown[]): unknown {
    switch (op) {
      case 'sha256':
        return createHash('sha256').update(text(args[0], 'crypto.sha256(data): data')).digest('hex');
      case 'hmacSha256':
        return createHmac('sha256', text(args[0], 'crypto.hmacSha256(key, data): key'))
          .update(text(args[1], 'crypto.hmacSha256(key, data): data'))
          .digest('hex');
      case 'timingSafeEqual':
        return timingSafeEqual(digest(text(args[0], 'crypto.timingSafeEqual(a, b): a')), digest(text(args[1], 'crypto.timingSafeEqual(a, b): b')));
      case 'console':
        this.log(String(args[0]), String(args[1]));
        return undefined;
      default:
        throw new Error(`unknown operation ${op}`);
    }
  }

  async callAsync(op: string, args: unknown[]): Promise<unknown> {
    if (op === 'fetch') return this.fetch(args[0], args[1]);
    if (op === 'db') return this.db(args);
    throw new Error(`unknown operation ${op}`);
  }

  private log(level: string, line: string): void {
    if (this.consoleLines.length >= CONSOLE_MAX_LINES) return;
    this.consoleLines.push(`[${level}] ${line}`.slice(0, CONSOLE_MAX_CHARS));
  }

  private async fetch(url: unknown, init: unknown): Promise<unknown> {
    if (++this.fetches > FETCHES_PER_RUN) throw new Error(`fetch: at most ${FETCHES_PER_RUN} requests per run`);
    const { method, headers, body } = (init ?? {}) as Record<string, unknown>;
    if (method !== undefined && typeof method !== 'string') throw new Error('fetch: method must be a string');
    if (body !== undefined && body !== null && typeof body !== 'string') throw new Error('fetch: body must be a string (use JSON.stringify)');
    if (headers !== undefined && (typeof headers !== 'object' || headers === null || Array.isArray(headers))) {
      throw new Error('fetch: headers must be an object of strings');
    }
    try {
      return await guardedFetch(
        { url: String(url), method, headers: headers as Record<string, string> | undefined, body: body ?? undefined },
        this.options.egress,
        this.options.egressLimits,
      );
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

function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new TypeError(`${what} must be a string`);
  return value;
}

function id(value: unknown, operation: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`db.${operation}(table, _id, ...): _id must be a non-empty string`);
  return value;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Replaces each environment value (4 characters or longer) with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
  return out;
}

/** Environment values worth redacting, longest first so a value inside another is not half-replaced. */
export function redactable(env: Record<string, string>): string[] {
  return Object.values(env)
    .filter((value) => value.length >= 4)
    .sort((a, b) => b.length - a.length);
}
