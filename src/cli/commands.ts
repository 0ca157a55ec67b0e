import { z } from 'zod';
import { systemPrincipal, type Principal } from '../access/permissions.js';
import { createUserInput, type CreateUserInput } from '../access/schema.js';
import type { User } from '../access/service.js';
import { mcpAuditOutcomeSchema, type McpAuditOutcome } from '../audit/schema.js';
import { expiresInDaysSchema } from '../keys/schema.js';
import type { McpApiKey } from '../keys/service.js';
import { badInput } from '../platform/errors.js';
import { listMailOutbox, MAIL_STATES, type MailState } from '../application/mail-outbox.js';
import { parseInput } from '../platform/validation.js';
import { storageStats } from '../storage/service.js';
import type { Services } from '../services.js';

/** An MCP key as `trellis key list` shows it: with its owner's e-mail, as GraphQL's `userEmail`. */
export type ListedMcpApiKey = McpApiKey & { userEmail: string | null };

/** A numeric option as commander passes it (a string), for a schema that takes a number. */
const countOption = z.string().transform(Number).optional();

/**
 * The CLI's data commands (reads and changes). Each runs as the operator (system principal, source `cli`),
 * either in the CLI's own process or, when a server holds the embedded data folder, inside that
 * server through `POST /api/internal/cli`: the same code and the same result either way.
 */
const COMMANDS = {
  'user create': {
    args: createUserInput,
    run: (services: Services, args: CreateUserInput) => services.access.createUser(systemPrincipal('cli'), args),
  },
  'user list': {
    args: z.object({}),
    run: (services: Services) => services.access.listUsers(systemPrincipal('cli')),
  },
  'user disable': {
    args: z.object({ user: z.string() }),
    run: (services: Services, args: { user: string }) => setUserDisabled(services, args.user, true),
  },
  'user enable': {
    args: z.object({ user: z.string() }),
    run: (services: Services, args: { user: string }) => setUserDisabled(services, args.user, false),
  },
  'user transfer-ownership': {
    args: z.object({ user: z.string() }),
    run: async (services: Services, args: { user: string }) => {
      const operator = systemPrincipal('cli');
      const heir = await findUser(services, operator, args.user);
      return services.access.transferOwnership(operator, { userId: heir._id });
    },
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
  'key list': {
    args: z.object({ user: z.string().optional() }),
    run: async (services: Services, args: { user?: string }): Promise<ListedMcpApiKey[]> => {
      const operator = systemPrincipal('cli');
      const owner = args.user === undefined ? undefined : await findUser(services, operator, args.user);
      const keys = await services.keys.listMcpApiKeys(operator, { all: true });
      const emails = await userEmails(services, operator);
      return keys.filter((key) => !owner || key.userId === owner._id).map((key) => ({ ...key, userEmail: emails.get(key.userId) ?? null }));
    },
  },
  'key revoke': {
    args: z.object({ id: z.string() }),
    run: async (services: Services, args: { id: string }): Promise<ListedMcpApiKey> => {
      const operator = systemPrincipal('cli');
      const key = await services.keys.revokeMcpApiKey(operator, args.id);
      return { ...key, userEmail: (await userEmails(services, operator)).get(key.userId) ?? null };
    },
  },
  'integration create': {
    args: z.object({ name: z.string() }),
    run: (services: Services, args: { name: string; role?: string }) => services.integrations.createIntegrationKey(systemPrincipal('cli'), { name: args.name, roleId: args.role }),
  },
  'integration list': {
    args: z.object({}),
    run: (services: Services) => services.integrations.listIntegrationKeys(systemPrincipal('cli')),
  },
  'integration revoke': {
    args: z.object({ clientId: z.string() }),
    run: async (services: Services, args: { clientId: string }) => {
      const operator = systemPrincipal('cli');
      const integration = (await services.integrations.listIntegrationKeys(operator)).find((key) => key.clientId === args.clientId);
      await services.integrations.deleteIntegrationKey(operator, { clientId: args.clientId });
      return { revoked: true, clientId: args.clientId, name: integration?.name ?? null };
    },
  },
  'mail list': {
    args: z.object({
      state: z.enum(MAIL_STATES, { error: `must be one of ${MAIL_STATES.join(', ')}` }).optional(),
      limit: countOption,
      before: z.string().optional(),
    }),
    run: (services: Services, args: { state?: MailState; limit?: number; before?: string }) =>
      listMailOutbox(services.ctx, systemPrincipal('cli'), args),
  },
  'audit list': {
    args: z.object({
      tool: z.string().optional(),
      key: z.string().optional(),
      user: z.string().optional(),
      outcome: mcpAuditOutcomeSchema.optional(),
      limit: countOption,
      before: z.string().optional(),
    }),
    run: (services: Services, args: { tool?: string; key?: string; user?: string; outcome?: McpAuditOutcome; limit?: number; before?: string }) =>
      services.audit.list(systemPrincipal('cli'), {
        tool: args.tool,
        key: args.key,
        user: args.user,
        outcome: args.outcome,
        limit: args.limit,
        before: args.before,
      }),
  },
  'db stats': {
    args: z.object({}),
    run: (services: Services) => storageStats(services.ctx, systemPrincipal('cli')),
  },
} as const;

export type CliCommandName = keyof typeof COMMANDS;

/** A user named by e-mail (anything with an @) or by _id. */
function findUser(services: Services, operator: Principal, ref: string): Promise<User> {
  return ref.includes('@') ? services.access.findUserByEmail(operator, ref) : services.access.getUser(operator, ref);
}

async function setUserDisabled(services: Services, ref: string, disabled: boolean): Promise<User> {
  const operator = systemPrincipal('cli');
  const user = await findUser(services, operator, ref);
  return services.access.updateUser(operator, { _id: user._id, disabled });
}

async function userEmails(services: Services, operator: Principal): Promise<Map<string, string>> {
  return new Map((await services.access.listUsers(operator)).map((user) => [user._id, user.email]));
}

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
