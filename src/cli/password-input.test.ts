import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readPassword, UsageError } from './password-input.js';

/**
 * A terminal as `readPassword` sees standard input: a stream with isTTY and setRawMode, whose
 * raw-mode switches are kept. What a person types is written to it. (cli.test asks through a real
 * terminal, `script`, in a spawned process; this checks the line editing beside it.)
 */
function terminal() {
  const stream = new PassThrough() as PassThrough & { isTTY: boolean; rawModes: boolean[]; setRawMode(mode: boolean): void };
  stream.isTTY = true;
  stream.rawModes = [];
  stream.setRawMode = (mode: boolean) => void stream.rawModes.push(mode);
  return stream;
}

function prompts() {
  let text = '';
  return { write: (chunk: string) => ((text += chunk), true), text: () => text };
}

const ask = (input: ReturnType<typeof terminal>, output = prompts()) => readPassword({ stdin: false }, input as unknown as NodeJS.ReadStream, output);

describe('readPassword in a terminal', () => {
  it('asks twice on standard error with echo off, takes Backspace as erasing, and gives the terminal back', async () => {
    const input = terminal();
    const output = prompts();
    const answer = ask(input, output);
    input.write('secrex\u007ft-1');
    input.write('\r');
    input.write('secret-1\n');
    await expect(answer).resolves.toBe('secret-1');
    expect(output.text()).toBe('Password: \nRepeat the password: \n');
    expect(input.rawModes).toEqual([true, false]);
    expect(input.listenerCount('data')).toBe(0);
  });

  it('refuses two answers that differ, and a question cancelled with Ctrl-C or Ctrl-D, giving the terminal back each time', async () => {
    for (const [typed, message] of [
      ['first-one\rsecond-one\r', 'the two passwords differ; nothing was created'],
      ['half\u0003', 'cancelled; nothing was created'],
      ['first-one\r\u0004', 'cancelled; nothing was created'],
    ] as const) {
      const input = terminal();
      const answer = ask(input);
      input.write(typed);
      await expect(answer).rejects.toThrow(new UsageError(message));
      expect(input.rawModes).toEqual([true, false]);
    }
  });
});

describe('readPassword from its options and standard input', () => {
  const piped = (text: string) => {
    const stream = new PassThrough();
    stream.end(text);
    return stream as unknown as NodeJS.ReadStream;
  };

  it('takes --password as given, or the first line of standard input without its line break', async () => {
    await expect(readPassword({ password: 'given-1', stdin: false }, piped(''))).resolves.toBe('given-1');
    await expect(readPassword({ stdin: true }, piped('from-stdin-1\r\nsecond line\n'))).resolves.toBe('from-stdin-1');
    await expect(readPassword({ stdin: true }, piped('no line break'))).resolves.toBe('no line break');
  });

  it('refuses both options, an empty first line, and neither option without a terminal', async () => {
    await expect(readPassword({ password: 'x', stdin: true }, piped('y\n'))).rejects.toThrow('either with --password or with --password-stdin, not both');
    await expect(readPassword({ stdin: true }, piped('\nsecret\n'))).rejects.toThrow('standard input holds no password');
    await expect(readPassword({ stdin: false }, piped('secret\n'))).rejects.toThrow('run the command in a terminal to be asked for it');
  });
});
