import type { McpAuditLogEntry, McpAuditLogPage } from '../audit/service.js';

/**
 * `trellis audit list` for people: one line per entry (time, outcome, tool, key by name and prefix,
 * user by e-mail, duration), then the cursor of the next page when there is one. Dates may arrive
 * as ISO strings from a server.
 */
export function describeAuditPage(page: McpAuditLogPage): string {
  if (page.items.length === 0) return 'No MCP audit entries match.';
  const lines = page.items.map((entry) =>
    [
      new Date(entry.at).toISOString(),
      entry.outcome.padEnd(6),
      entry.tool,
      `key=${keyLabel(entry)}`,
      `user=${entry.userEmail ?? entry.userId ?? '-'}`,
      `${entry.durationMs}ms`,
    ].join('  '),
  );
  if (page.nextCursor) lines.push(`More entries: --before ${page.nextCursor}`);
  return lines.join('\n');
}

/** A key as people know it: 'ci agent (trellis_AbCd…)'; its _id only when the key is gone. */
function keyLabel(entry: McpAuditLogEntry): string {
  if (entry.keyName !== null && entry.keyPrefix !== null) return `'${entry.keyName}' (${entry.keyPrefix}…)`;
  return entry.keyId ?? '-';
}
