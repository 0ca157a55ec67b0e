import { runCli } from './cli/index.js';

/** Process entry: every way of running Trellis goes through the CLI. */
export async function main(argv: string[]): Promise<void> {
  process.exitCode = await runCli(argv);
}
