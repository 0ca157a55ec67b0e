import { spawn, type ChildProcess } from 'node:child_process';
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

/** Runs the CLI to completion and returns its exit code and output; `input`, when given, is its standard input. */
export function runTrellis(args: string[], env: Record<string, string>, input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
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
