import { Command, CommanderError } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, type Config } from '../config.js';
import type { CreatedIntegrationKey } from '../integrations/service.js';
import type { CreatedMcpApiKey } from '../keys/service.js';
import { readLiveLock } from '../platform/data-dir.js';
import { TrellisError } from '../platform/errors.js';
import { createLogger, openServices } from '../server.js';
import { describeAuditPage } from './audit-output.js';
import { runCliCommand, type CliCommandName } from './commands.js';
import { serve } from './serve.js';

/** The version in package.json (beside dist/ or src/). */
function packageVersion(): string {
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // not there: the other layout
    }
  }
  return 'unknown';
}

/** Runs `trellis <command>`; resolves to the process exit code. */
export async function runCli(argv: string[]): Promise<number> {
  let exitCode = 0;
  const program = new Command('trellis')
    .description('Trellis: configuration backend of low-code applications')
    .version(packageVersion(), '-v, --version', 'print the version')
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
  // Only `serve` creates an application: a command on an empty folder would make a second one nobody serves.
  if (!config.databaseUrl && !existsSync(join(config.dataDir, 'pgdata'))) {
    throw new TrellisError(
      'NOT_FOUND',
      `${config.dataDir} holds no Trellis data: start the server once with \`trellis serve\` to create the application, or point TRELLIS_DATA_DIR at the folder that holds it`,
    );
  }
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

/** The system error code under a failed fetch (ECONNREFUSED, ...), which undici nests. */
function networkCode(error: unknown): string {
  const cause = (error as { cause?: { code?: string; errors?: { code?: string }[] } }).cause;
  return cause?.code ?? cause?.errors?.find((inner) => inner.code)?.code ?? 'no connection';
}

/** How long the CLI waits for the server that holds the folder before it says so. */
const REMOTE_TIMEOUT_MS = 5000;

async function executeRemote(url: string, token: string, command: string, args: Record<string, unknown>): Promise<unknown> {
  let response: Response;
  let body: { result?: unknown; error?: { code: string; message: string } };
  try {
    response = await fetch(`${url}/api/internal/cli`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-trellis-cli-token': token },
      body: JSON.stringify({ command, args }),
      signal: AbortSignal.timeout(REMOTE_TIMEOUT_MS),
    });
    body = (await response.json()) as typeof body;
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    throw new RemoteError(
      'UNAVAILABLE',
      timedOut
        ? `The Trellis server holding the data folder (${url}) did not answer within ${REMOTE_TIMEOUT_MS / 1000} s; try again, or stop it and run the command again`
        : `The Trellis server holding the data folder (${url}) cannot be reached (${networkCode(error)}); if it is no longer running, remove its trellis.lock and run the command again`,
    );
  }
  if (!response.ok || body.error) throw new RemoteError(body.error?.code ?? 'ERROR', body.error?.message ?? `HTTP ${response.status}`);
  return body.result;
}
