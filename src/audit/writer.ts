import type { Principal } from '../access/permissions.js';
import type { Db } from '../platform/db/index.js';

export interface AuditEvent {
  action: string;
  resourceType: string;
  resourceId: string | null;
  /** Already redacted: never a secret value, never a raw key. */
  details?: Record<string, unknown>;
}

/**
 * Records a configuration write; call it inside the write's own transaction. The principal's
 * `onAudit` runs next in that transaction (an MCP tool call writes its `mcp_audit_logs` entry there).
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
  await principal.onAudit?.(trx, event.details ?? {});
}
