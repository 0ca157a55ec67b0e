import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AUDIT_RETENTION_DAYS, MAX_STORED_BYTES, redactArguments } from './mcp-log.js';

const MCP_KEY = `trellis_${'A'.repeat(43)}`;
const INTEGRATION_KEY = `trik_${'b-_9'.repeat(10)}`;
const SESSION_TOKEN = `trs_${'c'.repeat(43)}`;
const ACCESS_TOKEN = `tat_${'D'.repeat(43)}`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Nests `{ child: ... }` `levels` deep around `leaf`. */
function nested(levels: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i += 1) value = { child: value };
  return value;
}

describe('redactArguments', () => {
  it('keeps the name of an environment variable and redacts its value', () => {
    expect(redactArguments({ name: 'STRIPE_KEY', value: 'sk_live_very_secret' })).toEqual({ name: 'STRIPE_KEY', value: '[redacted]' });
  });

  it.each([
    ['value', { value: 's3cret' }],
    ['apiKey', { apiKey: 's3cret' }],
    ['api_key', { api_key: 's3cret' }],
    ['token', { token: 's3cret' }],
    ['password', { password: 's3cret' }],
    ['secret', { secret: 's3cret' }],
    ['clientSecret', { clientSecret: 's3cret' }],
    ['client_secret', { client_secret: 's3cret' }],
    ['authorization', { authorization: 'Bearer s3cret' }],
    ['an upper-case name', { APIKEY: 's3cret' }],
    ['a mixed-case name', { Authorization: 's3cret' }],
    ['a secret that is an object', { secret: { nested: 's3cret' } }],
    ['a secret that is a number', { password: 12345678 }],
  ])('redacts a value under %s', (_case, args) => {
    const redacted = redactArguments(args);
    expect(Object.values(redacted)).toEqual(['[redacted]']);
    expect(JSON.stringify(redacted)).not.toContain('s3cret');
    expect(JSON.stringify(redacted)).not.toContain('12345678');
  });

  it('redacts secret names at any depth, inside objects and arrays', () => {
    const args = { integration: { settings: { apiKey: 's3cret', region: 'eu' } }, headers: [{ name: 'x', authorization: 's3cret' }] };
    expect(redactArguments(args)).toEqual({
      integration: { settings: { apiKey: '[redacted]', region: 'eu' } },
      headers: [{ name: 'x', authorization: '[redacted]' }],
    });
  });

  it.each([
    ['an MCP key', MCP_KEY],
    ['an integration key', INTEGRATION_KEY],
    ['a session token', SESSION_TOKEN],
    ['an access token', ACCESS_TOKEN],
  ])('replaces %s inside free text and keeps the text around it', (_case, key) => {
    const redacted = redactArguments({ description: `call with ${key}, then stop`, code: `const k = "${key}";` });
    expect(redacted).toEqual({ description: 'call with [redacted-key], then stop', code: 'const k = "[redacted-key]";' });
  });

  it('leaves prefixes that are not followed by a key alone', () => {
    const text = 'the trellis_ prefix, trik_short and a trs_ token';
    expect(redactArguments({ text })).toEqual({ text });
  });

  it('redacts key-shaped argument names too', () => {
    expect(redactArguments({ [MCP_KEY]: 1 })).toEqual({ '[redacted-key]': 1 });
  });

  it('keeps code of exactly 2048 bytes as it is', () => {
    const code = 'x'.repeat(2048);
    expect(redactArguments({ name: 'h', code })).toEqual({ name: 'h', code });
  });

  it('stores code of 2049 bytes as a 512-character preview with the SHA-256 and size of the whole', () => {
    const code = `${'/* header */'.padEnd(600, ' ')}${'y'.repeat(2049 - 600)}`;
    expect(redactArguments({ name: 'h', code })).toEqual({
      name: 'h',
      code: { preview: code.slice(0, 512), sha256: sha256(code), bytes: 2049 },
    });
  });

  it('measures the size in UTF-8 bytes, not characters', () => {
    const content = 'é'.repeat(1025);
    const redacted = redactArguments({ content }) as { content: { bytes: number; sha256: string } };
    expect(redacted.content).toMatchObject({ bytes: 2050, sha256: sha256(content) });
  });

  it.each(['customCode', 'content', 'code', 'old_str', 'new_str', 'anything'])('applies the long-string rule to %s', (name) => {
    const long = 'z'.repeat(5000);
    expect(redactArguments({ [name]: long })[name]).toEqual({ preview: 'z'.repeat(512), sha256: sha256(long), bytes: 5000 });
  });

  it('redacts a key inside the preview of a long string while hashing the text as sent', () => {
    const code = `const key = "${MCP_KEY}";\n${'// filler\n'.repeat(300)}`;
    const redacted = redactArguments({ code }) as { code: { preview: string; sha256: string } };
    expect(redacted.code.preview).toContain('const key = "[redacted-key]";');
    expect(redacted.code.preview).not.toContain(MCP_KEY.slice(8));
    expect(redacted.code.sha256).toBe(sha256(code));
  });

  it('redacts a key that straddles the end of the preview', () => {
    const code = `${'a'.repeat(500)}${MCP_KEY}${'b'.repeat(3000)}`;
    const redacted = redactArguments({ code }) as { code: { preview: string } };
    expect(redacted.code.preview).toBe(`${'a'.repeat(500)}[redacted-key]`.slice(0, 512));
    expect(redacted.code.preview).not.toContain('trellis_');
  });

  it('never cuts a preview inside a surrogate pair', () => {
    const code = `${'a'.repeat(511)}😀${'b'.repeat(3000)}`;
    const redacted = redactArguments({ code }) as { code: { preview: string } };
    expect(redacted.code.preview).toBe('a'.repeat(511));
  });

  it('keeps the first 100 items of an array and counts the rest', () => {
    const items = Array.from({ length: 130 }, (_, i) => i);
    const redacted = redactArguments({ items }) as { items: unknown[] };
    expect(redacted.items).toHaveLength(101);
    expect(redacted.items.slice(0, 100)).toEqual(items.slice(0, 100));
    expect(redacted.items[100]).toBe('[30 more items]');
  });

  it('redacts every item of an array', () => {
    expect(redactArguments({ list: [{ token: 't' }, MCP_KEY, 3, null, true] })).toEqual({
      list: [{ token: '[redacted]' }, '[redacted-key]', 3, null, true],
    });
  });

  it('keeps 8 levels of nested objects and replaces what lies deeper', () => {
    expect(redactArguments(nested(8, 'leaf'))).toEqual(nested(8, 'leaf'));
    expect(redactArguments(nested(9, 'leaf'))).toEqual(nested(8, '[too deep]'));
    expect(redactArguments(nested(50, 'leaf'))).toEqual(nested(8, '[too deep]'));
  });

  it('survives arguments that refer to themselves', () => {
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    expect(JSON.stringify(redactArguments(loop))).toContain('[too deep]');
  });

  it('caps the stored JSON at 16 KB, keeping leading arguments and marking the result truncated', () => {
    const args: Record<string, unknown> = { tool: 'create_hook' };
    for (let i = 0; i < 40; i += 1) args[`field${i}`] = 'p'.repeat(1000);
    const redacted = redactArguments(args);
    expect(Buffer.byteLength(JSON.stringify(redacted))).toBeLessThanOrEqual(MAX_STORED_BYTES);
    expect(redacted).toMatchObject({ tool: 'create_hook', field0: 'p'.repeat(1000), truncated: true });
    const keptFields = Object.keys(redacted).filter((key) => key.startsWith('field'));
    expect(redacted.omittedKeys).toBe(40 - keptFields.length);
    expect(keptFields.length).toBeGreaterThan(10);
  });

  it('does not mark arguments under the cap as truncated', () => {
    expect(redactArguments({ a: 'x'.repeat(2000), b: 'y'.repeat(2000) })).not.toHaveProperty('truncated');
  });

  it.each([
    ['a string', `key ${MCP_KEY}`, { value: 'key [redacted-key]' }],
    ['a number', 42, { value: 42 }],
    ['null', null, { value: null }],
    ['an array', [{ password: 'p' }], { value: [{ password: '[redacted]' }] }],
    ['nothing', undefined, {}],
  ])('wraps %s given as the whole arguments in { value }', (_case, args, expected) => {
    expect(redactArguments(args)).toEqual(expected);
  });

  it('replaces characters PostgreSQL cannot store in jsonb', () => {
    expect(redactArguments({ text: 'a\u0000b\ud800c' })).toEqual({ text: 'a\ufffdb\ufffdc' });
  });

  it('does not change the arguments it is given', () => {
    const args = { value: 'v', nested: { token: 't' } };
    redactArguments(args);
    expect(args).toEqual({ value: 'v', nested: { token: 't' } });
  });
});

it('keeps audit entries for one year', () => {
  expect(AUDIT_RETENTION_DAYS).toBe(365);
});
