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
  userId: string | null;
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

  /** MCP audit entries, newest first, filtered and paged by id (admin only). */
  async list(principal: Principal, input: ListMcpAuditLogsInput = {}): Promise<McpAuditLogPage> {
    const filter = parseInput(listMcpAuditLogsInput, input);
    requireAdmin(principal);
    let query = this.ctx.db.selectFrom('mcp_audit_logs').selectAll();
    if (filter.tool !== undefined) query = query.where('tool', '=', filter.tool);
    if (filter.keyId !== undefined) query = query.where('key_id', '=', filter.keyId);
    if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
    if (filter.outcome !== undefined) query = query.where('outcome', '=', filter.outcome);
    if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('at', '<', filter.until);
    if (filter.before !== undefined) query = query.where('id', '<', filter.before);
    const rows = await query.orderBy('id', 'desc').limit(filter.limit + 1).execute();
    const entries = rows.slice(0, filter.limit).map(toEntry);
    return { items: entries, nextCursor: rows.length > filter.limit ? entries[entries.length - 1]!._id : null };
  }
}

function toEntry(row: Row<'mcp_audit_logs'>): McpAuditLogEntry {
  return {
    _id: String(row.id),
    at: row.at,
    keyId: row.key_id,
    userId: row.user_id,
    tool: row.tool,
    arguments: row.arguments,
    outcome: row.outcome,
    error: row.error,
    durationMs: row.duration_ms,
    codeSha256: row.code_sha256,
    requestId: row.request_id,
  };
}
