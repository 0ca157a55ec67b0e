import { spawn, type ChildProcess } from 'node:child_process';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const TRELLIS_BIN = fileURLToPath(new URL('../../bin/trellis.mjs', import.meta.url));

export interface SpawnedServer {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Runs `trellis serve` as a child process and waits until it prints where it listens. */
export async function spawnServer(env: Record<string, string>, timeoutMs = 30_000): Promise<SpawnedServer> {
  const child = spawn(process.execPath, [TRELLIS_BIN, 'serve'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    // A server that did not start in time is stopped: a test that gives up leaves no process behind.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const check = () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return {
    child,
    url,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `trellis <args>` to completion in this process, as the binary does once loaded (`runCli`),
 * with `env` over this process's environment; `input`, when given, is its standard input (else
 * an empty one, not a terminal). Resolves with its exit code and output. A command that throws is
 * exit 1 with the stack on standard error, as a process would end. Starting a process for each
 * command cost 0.3-1 s; `spawnTrellis` runs the binary itself.
 */
export async function runTrellis(args: string[], env: Record<string, string>, input?: string): Promise<CliRun> {
  const { runCli } = await import('../../src/cli/index.js');
  let stdout = '';
  let stderr = '';
  const stdin = Readable.from(input === undefined ? [] : [Buffer.from(input)], { objectMode: false }) as unknown as NodeJS.ReadStream;
  const io = { env: { ...process.env, ...env }, stdin, stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } };
  try {
    return { code: await runCli(args, io), stdout, stderr };
  } catch (error) {
    return { code: 1, stdout, stderr: `${stderr}${(error as Error).stack ?? String(error)}\n` };
  }
}

/** Runs the `trellis` binary to completion as a process and returns its exit code and output; `input`, when given, is its standard input. */
export function spawnTrellis(args: string[], env: Record<string, string>, input?: string): Promise<CliRun> {
  return new Promise((resolve) => {
    const stdin = input === undefined ? 'ignore' : 'pipe';
    const child = spawn(process.execPath, [TRELLIS_BIN, ...args], { env: { ...process.env, ...env }, stdio: [stdin, 'pipe', 'pipe'] });
    // A CLI that exits before reading its input is no failure of the helper.
    child.stdin?.on('error', () => {});
    child.stdin?.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
