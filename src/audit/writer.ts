import { performance } from 'node:perf_hooks';
import type { Principal } from '../access/permissions.js';
import type { Db } from '../platform/db/index.js';
import { writeMcpAuditEntry } from './mcp-log.js';

export interface AuditEvent {
  action: string;
  resourceType: string;
  resourceId: string | null;
  /** Already redacted: never a secret value, never a raw key. */
  details?: Record<string, unknown>;
}

/**
 * Records a configuration write; call it inside the write's own transaction. When the write comes
 * from an MCP tool call, the call's `mcp_audit_logs` entry is written in the same transaction.
 */
export async function recordAudit(trx: Db, principal: Principal, event: AuditEvent): Promise<void> {
  await trx
    .insertInto('audit_events')
    .values({
      actor_id: principal.userId,
      source: principal.source,
      action: event.action,
      resource_type: event.resourceType,
      resource_id: event.resourceId,
      details: JSON.stringify({ ...event.details, ...(principal.credentialId ? { credentialId: principal.credentialId } : {}) }),
    })
    .execute();
  const call = principal.mcpCall;
  if (!call || call.audited) return;
  const codeSha256 = event.details?.codeSha256;
  await writeMcpAuditEntry(trx, {
    keyId: call.keyId,
    userId: principal.userId,
    tool: call.tool,
    arguments: call.arguments,
    outcome: 'ok',
    error: null,
    durationMs: Math.round(performance.now() - call.startedAt),
    codeSha256: typeof codeSha256 === 'string' ? codeSha256 : null,
    requestId: principal.requestId ?? null,
  });
  call.audited = true;
}
