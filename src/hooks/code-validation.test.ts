import { describe, expect, it } from 'vitest';
import { HOOK_GLOBALS, namesCapability, validateHookCode } from './code-validation.js';

/** Puts `body` on line 2, column 3 of a valid hook. */
const inHook = (body: string) => `async function (instance) {\n  ${body}\n}`;
const BODY_LINE = 2;
const BODY_COLUMN = 3;

const VALID = { valid: true, errors: [], warnings: [] };

describe('validateHookCode: shape', () => {
  it.each([
    ['an anonymous async function', 'async function (instance) { return instance; }'],
    ['a named async function', 'async function handler(instance) { return instance; }'],
    ['an async arrow with a block', 'async (instance) => { instance.total = 1; }'],
    ['an async arrow with an expression body', 'async instance => instance.total'],
    ['an async function without parameters', 'async function () { console.log("hi"); }'],
    ['surrounding comments and blank lines', '// Stamps the record\n\nasync (instance) => {\n  instance.at = Date.now();\n} // end\n'],
    ['await inside', 'async (instance) => { const res = await fetch(env.URL); return res.json(); }'],
  ])('accepts %s', (_what, code) => {
    expect(validateHookCode(code)).toEqual(VALID);
  });

  it.each([
    ['bare statements', 'const x = await db.orders;\nreturn x;', 1, 1, 'wrap these statements in it'],
    ['an assignment to module.exports', 'module.exports = async function (instance) {}', 1, 1, 'single async function'],
    ['a non-async function', 'function (instance) { return 1; }', 1, 1, 'add async'],
    ['a non-async arrow', '(instance) => instance', 1, 1, 'add async'],
    ['an async generator', 'async function* (instance) { yield 1; }', 1, 1, 'not a generator'],
    ['two parameters', 'async (instance, extra) => {}', 1, 18, 'at most one parameter'],
    ['a trailing semicolon', 'async (instance) => {};', 1, 23, 'nothing after it'],
    ['a second statement', 'async (instance) => {}\nsteal();', 2, 1, 'nothing after it'],
    ['code that tries to close the wrapping parenthesis', 'async () => {}) ; steal(); (function () {}', 1, 15, 'nothing after it'],
  ])('rejects %s with a clear message', (_what, code, line, column, hint) => {
    const result = validateHookCode(code);
    expect(result).toEqual({ valid: false, errors: [{ code: 'HOOK_SHAPE', message: expect.stringContaining(hint), line, column }], warnings: [] });
    expect(result.errors[0]!.message).toContain('e.g. async function (instance) { ... }');
  });

  it.each([
    ['an empty string', ''],
    ['only whitespace', ' \n\t '],
    ['only comments', '// nothing here\n/* at all */'],
  ])('rejects %s as empty', (_what, code) => {
    expect(validateHookCode(code)).toEqual({
      valid: false,
      errors: [{ code: 'EMPTY', message: expect.stringContaining('must not be empty') }],
      warnings: [],
    });
  });

  it.each([
    ['a missing brace', 'async (instance) => {\n  if (instance.x) {\n}', 3, 2],
    ['a stray token', 'async (instance) => {\n  const = 1;\n}', 2, 9],
    ['a with statement (hooks run in strict mode)', 'async (instance) => {\n  with (instance) {}\n}', 2, 3],
    ['an octal literal (hooks run in strict mode)', 'async (instance) => {\n  return 010;\n}', 2, 10],
    ['a parameter named eval (hooks run in strict mode)', 'async (instance) => {\n  const check = function (eval) {};\n}', 2, 27],
  ])('reports a syntax error (%s) with its line and column', (_what, code, line, column) => {
    expect(validateHookCode(code).errors).toEqual([{ code: 'SYNTAX', message: expect.any(String), line, column }]);
  });

  it('refuses a NUL character, which the sandbox could not run', () => {
    expect(validateHookCode('async () => 1 /* \0 */')).toEqual({ valid: false, errors: [{ code: 'SYNTAX', message: 'Hook code must not contain NUL characters' }], warnings: [] });
  });

  it('reports code nested too deeply to parse instead of crashing', () => {
    expect(validateHookCode(`async () => ${'['.repeat(30_000)}${']'.repeat(30_000)}`).errors).toEqual([
      expect.objectContaining({ code: 'TOO_COMPLEX' }),
    ]);
  });
});

describe('validateHookCode: forbidden constructs', () => {
  it.each([
    ['require', 'const fs = require("fs");', 'FORBIDDEN_GLOBAL', 'require', 'granted capabilities'],
    ['process', 'const key = process.env.KEY;', 'FORBIDDEN_GLOBAL', 'process', 'env.API_TOKEN'],
    ['eval', 'eval(instance.code);', 'FORBIDDEN_GLOBAL', 'eval', 'plain functions'],
    ['Function', 'const f = Function("return this")();', 'FORBIDDEN_GLOBAL', 'Function', 'plain functions'],
    ['new Function', 'const f = new Function("return this");', 'FORBIDDEN_GLOBAL', 'Function', 'plain functions'],
    ['globalThis.process', 'globalThis.process.exit(1);', 'FORBIDDEN_GLOBAL', 'globalThis', 'env.API_TOKEN'],
    ["globalThis['eval']", "globalThis['eval']('1');", 'FORBIDDEN_GLOBAL', 'globalThis', 'plain functions'],
    ['global.require', 'global.require("fs");', 'FORBIDDEN_GLOBAL', 'global', 'granted capabilities'],
    ['globalThis.constructor', 'const C = globalThis.constructor;', 'FORBIDDEN_GLOBAL', 'globalThis', "global object's constructor"],
    ['.constructor.constructor', 'const F = instance.constructor.constructor("return process")();', 'FORBIDDEN_GLOBAL', 'instance', 'Function constructor'],
    ['a computed property of globalThis', 'const value = globalThis[instance.name];', 'DYNAMIC_GLOBAL_ACCESS', 'globalThis', 'fixed property name'],
    ['dynamic import()', 'const fs = await import("fs");', 'DYNAMIC_IMPORT', 'import', 'granted capabilities'],
    ['a __proto__ member', 'instance.__proto__.polluted = true;', 'FORBIDDEN_PROTO', 'instance', 'prototypes'],
    ["a ['__proto__'] member", "const p = instance['__proto__'];", 'FORBIDDEN_PROTO', 'instance', 'prototypes'],
    ['a __proto__ key', 'const o = { __proto__: null };', 'FORBIDDEN_PROTO', '__proto__', 'prototypes'],
  ])('rejects %s at its exact position', (_what, body, code, at, hint) => {
    expect(validateHookCode(inHook(body))).toEqual({
      valid: false,
      errors: [{ code, message: expect.stringContaining(hint), line: BODY_LINE, column: BODY_COLUMN + body.indexOf(at) }],
      warnings: [],
    });
  });

  it.each([
    ['the granted capabilities', 'const sig = crypto.hmacSha256(env.SECRET, instance.body); console.log(headers["x-sig"], sig); await db.orders; await fetch(env.URL);'],
    ['a parameter named process', 'const run = (process) => process.start();'],
    ['a local named require', 'const require = (name) => name; require("x");'],
    ['a local shadowing Function', 'const Function = (x) => x; return Function(1);'],
    ['a property named like a forbidden global', 'instance.process = instance.require;'],
    ['an object key named like a forbidden global', 'return { process: 1, eval: 2, require: 3 };'],
    ['a constructor name', 'const kind = instance.constructor.name;'],
    ['while (true) with a timeout left to the runtime', 'while (true) { if (Date.now() > 0) break; }'],
  ])('accepts %s', (_what, body) => {
    expect(validateHookCode(inHook(body))).toEqual(VALID);
  });

  it('does not flag a global shadowed by the hook parameter itself', () => {
    expect(validateHookCode('async (process) => process.id')).toEqual(VALID);
  });

  it('reports every violation in source order', () => {
    const code = inHook('process.exit();\n  require("fs");');
    expect(validateHookCode(code).errors.map(({ code, line, column }) => ({ code, line, column }))).toEqual([
      { code: 'FORBIDDEN_GLOBAL', line: 2, column: 3 },
      { code: 'FORBIDDEN_GLOBAL', line: 3, column: 3 },
    ]);
  });

  it('reports at most 100 errors plus a summary', () => {
    const result = validateHookCode(inHook('eval(1);'.repeat(150)));
    expect(result.errors).toHaveLength(101);
    expect(result.errors[100]).toEqual({ code: 'TRUNCATED', message: '50 more errors not shown; fix these first' });
  });
});

describe('validateHookCode: size', () => {
  const LIMIT = 204_800;
  /** A valid hook of exactly `bytes` bytes of UTF-8, padded inside a comment with `filler`. */
  const hookOfBytes = (bytes: number, filler: string) => {
    const head = 'async (instance) => instance\n//';
    const fillerBytes = Buffer.byteLength(filler);
    const room = bytes - head.length;
    return head + filler.repeat(Math.floor(room / fillerBytes)) + 'a'.repeat(room % fillerBytes);
  };

  it.each([
    ['ASCII', 'a'],
    ['two-byte characters', 'ß'],
    ['four-byte characters', '😀'],
  ])('accepts exactly 200 KB of UTF-8 (%s)', (_what, filler) => {
    const code = hookOfBytes(LIMIT, filler);
    expect(Buffer.byteLength(code)).toBe(LIMIT);
    expect(validateHookCode(code)).toEqual(VALID);
  });

  it.each([
    ['ASCII', 'a'],
    ['two-byte characters', 'ß'],
    ['four-byte characters', '😀'],
  ])('rejects 200 KB + 1 byte of UTF-8 (%s)', (_what, filler) => {
    const code = hookOfBytes(LIMIT + 1, filler);
    expect(Buffer.byteLength(code)).toBe(LIMIT + 1);
    expect(validateHookCode(code)).toEqual({
      valid: false,
      errors: [{ code: 'TOO_LARGE', message: `The code is ${LIMIT + 1} bytes of UTF-8; the limit is 200 KB (${LIMIT} bytes)` }],
      warnings: [],
    });
  });
});

describe('HOOK_GLOBALS', () => {
  it('lists the capabilities granted at run time, each described', () => {
    expect(HOOK_GLOBALS.map((global) => global.name)).toEqual(['instance', 'headers', 'request', 'respond', 'env', 'fetch', 'crypto', 'console', 'db']);
    for (const global of HOOK_GLOBALS) expect(global.description.length).toBeGreaterThan(10);
  });

  it('documents the crypto helpers', () => {
    const crypto = HOOK_GLOBALS.find((global) => global.name === 'crypto')!;
    for (const helper of ['hmac(algorithm, key, data, encoding)', 'hash(algorithm, data, encoding)', 'hmacSha256(key, data) -> hex', 'sha256(data) -> hex', 'timingSafeEqual(a, b)']) {
      expect(crypto.description).toContain(helper);
    }
  });
});

describe('namesCapability', () => {
  it.each([
    ['the identifier', "async () => db.find('Order')", 'db', true],
    ['a longer identifier only', 'async () => { const dbx = 1; return dbx }', 'db', false],
    ['the word in a comment (a harmless false positive)', 'async () => 1 // no fetch here', 'fetch', true],
    ['the name spelled with an escape', 'async () => typeof f\\u0065tch', 'fetch', true],
    ['any escape, which could spell any name', "async () => '\\u0041'", 'db', true],
  ])('answers for %s', (_case, code, name, expected) => {
    expect(namesCapability(code, name)).toBe(expected);
  });
});
