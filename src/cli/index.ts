import { Command, CommanderError } from 'commander';
import { ConfigError, describeSettings, loadConfig, type Config } from '../config.js';
import type { CreatedIntegrationKey } from '../integrations/service.js';
import type { CreatedMcpApiKey } from '../keys/service.js';
import { MAIL_STATES } from '../application/mail-outbox.js';
import { TrellisError } from '../platform/errors.js';
import { trellisVersion } from '../platform/version.js';
import {
  describeIntegrations,
  describeKeys,
  describeNewOwner,
  describeOutbox,
  describeRestoredBackup,
  describeRevokedIntegration,
  describeRevokedKey,
  describeUserChange,
  describeUsers,
  describeWrittenBackup,
} from './admin-output.js';
import { describeAuditPage } from './audit-output.js';
import { describeStorageStats } from './db-stats.js';
import { backupToFile, restoreFromFile } from './backup.js';
import { runCliCommand, type CliCommandName } from './commands.js';
import { RemoteError, postToServer, requireTrellisData, trustedServerLock } from './data-access.js';
import { readPassword } from './password-input.js';
import { PROCESS_IO, printLine, type CliIo } from './io.js';

/** Runs `trellis <command>` with `io` (the process's own by default); resolves to the exit code. */
export async function runCli(argv: string[], io: CliIo = PROCESS_IO): Promise<number> {
  let exitCode = 0;
  // With --json, a usage error (a missing option, an unknown command) is JSON on stdout too, without the help.
  const json = argv.includes('--json');
  const program = new Command('trellis')
    .description('Trellis: configuration backend of low-code applications')
    .version(trellisVersion(), '-v, --version', 'print the version')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void io.stdout.write(text),
      writeErr: (text) => void io.stderr.write(text),
      outputError: (text, write) => {
        if (!json) return write(text);
        printLine(io.stdout, JSON.stringify({ error: { code: 'BAD_USAGE', message: text.trim().replace(/^error: /, '') } }));
      },
    })
    .showHelpAfterError(!json);

  /**
   * `trellis <parent> <name> <argument> [--json]`: the data command `command` on the one thing
   * `argument` names, passed as `args[field]`. Ids are random base64url and may begin with '-':
   * the argument takes them instead of commander reading an unknown option.
   */
  const byIdCommand = <R>(
    parent: Command,
    name: string,
    description: string,
    argument: { name: string; description: string; field: string },
    command: CliCommandName,
    describe: (result: R) => string,
  ) =>
    parent
      .command(name)
      .description(description)
      .argument(`<${argument.name}>`, argument.description)
      .allowUnknownOption()
      .option('--json', 'print JSON')
      .action(async (value: string, options: Options) => {
        exitCode = await runDataCommand(io, command, { ...options, [argument.field]: value }, describe);
      });

  program
    .command('serve')
    .description('Run the HTTP server (MCP, GraphQL, webhooks)')
    .addHelpText('after', settingsHelp)
    .action(async () => {
      // The server's modules are loaded only by the commands that need them: the others start in a fraction of the time.
      const { serve } = await import('./serve.js');
      exitCode = await serve(loadConfig(io.env));
    });

  const user = program.command('user').description('Manage users');
  user
    .command('create')
    .description('Create a user')
    .requiredOption('--email <email>', 'e-mail address, used to sign in')
    .option('--password-stdin', 'read the password (at least 8 characters) from the first line of standard input')
    .option('--password <password>', 'the password on the command line, where other users of the machine can see it: prefer --password-stdin, or leave both out to be asked')
    .option('--role <role>', 'role name or _id', 'viewer')
    .option('--name <name>', 'display name', '')
    .option('--json', 'print JSON')
    .action(async ({ passwordStdin, ...options }) => {
      const withPassword = async (args: Record<string, unknown>) => ({ ...args, password: await readPassword({ password: options.password, stdin: passwordStdin === true }, io.stdin, io.stderr) });
      exitCode = await runDataCommand(
        io,
        'user create',
        options,
        (user: { _id: string; email: string; roleName: string }) => `Created user ${user.email} (_id ${user._id}, role ${user.roleName})`,
        withPassword,
      );
    });
  user
    .command('list')
    .description('List the users: e-mail, role, enabled or disabled, owner')
    .option('--json', 'print JSON')
    .action(async (options) => {
      exitCode = await runDataCommand(io, 'user list', options, describeUsers);
    });
  const userArgument = { name: 'user', description: 'e-mail address or _id', field: 'user' };
  byIdCommand(user, 'disable', 'Disable a user: their sessions end and their MCP keys and acting integrations stop working', userArgument, 'user disable', describeUserChange);
  byIdCommand(user, 'enable', 'Enable a disabled user again', userArgument, 'user enable', describeUserChange);
  byIdCommand(
    user,
    'transfer-ownership',
    'Make an enabled admin the only owner (the recovery path when the owner cannot act); the new and former owners are e-mailed',
    userArgument,
    'user transfer-ownership',
    describeNewOwner,
  );

  const key = program.command('key').description('Manage MCP API keys');
  key
    .command('create')
    .description("Create an MCP API key for a user whose role has 'ai_designer'; prints the raw key once")
    .requiredOption('--email <email>', 'e-mail address of the user the key acts as')
    .requiredOption('--scopes <scopes>', 'comma-separated scopes, for example config:read,features:write')
    .requiredOption('--days <days>', 'days until the key expires (1 to 365)')
    .option('--name <name>', 'name of the key', 'cli key')
    .option('--json', 'print JSON')
    .action(async (options) => {
      exitCode = await runDataCommand(io, 'key create', options, (created: CreatedMcpApiKey) =>
        [
          created.apiKey,
          `MCP API key '${created.key.name}' for ${options.email} (_id ${created.key._id}, scopes ${created.key.scopes.join(',')}, ` +
            `expires ${new Date(created.key.expiresAt).toISOString()}). It is shown only now: store it safely.`,
        ].join('\n'),
      );
    });

  key
    .command('list')
    .description('List every MCP key of the application: owner, scopes, expiry, last use, state (never the key)')
    .option('--user <user>', "only this user's keys (e-mail address or _id)")
    .option('--json', 'print JSON')
    .action(async (options) => {
      exitCode = await runDataCommand(io, 'key list', options, describeKeys);
    });
  byIdCommand(key, 'revoke', 'Revoke an MCP key; it stops authenticating at once', { name: 'id', description: '_id of the key (see trellis key list)', field: 'id' }, 'key revoke', describeRevokedKey);

  const integration = program.command('integration').description('Manage integration API keys');
  integration
    .command('create')
    .description('Create an integration key; prints its clientId and apiKey once')
    .requiredOption('--name <name>', 'name of the integration (unique)')
    .option('--role <role>', "the role (name or _id) whose data-access rules it acts with; without, it reaches every record")
    .option('--json', 'print JSON')
    .action(async (options) => {
      exitCode = await runDataCommand(io, 'integration create', options, (created: CreatedIntegrationKey) =>
        [
          `clientId: ${created.clientId}`,
          `apiKey: ${created.apiKey}`,
          `Integration '${created.integration.name}' created. The apiKey is shown only now: store it safely.`,
        ].join('\n'),
      );
    });

  integration
    .command('list')
    .description('List the integration keys: name, clientId, creation (never the apiKey)')
    .option('--json', 'print JSON')
    .action(async (options) => {
      exitCode = await runDataCommand(io, 'integration list', options, describeIntegrations);
    });
  byIdCommand(
    integration,
    'revoke',
    'Revoke (delete) an integration key and every access token issued to it',
    { name: 'clientId', description: 'clientId of the key (see trellis integration list)', field: 'clientId' },
    'integration revoke',
    describeRevokedIntegration,
  );

  program
    .command('mail')
    .description('Read the e-mail outbox')
    .command('list')
    .description('List queued and sent e-mails, newest first: state, recipient, subject, attempts, last error (never the body)')
    .option('--state <state>', `only e-mails in this state: ${MAIL_STATES.join(', ')}`)
    .option('--limit <n>', 'e-mails per page (1 to 500)', '50')
    .option('--before <cursor>', 'the cursor printed after a full page, to read older e-mails')
    .option('--json', 'print JSON')
    .action(async (options) => {
      exitCode = await runDataCommand(io, 'mail list', options, describeOutbox);
    });

  program
    .command('backup')
    .description('Write a consistent backup of the embedded database and its secret to <file>, through the running server if one holds the folder')
    .argument('<file>', 'the backup file to write (mode 0600)')
    .option('--force', 'replace <file> if it exists')
    .option('--json', 'print JSON')
    .action(async (file: string, options: { force?: boolean; json?: boolean }) => {
      exitCode = await report(io, options.json, () => backupToFile(loadConfig(io.env), file, options), describeWrittenBackup);
    });

  program
    .command('restore')
    .description('Restore a backup into the data folder (TRELLIS_DATA_DIR), which must be new or empty')
    .argument('<file>', 'a file written by trellis backup')
    .option('--force', 'replace the Trellis data of a folder that holds some (no server may hold it)')
    .option('--json', 'print JSON')
    .action(async (file: string, options: { force?: boolean; json?: boolean }) => {
      exitCode = await report(io, options.json, () => restoreFromFile(loadConfig(io.env), file, options), describeRestoredBackup);
    });

  program
    .command('audit')
    .description('Read the MCP audit log')
    .command('list')
    .description('List MCP tool calls, newest first')
    .option('--tool <tool>', 'only calls of this tool')
    .option('--key <key>', "only calls made with this MCP key: its name, its prefix (trellis_…) or its _id")
    .option('--user <user>', "only calls of this user: an e-mail or an _id")
    .option('--outcome <outcome>', 'only calls with this outcome: ok, error or denied')
    .option('--limit <n>', 'entries per page (1 to 500)', '50')
    .option('--before <cursor>', 'the cursor printed after a full page, to read older entries')
    .option('--json', 'print JSON')
    .action(async (options) => {
      exitCode = await runDataCommand(io, 'audit list', options, describeAuditPage);
    });

  program
    .command('db')
    .description('Look at the database')
    .command('stats')
    .description('Size per table and index, rows, dead rows, last vacuums, what the run log and the MCP audit keep, and the data folder size (through the running server if one holds the folder)')
    .option('--json', 'print JSON')
    .action(async (options) => {
      exitCode = await runDataCommand(io, 'db stats', options, describeStorageStats);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof ConfigError) {
      printLine(io.stderr, error.message);
      return 2;
    }
    throw error;
  }
  return exitCode;
}

type Options = Record<string, unknown> & { json?: boolean };

/**
 * Runs a data command where the data is: through the running server when one holds the embedded
 * folder, otherwise by opening the database in this process. `complete`, when given, adds to the
 * arguments what the options do not carry (a password read from standard input).
 */
export async function runDataCommand<R>(
  io: CliIo,
  name: CliCommandName,
  options: Options,
  describe: (result: R) => string,
  complete?: (args: Record<string, unknown>) => Promise<Record<string, unknown>>,
): Promise<number> {
  const { json, ...args } = options;
  return report(io, json, async () => executeCommand(io, loadConfig(io.env), name, complete ? await complete(args) : args) as Promise<R>, describe);
}

/** Prints what `produce` resolves to (as JSON with `json`) and returns 0, or prints its error and returns 1. */
async function report<R>(io: CliIo, json: boolean | undefined, produce: () => Promise<R>, describe: (result: R) => string): Promise<number> {
  try {
    const result = await produce();
    printLine(io.stdout, json ? JSON.stringify(result, null, 2) : describe(result));
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      // The same answer as `serve` gives: the message naming each bad variable, exit 2.
      if (json) printLine(io.stdout, JSON.stringify({ error: { code: 'BAD_CONFIGURATION', message: error.message } }));
      else printLine(io.stderr, error.message);
      return 2;
    }
    const message = error instanceof TrellisError || error instanceof RemoteError ? error.message : String((error as Error).message ?? error);
    if (json) printLine(io.stdout, JSON.stringify({ error: { code: (error as { code?: string }).code ?? 'ERROR', message } }));
    else printLine(io.stderr, `Error: ${message}`);
    return 1;
  }
}

async function executeCommand(io: CliIo, config: Config, name: CliCommandName, args: Record<string, unknown>): Promise<unknown> {
  const lock = config.databaseUrl ? undefined : trustedServerLock(config.dataDir);
  if (lock?.url) {
    const answer = await postToServer(lock, '/api/internal/cli', { command: name, args });
    return (JSON.parse(answer.toString('utf8')) as { result: unknown }).result;
  }
  if (!config.databaseUrl) requireTrellisData(config.dataDir);
  const { createLogger, openServices } = await import('../server.js');
  const opened = await openServices({ ...config, logLevel: 'warn' }, createLogger({ ...config, logLevel: 'warn' }, io.stdout));
  try {
    return await runCliCommand(opened.services, name, args);
  } finally {
    await opened.close();
  }
}

/** `trellis serve --help`: every setting with its default and meaning, from the configuration schema. */
function settingsHelp(): string {
  const lines = describeSettings().map(
    (setting) => `  ${setting.name} (default: ${setting.defaultValue ?? 'unset'})\n      ${setting.meaning}`,
  );
  return `\nSettings (environment variables, read once at start; an empty one counts as unset):\n${lines.join('\n')}`;
}
