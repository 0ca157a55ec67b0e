import type { ReadStream } from 'node:tty';
import type { TextOutput } from './io.js';

/** A command line the CLI cannot act on; printed like commander's own usage errors. */
export class UsageError extends Error {
  readonly code = 'BAD_USAGE';
}

/** The most standard input `--password-stdin` reads while it looks for the end of the first line. */
const MAX_STDIN_CHARS = 64 * 1024;

/**
 * The password of `trellis user create`, where no other user of the machine sees it:
 * - `stdin`: the first line of standard input, without its line break (`--password-stdin`);
 * - neither option in a terminal: asked twice, not echoed;
 * - `password`: as given (`--password`, kept for scripts; the process list shows it).
 * Throws UsageError (BAD_USAGE) for both options, an empty first line, two answers that differ,
 * a cancelled question, or neither option without a terminal.
 */
export async function readPassword(
  options: { password?: string; stdin: boolean },
  input: NodeJS.ReadStream = process.stdin,
  prompts: TextOutput = process.stderr,
): Promise<string> {
  if (options.stdin && options.password !== undefined) throw new UsageError('give the password either with --password or with --password-stdin, not both');
  if (options.password !== undefined) return options.password;
  if (options.stdin) return firstLine(input);
  if (!input.isTTY) {
    throw new UsageError('a password is required: send it on standard input with --password-stdin, or run the command in a terminal to be asked for it');
  }
  return askTwice(input as ReadStream, prompts);
}

async function firstLine(input: NodeJS.ReadStream): Promise<string> {
  input.setEncoding('utf8');
  let text = '';
  for await (const chunk of input) {
    text += chunk as string;
    if (text.includes('\n') || text.length > MAX_STDIN_CHARS) break;
  }
  const line = text.split('\n')[0]!.replace(/\r$/, '');
  if (line === '') throw new UsageError('--password-stdin: standard input holds no password (send it as its first line)');
  return line;
}

/** Asks in the terminal with echo off (raw mode), on standard error so that --json output stays clean. */
async function askTwice(input: ReadStream, prompts: TextOutput): Promise<string> {
  const lines = hiddenLines(input);
  try {
    prompts.write('Password: ');
    const first = await lines.next();
    prompts.write('\nRepeat the password: ');
    const second = await lines.next();
    prompts.write('\n');
    if (first !== second) throw new UsageError('the two passwords differ; nothing was created');
    return first;
  } finally {
    lines.close();
  }
}

/** Lines typed in raw mode: Backspace erases, Enter ends a line, Ctrl-C or Ctrl-D cancels. */
function hiddenLines(input: ReadStream): { next(): Promise<string>; close(): void } {
  const typed: string[] = [];
  let current = '';
  let cancelled = false;
  let waiting: (() => void) | undefined;
  const onData = (chunk: string) => {
    for (const char of chunk) {
      if (char === '\r' || char === '\n') {
        typed.push(current);
        current = '';
      } else if (char === '\u0003' || char === '\u0004') {
        cancelled = true;
      } else if (char === '\u007f' || char === '\b') {
        current = current.slice(0, -1);
      } else {
        current += char;
      }
    }
    waiting?.();
  };
  input.setRawMode(true);
  input.setEncoding('utf8');
  input.on('data', onData);
  input.resume();
  return {
    async next() {
      while (typed.length === 0 && !cancelled) await new Promise<void>((resolve) => (waiting = resolve));
      if (cancelled) throw new UsageError('cancelled; nothing was created');
      return typed.shift()!;
    },
    close() {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
    },
  };
}
