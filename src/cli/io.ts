/**
 * Where a command reads its settings and input and writes its output: the process's own
 * environment and streams, or a caller's (the tests run commands in their own process).
 */
export interface CliIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: TextOutput;
  readonly stderr: TextOutput;
}

export interface TextOutput {
  write(text: string): unknown;
}

export const PROCESS_IO: CliIo = { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };

/** `console.log` to `out`: the text and a line break. */
export function printLine(out: TextOutput, text: string): void {
  out.write(`${text}\n`);
}
