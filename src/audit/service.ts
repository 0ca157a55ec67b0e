import { requireAdmin, type Principal } from '../access/permissions.js';
import type { PlatformContext } from '../platform/context.js';
import type { Row } from '../platform/db/types.js';
import { parseInput } from '../platform/validation.js';
import { listMcpAuditLogsInput, type ListMcpAuditLogsInput } from './schema.js';

/** One MCP tool call as the audit log shows it; the arguments were redacted when written. */
export interface McpAuditLogEntry {
  _id: string;
  at: Date;
  keyId: string | null;
  /** The key's name and visible prefix, as people know it; null without a key or when it is gone. */
  keyName: string | null;
  keyPrefix: string | null;
  userId: string | null;
  /** The user's e-mail; null without a user or when the user is gone. */
  userEmail: string | null;
  tool: string;
  arguments: Record<string, unknown>;
  outcome: string;
  error: string | null;
  durationMs: number;
  codeSha256: string | null;
  /** The HTTP request of the call (its x-request-id, as in the server's log). */
  requestId: string | null;
}

export interface McpAuditLogPage {
  items: McpAuditLogEntry[];
  /** Pass as `before` to read the next (older) page; null on the last page. */
  nextCursor: string | null;
}

export class McpAuditService {
  constructor(private readonly ctx: PlatformContext) {}

  /**
   * MCP audit entries, newest first, filtered and paged by id (admin only), each naming its key
   * (name and prefix) and its user (e-mail). `key` matches a key's name (any letter case), prefix
   * or _id; `user` a user's e-mail (any letter case) or _id.
   */
  async list(principal: Principal, input: ListMcpAuditLogsInput = {}): Promise<McpAuditLogPage> {
    const filter = parseInput(listMcpAuditLogsInput, input);
    requireAdmin(principal);
    let query = this.ctx.db
      .selectFrom('mcp_audit_logs as log')
      .leftJoin('mcp_api_keys as key', 'key.id', 'log.key_id')
      .leftJoin('users as user', 'user.id', 'log.user_id')
      .selectAll('log')
      .select(['key.name as key_name', 'key.key_prefix as key_prefix', 'user.email as user_email']);
    if (filter.tool !== undefined) query = query.where('log.tool', '=', filter.tool);
    if (filter.keyId !== undefined) query = query.where('log.key_id', '=', filter.keyId);
    if (filter.userId !== undefined) query = query.where('log.user_id', '=', filter.userId);
    if (filter.key !== undefined) {
      const key = filter.key;
      query = query.where((eb) => eb.or([eb('log.key_id', '=', key), eb('key.key_prefix', '=', key), eb(eb.fn('lower', ['key.name']), '=', key.toLowerCase())]));
    }
    if (filter.user !== undefined) {
      const user = filter.user;
      query = query.where((eb) => eb.or([eb('log.user_id', '=', user), eb(eb.fn('lower', ['user.email']), '=', user.toLowerCase())]));
    }
    if (filter.outcome !== undefined) query = query.where('log.outcome', '=', filter.outcome);
    if (filter.since !== undefined) query = query.where('log.at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('log.at', '<', filter.until);
    if (filter.before !== undefined) query = query.where('log.id', '<', filter.before);
    const rows = await query.orderBy('log.id', 'desc').limit(filter.limit + 1).execute();
    const entries = rows.slice(0, filter.limit).map(toEntry);
    return { items: entries, nextCursor: rows.length > filter.limit ? entries[entries.length - 1]!._id : null };
  }
}

type NamedRow = Row<'mcp_audit_logs'> & { key_name: string | null; key_prefix: string | null; user_email: string | null };

function toEntry(row: NamedRow): McpAuditLogEntry {
  return {
    _id: String(row.id),
    at: row.at,
    keyId: row.key_id,
    keyName: row.key_name,
    keyPrefix: row.key_prefix,
    userId: row.user_id,
    userEmail: row.user_email,
    tool: row.tool,
    arguments: row.arguments,
    outcome: row.outcome,
    error: row.error,
    durationMs: row.duration_ms,
    codeSha256: row.code_sha256,
    requestId: row.request_id,
  };
}
