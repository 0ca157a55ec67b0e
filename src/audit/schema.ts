import { z } from 'zod';
import { cursorSchema, idSchema, pageSizeSchema } from '../platform/validation.js';

export const MCP_AUDIT_OUTCOMES = ['ok', 'error', 'denied'] as const;
export const DEFAULT_AUDIT_PAGE = 50;
export const MAX_AUDIT_PAGE = 500;

export const mcpAuditOutcomeSchema = z.enum(MCP_AUDIT_OUTCOMES, { error: `must be one of ${MCP_AUDIT_OUTCOMES.join(', ')}` });
export type McpAuditOutcome = z.infer<typeof mcpAuditOutcomeSchema>;

const dateTime = z.coerce.date({ error: 'must be an ISO-8601 date and time' });

export const listMcpAuditLogsInput = z.object({
  tool: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional(),
  keyId: idSchema.optional(),
  userId: idSchema.optional(),
  /** A key named by its name (any letter case), its visible prefix or its _id. */
  key: idSchema.optional(),
  /** A user named by e-mail (any letter case) or _id. */
  user: idSchema.optional(),
  outcome: mcpAuditOutcomeSchema.optional(),
  since: dateTime.optional(),
  until: dateTime.optional(),
  limit: pageSizeSchema(MAX_AUDIT_PAGE, DEFAULT_AUDIT_PAGE),
  /** The `nextCursor` of the previous page: entries older than that one. */
  before: cursorSchema.optional(),
});

export type ListMcpAuditLogsInput = z.input<typeof listMcpAuditLogsInput>;
