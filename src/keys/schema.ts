import { z } from 'zod';
import { SCOPES } from '../access/permissions.js';
import { idSchema } from '../platform/validation.js';

/** The longest lifetime of an MCP key (spec section 8). */
export const MAX_KEY_DAYS = 365;

const scope = z.string().pipe(
  z.enum(SCOPES, { error: (issue) => `unknown scope '${String(issue.input)}'; valid scopes are ${SCOPES.join(', ')}` }),
);

/** Lifetime of a key in whole days, 1 to 365; there is no key without an expiry. */
export const expiresInDaysSchema = z
  .number({ error: `must be a whole number of days from 1 to ${MAX_KEY_DAYS}` })
  .int(`must be a whole number of days from 1 to ${MAX_KEY_DAYS}`)
  .min(1, `must be a whole number of days from 1 to ${MAX_KEY_DAYS}`)
  .max(MAX_KEY_DAYS, `must be at most ${MAX_KEY_DAYS} days`);

export const createMcpApiKeyInput = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  scopes: z.array(scope).min(1, 'must list at least one scope').max(100, 'must list at most 100 scopes'),
  expiresInDays: expiresInDaysSchema,
});

export const revokeMcpApiKeyInput = z.object({ _id: idSchema.describe("The key's _id") });

export const listMcpApiKeysInput = z.object({
  all: z.boolean().optional().describe("true: every key of the application (admin only); left out or false, the signed-in user's own"),
});

export type CreateMcpApiKeyInput = z.input<typeof createMcpApiKeyInput>;
