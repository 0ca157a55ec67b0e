import { z } from 'zod';
import { systemPrincipal } from '../access/permissions.js';
import { mcpAuditOutcomeSchema, type McpAuditOutcome } from '../audit/schema.js';
import { expiresInDaysSchema } from '../keys/schema.js';
import { badInput } from '../platform/errors.js';
import { parseInput } from '../platform/validation.js';
import type { Services } from '../services.js';

/**
 * The CLI's data-changing commands. Each runs as the operator (system principal, source `cli`),
 * either in the CLI's own process or, when a server holds the embedded data folder, inside that
 * server through `POST /api/internal/cli`: the same code and the same result either way.
 */
const COMMANDS = {
  'user create': {
    args: z.object({
      email: z.string(),
      password: z.string(),
      role: z.string().default('viewer'),
      name: z.string().default(''),
    }),
    run: (services: Services, args: { email: string; password: string; role: string; name: string }) =>
      services.access.createUser(systemPrincipal('cli'), args),
  },
  'key create': {
    args: z.object({
      email: z.string(),
      scopes: z.string().transform((list) => list.split(',').map((scope) => scope.trim()).filter(Boolean)),
      days: z.string().transform(Number).pipe(expiresInDaysSchema),
      name: z.string().default('cli key'),
    }),
    run: async (services: Services, args: { email: string; scopes: string[]; days: number; name: string }) => {
      const operator = systemPrincipal('cli');
      const user = await services.access.findUserByEmail(operator, args.email);
      return services.keys.createMcpApiKeyForUser(operator, user._id, { name: args.name, scopes: args.scopes, expiresInDays: args.days });
    },
  },
  'integration create': {
    args: z.object({ name: z.string() }),
    run: (services: Services, args: { name: string }) => services.integrations.createIntegrationKey(systemPrincipal('cli'), args),
  },
  'audit list': {
    args: z.object({
      tool: z.string().optional(),
      key: z.string().optional(),
      user: z.string().optional(),
      outcome: mcpAuditOutcomeSchema.optional(),
      limit: z.string().transform(Number).optional(),
      before: z.string().optional(),
    }),
    run: (services: Services, args: { tool?: string; key?: string; user?: string; outcome?: McpAuditOutcome; limit?: number; before?: string }) =>
      services.audit.list(systemPrincipal('cli'), {
        tool: args.tool,
        keyId: args.key,
        userId: args.user,
        outcome: args.outcome,
        limit: args.limit,
        before: args.before,
      }),
  },
} as const;

export type CliCommandName = keyof typeof COMMANDS;

export function isCliCommand(name: string): name is CliCommandName {
  return Object.hasOwn(COMMANDS, name);
}

/** Runs one named command with its arguments; throws TrellisError on bad input. */
export async function runCliCommand(services: Services, name: string, rawArgs: unknown): Promise<unknown> {
  if (!isCliCommand(name)) throw badInput(`Unknown command '${name}'`);
  const command = COMMANDS[name];
  const args = parseInput(command.args, rawArgs);
  return command.run(services, args as never);
}
