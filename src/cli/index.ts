import { Command, CommanderError } from 'commander';
import { loadConfig, type Config } from '../config.js';
import type { CreatedIntegrationKey } from '../integrations/service.js';
import type { CreatedMcpApiKey } from '../keys/service.js';
import { readLiveLock } from '../platform/data-dir.js';
import { TrellisError } from '../platform/errors.js';
import { createLogger, openServices } from '../server.js';
import { describeAuditPage } from './audit-output.js';
import { runCliCommand, type CliCommandName } from './commands.js';
import { serve } from './serve.js';

/** Runs `trellis <command>`; resolves to the process exit code. */
export async function runCli(argv: string[]): Promise<number> {
  let exitCode = 0;
  const program = new Command('trellis')
    .description('Trellis: configuration backend of low-code applications')
    .exitOverride()
    .showHelpAfterError();

  program
    .command('serve')
    .description('Run the HTTP server (MCP, GraphQL, webhooks)')
    .action(async () => {
      exitCode = await serve(loadConfig());
    });

  const user = program.command('user').description('Manage users');
  user
    .command('create')
    .description('Create a user')
    .requiredOption('--email <email>', 'e-mail address, used to sign in')
    .requiredOption('--password <password>', 'password (at least 8 characters)')
    .option('--role <role>', 'role name or _id', 'viewer')
    .option('--name <name>', 'display name', '')
    .option('--json', 'print JSON')
    .action(async (options) => {
      exitCode = await runDataCommand('user create', options, (user: { _id: string; email: string; roleName: string }) =>
        `Created user ${user.email} (_id ${user._id}, role ${user.roleName})`,
      );
    });

  program
    .command('key')
    .description('Manage MCP API keys')
    .command('create')
    .description("Create an MCP API key for a user whose role has 'ai_designer'; prints the raw key once")
    .requiredOption('--email <email>', 'e-mail address of the user the key acts as')
    .requiredOption('--scopes <scopes>', 'comma-separated scopes, for example config:read,features:write')
    .requiredOption('--days <days>', 'days until the key expires (1 to 365)')
    .option('--name <name>', 'name of the key', 'cli key')
    .option('--json', 'print JSON')
    .action(async (options) => {
      exitCode = await runDataCommand('key create', options, (created: CreatedMcpApiKey) =>
        [
          created.apiKey,
          `MCP API key '${created.key.name}' for ${options.email} (_id ${created.key._id}, scopes ${created.key.scopes.join(',')}, ` +
            `expires ${new Date(created.key.expiresAt).toISOString()}). It is shown only now: store it safely.`,
        ].join('\n'),
      );
    });

  program
    .command('integration')
    .description('Manage integration API keys')
    .command('create')
    .description('Create an integration key; prints its clientId and apiKey once')
    .requiredOption('--name <name>', 'name of the integration (unique)')
    .option('--json', 'print JSON')
    .action(async (options) => {
      exitCode = await runDataCommand('integration create', options, (created: CreatedIntegrationKey) =>
        [
          `clientId: ${created.clientId}`,
          `apiKey: ${created.apiKey}`,
          `Integration '${created.integration.name}' created. The apiKey is shown only now: store it safely.`,
        ].join('\n'),
      );
    });

  program
    .command('audit')
    .description('Read the MCP audit log')
    .command('list')
    .description('List MCP tool calls, newest first')
    .option('--tool <tool>', 'only calls of this tool')
    .option('--key <id>', 'only calls made with this MCP key _id')
    .option('--user <id>', 'only calls of this user _id')
    .option('--outcome <outcome>', 'only calls with this outcome: ok, error or denied')
    .option('--limit <n>', 'entries per page (1 to 500)', '50')
    .option('--before <cursor>', 'the cursor printed after a full page, to read older entries')
    .option('--json', 'print JSON')
    .action(async (options) => {
      exitCode = await runDataCommand('audit list', options, describeAuditPage);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    throw error;
  }
  return exitCode;
}

type Options = Record<string, unknown> & { json?: boolean };

/**
 * Runs a data command where the data is: through the running server when one holds the embedded
 * folder, otherwise by opening the database in this process.
 */
export async function runDataCommand<R>(name: CliCommandName, options: Options, describe: (result: R) => string): Promise<number> {
  const { json, ...args } = options;
  try {
    const result = (await executeCommand(loadConfig(), name, args)) as R;
    console.log(json ? JSON.stringify(result, null, 2) : describe(result));
    return 0;
  } catch (error) {
    const message = error instanceof TrellisError || error instanceof RemoteError ? error.message : String((error as Error).message ?? error);
    if (json) console.log(JSON.stringify({ error: { code: (error as { code?: string }).code ?? 'ERROR', message } }));
    else console.error(`Error: ${message}`);
    return 1;
  }
}

async function executeCommand(config: Config, name: CliCommandName, args: Record<string, unknown>): Promise<unknown> {
  const lock = config.databaseUrl ? undefined : readLiveLock(config.dataDir);
  if (lock?.url) return executeRemote(lock.url, lock.token, name, args);
  const opened = await openServices({ ...config, logLevel: 'warn' }, createLogger({ ...config, logLevel: 'warn' }));
  try {
    return await runCliCommand(opened.services, name, args);
  } finally {
    await opened.close();
  }
}

class RemoteError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function executeRemote(url: string, token: string, command: string, args: Record<string, unknown>): Promise<unknown> {
  const response = await fetch(`${url}/api/internal/cli`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-trellis-cli-token': token },
    body: JSON.stringify({ command, args }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { code: string; message: string } };
  if (!response.ok || body.error) throw new RemoteError(body.error?.code ?? 'ERROR', body.error?.message ?? `HTTP ${response.status}`);
  return body.result;
}
