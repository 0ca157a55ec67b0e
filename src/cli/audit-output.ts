import type { McpAuditLogPage } from '../audit/service.js';

/**
 * `trellis audit list` for people: one line per entry (time, outcome, tool, key, user, duration),
 * then the cursor of the next page when there is one. Dates may arrive as ISO strings from a server.
 */
export function describeAuditPage(page: McpAuditLogPage): string {
  if (page.items.length === 0) return 'No MCP audit entries match.';
  const lines = page.items.map((entry) =>
    [
      new Date(entry.at).toISOString(),
      entry.outcome.padEnd(6),
      entry.tool,
      `key=${entry.keyId ?? '-'}`,
      `user=${entry.userId ?? '-'}`,
      `${entry.durationMs}ms`,
    ].join('  '),
  );
  if (page.nextCursor) lines.push(`More entries: --before ${page.nextCursor}`);
  return lines.join('\n');
}
