import { sha256Hex } from '../platform/crypto.js';
import type { Db } from '../platform/db/index.js';
import type { NewRow } from '../platform/db/types.js';
import type { McpAuditOutcome } from './schema.js';

/** Entries older than this are deleted by the retention sweeper (spec section 8). */
export const AUDIT_RETENTION_DAYS = 365;

/** Strings longer than this many UTF-8 bytes are stored as a preview plus their SHA-256. */
export const LONG_STRING_BYTES = 2048;
/** Characters of a long string kept as its preview. */
export const PREVIEW_CHARS = 512;
/** Nesting deeper than this is replaced by a marker. */
export const MAX_DEPTH = 8;
/** Items of an array kept; the rest is counted in a marker item. */
export const MAX_ARRAY_ITEMS = 100;
/** Upper bound of the stored arguments as JSON, in UTF-8 bytes. */
export const MAX_STORED_BYTES = 16 * 1024;

const REDACTED = '[redacted]';
const REDACTED_KEY = '[redacted-key]';
const TOO_DEEP = '[too deep]';
const MAX_TOOL_CHARS = 200;
const MAX_ERROR_CHARS = 1000;

/** Argument names whose values are secrets, compared in lower case. */
const SECRET_NAMES: ReadonlySet<string> = new Set([
  'value',
  'apikey',
  'api_key',
  'token',
  'password',
  'secret',
  'clientsecret',
  'client_secret',
  'authorization',
]);

/** MCP keys, integration keys, session tokens and access tokens, wherever they appear in text. */
const KEY_SHAPED = /(?:trellis_[A-Za-z0-9_-]{20,}|(?:trik|trs|tat)_[A-Za-z0-9_-]{16,})/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** One MCP tool call, as the MCP server reports it. */
export interface McpAuditEntry {
  keyId: string | null;
  userId: string | null;
  tool: string;
  /** Raw tool arguments as received; the writer redacts them. */
  arguments: unknown;
  outcome: McpAuditOutcome;
  /** A message safe to show; key-shaped text in it is redacted anyway. */
  error: string | null;
  durationMs: number;
  /** SHA-256 of the persisted code for hook and feature writes. */
  codeSha256: string | null;
  /** The HTTP request of the call (its `x-request-id`). */
  requestId?: string | null;
}

/**
 * Redacts tool arguments for the audit log. Values under secret names (`value`, `apiKey`, `token`,
 * `password`, `secret`, `clientSecret`, `authorization`, ...) become '[redacted]'; key-shaped text
 * becomes '[redacted-key]'; strings over 2048 bytes become `{ preview, sha256, bytes }`; nesting is
 * cut at depth 8, arrays at 100 items, and the whole at 16 KB of JSON (marked `truncated: true`).
 * Non-object arguments are wrapped as `{ value }`. Pure.
 */
export function redactArguments(args: unknown): Record<string, unknown> {
  if (args === undefined) return {};
  const redacted = isPlainRecord(args) ? redactRecord(args, 1) : { value: redactValue(args, 1) };
  return capSize(redacted);
}

/** Inserts one entry; pass a write's transaction as `db` to keep the entry in that transaction. */
export async function writeMcpAuditEntry(db: Db, entry: McpAuditEntry): Promise<void> {
  await db.insertInto('mcp_audit_logs').values(auditRow(entry)).execute();
}

/** The stored row of an entry: redacted arguments, clipped texts. */
export function auditRow(entry: McpAuditEntry): NewRow<'mcp_audit_logs'> {
  return {
    key_id: entry.keyId,
    user_id: entry.userId,
    tool: clip(redactText(entry.tool), MAX_TOOL_CHARS),
    arguments: JSON.stringify(redactArguments(entry.arguments)),
    outcome: entry.outcome,
    error: entry.error === null ? null : clip(redactText(entry.error), MAX_ERROR_CHARS),
    duration_ms: Math.max(0, Math.round(entry.durationMs)),
    code_sha256: entry.codeSha256,
    request_id: entry.requestId ?? null,
  };
}

function redactValue(value: unknown, depth: number): unknown {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string') return redactString(value);
  if (typeof value !== 'object') return redactString(String(value));
  if (depth > MAX_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return redactArray(value, depth);
  return redactRecord(value as Record<string, unknown>, depth);
}

function redactRecord(record: Record<string, unknown>, depth: number): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) {
    if (value === undefined) continue;
    result[redactText(name)] = SECRET_NAMES.has(name.toLowerCase()) ? REDACTED : redactValue(value, depth + 1);
  }
  return result;
}

function redactArray(items: readonly unknown[], depth: number): unknown[] {
  const kept = items.slice(0, MAX_ARRAY_ITEMS).map((item) => redactValue(item ?? null, depth + 1));
  if (items.length > MAX_ARRAY_ITEMS) kept.push(`[${items.length - MAX_ARRAY_ITEMS} more items]`);
  return kept;
}

function redactString(text: string): unknown {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= LONG_STRING_BYTES) return redactText(text);
  return { preview: clip(redactText(text), PREVIEW_CHARS), sha256: sha256Hex(text), bytes };
}

/** Replaces key-shaped parts, and makes the text storable in jsonb (no NUL, no lone surrogate). */
function redactText(text: string): string {
  return text.replace(KEY_SHAPED, REDACTED_KEY).replace(LONE_SURROGATE, '\ufffd').replaceAll('\u0000', '\ufffd');
}

/** The first `chars` characters, without cutting a surrogate pair; redact before clipping so no key is cut in two. */
function clip(text: string, chars: number): string {
  const end = isHighSurrogate(text.charCodeAt(chars - 1)) ? chars - 1 : chars;
  return text.slice(0, end);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keeps top-level entries in order while the JSON stays under the cap; marks the result if any was left out. */
function capSize(redacted: Record<string, unknown>): Record<string, unknown> {
  if (jsonBytes(redacted) <= MAX_STORED_BYTES) return redacted;
  const entries = Object.entries(redacted);
  const kept: Record<string, unknown> = {};
  let budget = MAX_STORED_BYTES - jsonBytes({ truncated: true, omittedKeys: entries.length });
  for (const [name, value] of entries) {
    if (name === 'truncated' || name === 'omittedKeys') continue;
    const size = jsonBytes(name) + jsonBytes(value) + 2;
    if (size > budget) continue;
    kept[name] = value;
    budget -= size;
  }
  return { ...kept, truncated: true, omittedKeys: entries.length - Object.keys(kept).length };
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}
