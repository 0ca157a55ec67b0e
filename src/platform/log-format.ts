// Human-readable log lines for a terminal: pino writes JSON, and this turns each line into
// `12:04:05 INFO  message key=value` before it reaches the terminal. Redaction happened before.

export type LogFormat = 'pretty' | 'json';

/** The format `TRELLIS_LOG_FORMAT` asks for: `auto` is pretty when standard output is a terminal. */
export function resolveLogFormat(setting: LogFormat | 'auto', stdoutIsTerminal: boolean): LogFormat {
  if (setting !== 'auto') return setting;
  return stdoutIsTerminal ? 'pretty' : 'json';
}

const LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** ANSI colours of the level names, in a terminal. */
const LEVEL_COLOURS: Readonly<Record<number, string>> = { 10: '90', 20: '90', 30: '36', 40: '33', 50: '31', 60: '31' };
/** Fields every line has, or that the line shows in its own way. */
const SHOWN_APART: ReadonlySet<string> = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'err', 'reqId']);
const REQUEST_FIELDS: ReadonlySet<string> = new Set(['method', 'route', 'path', 'status', 'ms']);

/**
 * One pino record (its JSON line) as a line a person reads: the local time, the level, the message,
 * then the other fields as `key=value`, the request id last; an error's type, message and stack on
 * the lines below. A "request answered" record reads `POST /graphql 200 12.3 ms`. Text that is not
 * a JSON object passes through unchanged.
 *
 * @example prettyLine('{"level":30,"time":1767340800000,"msg":"listening","port":3000}\n') // '08:00:00 INFO  listening port=3000\n' (local time)
 */
export function prettyLine(json: string, colours = false): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  if (typeof record !== 'object' || record === null) return json;
  const level = typeof record.level === 'number' ? record.level : 30;
  const name = (LEVEL_NAMES[level] ?? String(level)).padEnd(5);
  const head = `${clock(record.time)} ${colours ? `\u001b[${LEVEL_COLOURS[level] ?? '0'}m${name}\u001b[0m` : name}`;
  const request = record.msg === 'request answered' && typeof record.method === 'string';
  const text = request ? `${String(record.method)} ${String(record.path)} ${String(record.status)} ${String(record.ms)} ms` : String(record.msg ?? '');
  const fields = Object.entries(record)
    .filter(([key, value]) => !SHOWN_APART.has(key) && !(request && REQUEST_FIELDS.has(key)) && value !== undefined)
    .map(([key, value]) => `${key}=${fieldText(value)}`);
  if (typeof record.reqId === 'string') fields.push(`reqId=${record.reqId}`);
  return `${[head, text, ...fields].join(' ')}${errorLines(record.err)}\n`;
}

/**
 * A pino destination that writes `prettyLine`s to `out` (standard output by default).
 *
 * @example pino({ level: 'info' }, prettyDestination(process.stdout))
 */
export function prettyDestination(out: { write(text: string): unknown; isTTY?: boolean } = process.stdout): { write(line: string): void } {
  const colours = out.isTTY === true;
  return { write: (line: string) => void out.write(prettyLine(line, colours)) };
}

function clock(time: unknown): string {
  const date = new Date(typeof time === 'number' ? time : Date.now());
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((part) => String(part).padStart(2, '0')).join(':');
}

/** A value as `key=value` shows it: plain text when it has no space or quote, JSON otherwise. */
function fieldText(value: unknown): string {
  if (typeof value === 'string' && /^[^\s"=]+$/.test(value)) return value;
  return JSON.stringify(value) ?? String(value);
}

function errorLines(err: unknown): string {
  if (typeof err !== 'object' || err === null) return '';
  const { type, message, stack } = err as { type?: unknown; message?: unknown; stack?: unknown };
  const lines = typeof stack === 'string' ? stack.split('\n') : [`${String(type ?? 'Error')}: ${String(message ?? '')}`];
  return lines.map((line) => `\n    ${line.trim()}`).join('');
}
