import { describe, expect, it } from 'vitest';
import { ALLOWED_FEATURE_MODULES, validateFeatureCode } from './jsx-validation.js';

/** Puts `body` on line 3, column 3 of a valid feature, whose props declare the names bodies read. */
const inPage = (body: string) =>
  "import { useState } from 'react'; import { navigate } from '@trellis/runtime'; import { Button, Text } from '@trellis/ui';\n" +
  `export default function Page({ api, data, extra, html, items, list, name, ok, options, peers, props, run, url, value }) {\n  ${body}\n  return null;\n}\n`;
const BODY_LINE = 3;
const BODY_COLUMN = 3;

const errorCodes = (code: string) => validateFeatureCode(code).errors.map((error) => error.code);

describe('validateFeatureCode: accepted code', () => {
  it.each([
    ['a function declaration', 'export default function Page() { return <p>Hi</p>; }'],
    ['an arrow function', 'export default () => <p>Hi</p>;'],
    ['a function expression', 'export default function () { return null; }'],
    ['a name bound to a function declaration', 'function Page() { return null; }\nexport default Page;'],
    ['a name bound to a const arrow', 'const Page = () => null;\nexport default Page;'],
    ['a name bound to an exported function', 'export function Page() { return null; }\nexport default Page;'],
    ['an export specifier named default', 'const Page = () => null;\nexport { Page as default };'],
  ])('accepts a default export that is %s', (_what, code) => {
    expect(validateFeatureCode(code)).toEqual({ valid: true, errors: [], warnings: [] });
  });

  it('accepts imports from every allowed module', () => {
    const code = [
      "import React, { useState } from 'react';",
      "import { useQuery, useMutation, graphql, navigate, useCurrentUser } from '@trellis/runtime';",
      "import { Button, Card, Table, Input, Select, Stack, Text, Heading, Badge, Modal, Form } from '@trellis/ui';",
      "import * as UI from '@trellis/ui';",
      "import { format } from 'date-fns';",
      "import { groupBy } from 'lodash-es';",
      'export default () => null;',
    ].join('\n');
    expect(validateFeatureCode(code).errors).toEqual([]);
  });

  it.each([
    ['window.location.href', 'const href = window.location.href;'],
    ['document.title', 'const title = document.title;'],
    ['navigator.language', 'const language = navigator.language;'],
    ['setTimeout with a function', 'setTimeout(() => navigate("/"), 100);'],
    ['window.setInterval with a function', 'window.setInterval(function tick() {}, 100);'],
    ['a constructor property', 'const kind = value.constructor.name;'],
    ['a lower-case JSX tag that shares a global name', 'const element = <fetch />;'],
    ['a JSX attribute named like a global', 'const element = <div fetch="x" open />;'],
    ['an object key named like a global', 'const settings = { fetch: 1, eval: 2, open: true };'],
    ['a property named like a global', 'const result = api.fetch(options.eval);'],
  ])('accepts %s', (_what, body) => {
    expect(validateFeatureCode(inPage(body)).errors).toEqual([]);
  });

  it.each([
    ['a parameter', 'const load = (fetch) => fetch("/x");'],
    ['a destructured parameter', 'const load = ({ fetch }) => fetch("/x");'],
    ['a const', 'const fetch = () => 1; fetch();'],
    ['a useState pair', 'const [open, setOpen] = useState(false); open && setOpen(false);'],
    ['a function declared after its use', 'fetch(); function fetch() {}'],
    ['a var hoisted out of a nested block', 'fetch(); if (ok) { var fetch = () => 1; }'],
    ['a catch parameter', 'try { run(); } catch (fetch) { fetch.message; }'],
    ['a rest element', 'const { a, ...localStorage } = props; localStorage.a;'],
    ['a default value in a pattern', 'const [sessionStorage = {}] = list; sessionStorage.x;'],
    ['a for-of binding', 'for (const fetch of items) fetch();'],
    ['a local window object', 'const window = { fetch: () => 1 }; window.fetch(); window["fetch"]();'],
    ['a named function expression', 'const start = function fetch() { return fetch; };'],
  ])('does not flag a global name shadowed by %s', (_what, body) => {
    expect(validateFeatureCode(inPage(body)).errors).toEqual([]);
  });

  it('does not flag an imported name that is renamed', () => {
    const code = "import { open as openDialog } from 'lodash-es';\nexport default function Page() { return openDialog; }";
    expect(validateFeatureCode(code).errors).toEqual([]);
  });

  it('does not flag a module-level binding that shadows a global', () => {
    const code = "import { format as open } from 'date-fns';\nexport default function Page() { return open(new Date(), 'yyyy'); }";
    expect(validateFeatureCode(code).errors).toEqual([]);
  });

  it('still flags the global outside the scope that shadows it', () => {
    const body = 'const load = (fetch) => fetch("/x"); fetch("/y");';
    expect(validateFeatureCode(inPage(body)).errors).toEqual([
      expect.objectContaining({ code: 'FORBIDDEN_GLOBAL', line: BODY_LINE, column: BODY_COLUMN + body.lastIndexOf('fetch') }),
    ]);
  });

  it('still flags the global when the shadowing binding is in a sibling block', () => {
    const body = '{ const fetch = 1; } fetch("/y");';
    expect(errorCodes(inPage(body))).toEqual(['FORBIDDEN_GLOBAL']);
  });
});

describe('validateFeatureCode: forbidden globals and constructs', () => {
  it.each([
    ['eval', 'eval("1 + 1");', 'FORBIDDEN_GLOBAL', 'eval(', 'plain functions'],
    ['Function', 'const f = Function("return 1");', 'FORBIDDEN_GLOBAL', 'Function(', 'plain functions'],
    ['new Function', 'const f = new Function("return 1");', 'FORBIDDEN_GLOBAL', 'Function(', 'plain functions'],
    ['fetch', 'fetch("/api");', 'FORBIDDEN_GLOBAL', 'fetch', "use graphql() or useQuery() / useMutation() from '@trellis/runtime' instead of fetch"],
    ['XMLHttpRequest', 'const x = new XMLHttpRequest();', 'FORBIDDEN_GLOBAL', 'XMLHttpRequest', 'useQuery()'],
    ['WebSocket', 'const s = new WebSocket(url);', 'FORBIDDEN_GLOBAL', 'WebSocket', 'useQuery()'],
    ['EventSource', 'const s = new EventSource(url);', 'FORBIDDEN_GLOBAL', 'EventSource', 'useQuery()'],
    ['localStorage', 'localStorage.setItem("k", "v");', 'FORBIDDEN_GLOBAL', 'localStorage', 'useState'],
    ['sessionStorage', 'const v = sessionStorage.k;', 'FORBIDDEN_GLOBAL', 'sessionStorage', 'useState'],
    ['indexedDB', 'indexedDB.open("db");', 'FORBIDDEN_GLOBAL', 'indexedDB', 'useState'],
    ['importScripts', 'importScripts("x.js");', 'FORBIDDEN_GLOBAL', 'importScripts', 'import'],
    ['require', 'const x = require("x");', 'FORBIDDEN_GLOBAL', 'require', 'import'],
    ['a bare open', 'open("https://example.com");', 'FORBIDDEN_GLOBAL', 'open', 'navigate()'],
    ['window.open', 'window.open("https://example.com");', 'FORBIDDEN_GLOBAL', 'window.open', 'navigate()'],
    ['document.cookie', 'const c = document.cookie;', 'FORBIDDEN_GLOBAL', 'document.cookie', 'useCurrentUser()'],
    ['document["cookie"]', 'document["cookie"] = "a=b";', 'FORBIDDEN_GLOBAL', 'document[', 'useCurrentUser()'],
    ['navigator.sendBeacon', 'navigator.sendBeacon("/x", data);', 'FORBIDDEN_GLOBAL', 'navigator', 'useMutation()'],
    ['window.fetch', 'window.fetch("/api");', 'FORBIDDEN_GLOBAL', 'window.fetch', 'instead of fetch'],
    ["window['fetch']", "window['fetch']('/api');", 'FORBIDDEN_GLOBAL', 'window[', 'instead of fetch'],
    ['window[`fetch`]', 'window[`fetch`]("/api");', 'FORBIDDEN_GLOBAL', 'window[', 'instead of fetch'],
    ['globalThis.eval', 'globalThis.eval("1");', 'FORBIDDEN_GLOBAL', 'globalThis', 'plain functions'],
    ['self.localStorage', 'self.localStorage.clear();', 'FORBIDDEN_GLOBAL', 'self', 'useState'],
    ['window.window.fetch', 'window.window.fetch("/api");', 'FORBIDDEN_GLOBAL', 'window.window', 'instead of fetch'],
    ['window?.fetch', 'window?.fetch("/api");', 'FORBIDDEN_GLOBAL', 'window?', 'instead of fetch'],
    ['window.document.cookie', 'const c = window.document.cookie;', 'FORBIDDEN_GLOBAL', 'window.document', 'useCurrentUser()'],
    ['window.navigator.sendBeacon', 'window.navigator.sendBeacon("/x");', 'FORBIDDEN_GLOBAL', 'window.navigator', 'useMutation()'],
    ['a computed property of window', 'const f = window[name];', 'DYNAMIC_GLOBAL_ACCESS', 'window[', 'fixed property name'],
    ['.constructor.constructor', 'const F = [].constructor.constructor("return 1");', 'FORBIDDEN_GLOBAL', '[].', 'Function constructor'],
    ['a capitalised JSX tag bound to a forbidden global', 'const e = <Function />;', 'FORBIDDEN_GLOBAL', 'Function', 'plain functions'],
    ['setTimeout with a string', 'setTimeout("refresh()", 10);', 'STRING_TIMER', '"refresh()"', 'pass a function'],
    ['setInterval with a template', 'setInterval(`tick()`, 10);', 'STRING_TIMER', '`tick()`', 'pass a function'],
    ['window.setTimeout with a string', 'window.setTimeout("refresh()", 10);', 'STRING_TIMER', '"refresh()"', 'pass a function'],
    ['dynamic import()', 'import("lodash-es").then(run);', 'DYNAMIC_IMPORT', 'import', 'static import'],
    ['dangerouslySetInnerHTML', 'const e = <div dangerouslySetInnerHTML={{ __html: html }} />;', 'DANGEROUS_HTML', 'dangerously', 'JSX text'],
    ['dangerouslySetInnerHTML in spread props', 'const e = <div {...{ dangerouslySetInnerHTML: { __html: html } }} />;', 'DANGEROUS_HTML', 'dangerously', 'JSX text'],
    ['a <script> element', 'const e = <script src="https://evil.example" />;', 'SCRIPT_ELEMENT', '<script', 'not allowed'],
    ['createElement("script")', 'const e = document.createElement("script");', 'SCRIPT_ELEMENT', 'document.createElement', 'not allowed'],
  ])('rejects %s at its exact position', (_what, body, code, at, hint) => {
    const result = validateFeatureCode(inPage(body));
    expect(result.valid).toBe(false);
    expect(result.errors).toEqual([{ code, message: expect.stringContaining(hint), line: BODY_LINE, column: BODY_COLUMN + body.indexOf(at) }]);
  });

  it('reports every violation in source order', () => {
    const code = inPage('fetch("/a");\n  eval("b");');
    expect(validateFeatureCode(code).errors.map(({ code, line, column }) => ({ code, line, column }))).toEqual([
      { code: 'FORBIDDEN_GLOBAL', line: 3, column: 3 },
      { code: 'FORBIDDEN_GLOBAL', line: 4, column: 3 },
    ]);
  });
});

describe('validateFeatureCode: module shape', () => {
  it.each([
    ['an unknown module', "import axios from 'axios';", "Module 'axios' is not available"],
    ['react-dom', "import { createPortal } from 'react-dom';", "Module 'react-dom'"],
    ['a subpath of an allowed module', "import debounce from 'lodash-es/debounce';", "Module 'lodash-es/debounce'"],
    ['a re-export from an unknown module', "export { get } from 'axios';", "Module 'axios'"],
    ['an export-all from an unknown module', "export * from 'node:fs';", "Module 'node:fs'"],
  ])('rejects an import of %s', (_what, statement, message) => {
    const result = validateFeatureCode(`${statement}\nexport default () => null;`);
    expect(result.errors).toEqual([
      { code: 'FORBIDDEN_IMPORT', message: expect.stringContaining(message), line: 1, column: statement.indexOf("'") + 1 },
    ]);
    expect(result.errors[0]!.message).toContain('react, @trellis/runtime, @trellis/ui, date-fns, lodash-es');
  });

  it.each([
    ['an unknown component', "import { Grid } from '@trellis/ui';", "'@trellis/ui' has no export 'Grid'", 10],
    ['a default import from the runtime', "import runtime from '@trellis/runtime';", "'@trellis/runtime' has no default export", 8],
  ])('rejects %s', (_what, statement, message, column) => {
    expect(validateFeatureCode(`${statement}\nexport default () => null;`).errors).toEqual([
      { code: 'UNKNOWN_EXPORT', message: expect.stringContaining(message), line: 1, column },
    ]);
  });

  it('rejects code without a default export', () => {
    expect(validateFeatureCode('export const Page = () => null;').errors).toEqual([
      { code: 'DEFAULT_EXPORT', message: expect.stringContaining('export default function Page()') },
    ]);
  });

  it.each([
    ['a number', 'export default 42;', 16],
    ['an object', 'export default { render() { return null; } };', 16],
    ['an async function', 'export default async function Page() { return null; }', 16],
    ['a generator', 'export default function* Page() { yield null; }', 16],
    ['a name bound to an object', 'const Page = {};\nexport default Page;', 16],
    ['an undeclared name', 'export default Page;', 16],
    ['a default re-exported from another module', "export { default } from 'react';", 10],
  ])('rejects a default export that is %s', (_what, code, column) => {
    const lines = code.split('\n');
    expect(validateFeatureCode(code).errors).toEqual([
      { code: 'DEFAULT_EXPORT', message: expect.stringContaining('must be a function component'), line: lines.length, column },
    ]);
  });

  it('rejects a second default export as a syntax error', () => {
    const code = 'export default function A() {}\nexport default function B() {}';
    expect(validateFeatureCode(code).errors).toEqual([{ code: 'SYNTAX', message: expect.stringContaining('Only one default export'), line: 2, column: 1 }]);
  });
});

describe('validateFeatureCode: syntax and size', () => {
  it.each([
    ['an unclosed JSX element', 'export default () => (\n  <div>\n);', 2, 8],
    ['a stray token', 'export default () => null;\nconst = 1;', 2, 7],
    ['a missing brace', 'export default function Page() {\n  return null;\n', 3, 1],
  ])('reports %s with its line and column', (_what, code, line, column) => {
    expect(validateFeatureCode(code)).toEqual({ valid: false, errors: [{ code: 'SYNTAX', message: expect.any(String), line, column }], warnings: [] });
  });

  it('strips the position suffix from the parser message', () => {
    expect(validateFeatureCode('const = 1;').errors[0]!.message).not.toMatch(/\(\d+:\d+\)/);
  });

  it.each([
    ['a type annotation', 'const n: number = 1;\nexport default () => null;'],
    ['an interface', 'interface Props { name: string }\nexport default () => null;'],
  ])('says TypeScript is not supported for %s', (_what, code) => {
    expect(validateFeatureCode(code).errors).toEqual([
      expect.objectContaining({ code: 'SYNTAX', message: expect.stringContaining('TypeScript syntax is not supported'), line: 1 }),
    ]);
  });

  it('reports code nested too deeply to parse instead of crashing', () => {
    expect(errorCodes(`export default () => ${'['.repeat(50_000)}${']'.repeat(50_000)};`)).toEqual(['TOO_COMPLEX']);
  });

  const LIMIT = 1_048_576;
  /** A valid feature of exactly `bytes` bytes of UTF-8, padded with a comment of `filler` characters. */
  const featureOfBytes = (bytes: number, filler: string) => {
    const head = 'export default () => null;\n//';
    const fillerBytes = Buffer.byteLength(filler);
    const room = bytes - head.length;
    return head + filler.repeat(Math.floor(room / fillerBytes)) + 'a'.repeat(room % fillerBytes);
  };

  it.each([
    ['ASCII', 'a'],
    ['two-byte characters', 'é'],
    ['three-byte characters', '€'],
  ])('accepts exactly 1 MB of UTF-8 (%s)', (_what, filler) => {
    const code = featureOfBytes(LIMIT, filler);
    expect(Buffer.byteLength(code)).toBe(LIMIT);
    expect(validateFeatureCode(code).valid).toBe(true);
  });

  it.each([
    ['ASCII', 'a'],
    ['two-byte characters', 'é'],
    ['three-byte characters', '€'],
  ])('rejects 1 MB + 1 byte of UTF-8 (%s)', (_what, filler) => {
    const code = featureOfBytes(LIMIT + 1, filler);
    expect(Buffer.byteLength(code)).toBe(LIMIT + 1);
    expect(validateFeatureCode(code)).toEqual({
      valid: false,
      errors: [{ code: 'TOO_LARGE', message: `The code is ${LIMIT + 1} bytes of UTF-8; the limit is 1 MB (${LIMIT} bytes)` }],
      warnings: [],
    });
  });
});

describe('validateFeatureCode: theme warnings', () => {
  it.each([
    ['a 6-digit hex colour in a string', 'const c = "#2563eb";', '#2563eb', 'FIXED_COLOR'],
    ['a 3-digit hex colour', "const c = '#abc';", '#abc', 'FIXED_COLOR'],
    ['an 8-digit hex colour', "const c = '#aabbccdd';", '#aabbccdd', 'FIXED_COLOR'],
    ['a hex colour in a template literal', 'const c = `1px solid #e2e8f0`;', '#e2e8f0', 'FIXED_COLOR'],
    ['a hex colour in a JSX attribute', 'const e = <Text title="#ff0000" />;', '#ff0000', 'FIXED_COLOR'],
    ['a hex colour in a style object', 'const e = <div style={{ color: "#333" }} />;', '#333', 'FIXED_COLOR'],
    ['rgb()', 'const c = "rgb(37, 99, 235)";', 'rgb(37, 99, 235)', 'FIXED_COLOR'],
    ['rgba()', 'const c = "rgba(0,0,0,0.5)";', 'rgba(0,0,0,0.5)', 'FIXED_COLOR'],
    ['hsl()', 'const c = "hsl(220 90% 50%)";', 'hsl(220 90% 50%)', 'FIXED_COLOR'],
    ['a Tailwind background class', 'const e = <div className="p-4 bg-blue-500" />;', 'bg-blue-500', 'TAILWIND_COLOR_CLASS'],
    ['a Tailwind text class', 'const e = <p className="text-red-600">x</p>;', 'text-red-600', 'TAILWIND_COLOR_CLASS'],
    ['a Tailwind border class', 'const e = <div className="border border-gray-200" />;', 'border-gray-200', 'TAILWIND_COLOR_CLASS'],
    ['a Tailwind gradient class', 'const e = <div className="bg-gradient-to-r from-sky-400" />;', 'from-sky-400', 'TAILWIND_COLOR_CLASS'],
    ['a Tailwind class with a variant', 'const e = <div className="hover:bg-rose-700" />;', 'bg-rose-700', 'TAILWIND_COLOR_CLASS'],
    ['a Tailwind class with opacity', 'const e = <div className="ring-indigo-500/50" />;', 'ring-indigo-500/50', 'TAILWIND_COLOR_CLASS'],
    ['a Tailwind white class', 'const e = <div className="fill-white" />;', 'fill-white', 'TAILWIND_COLOR_CLASS'],
    ['a Tailwind class in a template literal', 'const c = `to-emerald-950 ${extra}`;', 'to-emerald-950', 'TAILWIND_COLOR_CLASS'],
  ])('warns about %s without invalidating the code', (_what, body, literal, code) => {
    const result = validateFeatureCode(inPage(body));
    expect(result.valid).toBe(true);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([
      {
        code,
        message: expect.stringContaining(`use var(--color-primary) / the theme tokens from get_feature_authoring_guide instead of ${literal}`),
        line: BODY_LINE,
        column: BODY_COLUMN + body.indexOf(literal),
      },
    ]);
  });

  it.each([
    ['a theme variable', 'const c = "var(--color-primary)";'],
    ['hsl() of a theme variable', 'const c = "hsl(var(--primary))";'],
    ['layout classes', 'const e = <div className="p-4 text-lg bg-gradient-to-r border rounded-md" />;'],
    ['a colour word without a shade', 'const e = <div className="text-blue" />;'],
    ['a longer hex-like word', 'const id = "#deadbeef1";'],
    ['a hex colour in a comment', '// #2563eb'],
    ['a hex colour in JSX text', 'const e = <p>Issue #123</p>;'],
  ])('does not warn about %s', (_what, body) => {
    expect(validateFeatureCode(inPage(body)).warnings).toEqual([]);
  });

  it('locates a colour on a later line of a multi-line template literal', () => {
    const code = inPage('const css = `\n    color: red;\n    background: #2563eb;\n  `;');
    expect(validateFeatureCode(code).warnings).toEqual([expect.objectContaining({ code: 'FIXED_COLOR', line: 5, column: 17 })]);
  });

  it('reports every colour of a string separately', () => {
    const body = 'const e = <div className="bg-blue-500 text-white border-slate-200" />;';
    expect(validateFeatureCode(inPage(body)).warnings.map((warning) => warning.column)).toEqual(
      ['bg-blue-500', 'text-white', 'border-slate-200'].map((literal) => BODY_COLUMN + body.indexOf(literal)),
    );
  });

  it('returns warnings together with errors', () => {
    const result = validateFeatureCode(inPage('fetch("#2563eb");'));
    expect(result.errors.map((error) => error.code)).toEqual(['FORBIDDEN_GLOBAL']);
    expect(result.warnings.map((warning) => warning.code)).toEqual(['FIXED_COLOR']);
  });
});

describe('validateFeatureCode: network the frame refuses', () => {
  it.each([
    ['a peer connection', 'const c = new RTCPeerConnection({ iceServers: [] });', 'RTCPeerConnection'],
    ["WebKit's alias, through the global object", 'const c = new window.webkitRTCPeerConnection();', 'window.webkitRTCPeerConnection'],
    ['a data channel, through globalThis', 'const D = globalThis.RTCDataChannel;', 'globalThis.RTCDataChannel'],
    ['an ICE transport', 'const t = RTCIceTransport;', 'RTCIceTransport'],
    ['WebTransport', "const t = new WebTransport('https://example.com');", 'WebTransport'],
    ['a feature test', "const has = typeof RTCPeerConnection === 'function';", 'RTCPeerConnection'],
  ])('warns about %s, saying that data leaves only through the runtime, without invalidating the code', (_what, body, reference) => {
    const name = reference.split('.').pop();
    expect(validateFeatureCode(inPage(body))).toEqual({
      valid: true,
      errors: [],
      warnings: [
        {
          code: 'NETWORK_REFUSED',
          message: `${name} is refused in a feature's frame, which has no WebRTC and no network of its own: data leaves a feature only through '@trellis/runtime', with graphql(), useQuery() or useMutation()`,
          line: BODY_LINE,
          column: BODY_COLUMN + body.indexOf(reference),
        },
      ],
    });
  });

  it.each([
    ['a local variable of that name', 'const RTCPeerConnection = () => null; RTCPeerConnection();'],
    ["another object's property", 'const c = peers.RTCPeerConnection;'],
    ['an object key', 'const c = { RTCPeerConnection: 1 };'],
    ['a string', "const c = 'RTCPeerConnection';"],
  ])('does not warn about %s', (_what, body) => {
    expect(validateFeatureCode(inPage(body)).warnings).toEqual([]);
  });

  it('leaves a computed property of the global object to the error that forbids it', () => {
    const result = validateFeatureCode(inPage("const c = window['RTC' + 'PeerConnection'];"));
    expect(result.errors.map((error) => error.code)).toEqual(['DYNAMIC_GLOBAL_ACCESS']);
    expect(result.warnings).toEqual([]);
  });
});

/** A feature whose page component runs `body` (line 5, column 3) with a state pair and the UI imports below. */
const withState = (imports: string, body: string) =>
  `import { useState } from 'react';\n${imports}\nexport default function Page({ rows, columns, close, save }) {\n  const [name, setName] = useState('');\n  ${body}\n}\n`;
const STATE_BODY_LINE = 5;

describe('validateFeatureCode: undeclared names', () => {
  it.each([
    [
      '<Text> beside an import from @trellis/ui that lacks it',
      "import { Card } from '@trellis/ui';\nexport default function Page() {\n  return <Card><Text>Hi</Text></Card>;\n}",
      { line: 3, column: 17 },
      "'Text' is not declared: add it to the import from '@trellis/ui' at line 1",
    ],
    [
      '<Text> without any import',
      'export default function Page() {\n  return <Text>Hi</Text>;\n}',
      { line: 2, column: 11 },
      "'Text' is not declared: import it from '@trellis/ui', e.g. import { Text } from '@trellis/ui'",
    ],
    ['useState without its import', 'export default function Page() {\n  const [a, setA] = useState(0);\n  return a;\n}', { line: 2, column: 21 }, "import it from 'react'"],
    ['useQuery without its import', "export default function Page() {\n  const { data } = useQuery('{ x }');\n  return data;\n}", { line: 2, column: 20 }, "import it from '@trellis/runtime'"],
    ['React without its import', 'export default function Page() {\n  const [a] = React.useState(0);\n  return a;\n}', { line: 2, column: 15 }, "import React from 'react'"],
    ['a misspelt local', 'export default function Page() {\n  const items = [];\n  return itmes.length;\n}', { line: 3, column: 10 }, "'itmes' is not declared: declare it (const, let, function) or import it"],
    ['an assignment to an undeclared variable', 'export default function Page() {\n  total = 5;\n  return null;\n}', { line: 2, column: 3 }, "'total' is not declared"],
    ['a name read outside the block that declares it', 'export default function Page() {\n  { const x = 1; }\n  return x;\n}', { line: 3, column: 10 }, "'x' is not declared"],
    ["another function's local", 'function helper() { const secret = 1; return secret; }\nexport default function Page() {\n  return secret;\n}', { line: 3, column: 10 }, "'secret' is not declared"],
    ["the window's name, read as if it were a variable", 'export default function Page() {\n  return name;\n}', { line: 2, column: 10 }, "'name' is not declared"],
    ['an undeclared component of the file', 'export default function Page() {\n  return <Row />;\n}', { line: 2, column: 11 }, "'Row' is not declared"],
    ['an undeclared component named like a list', 'export default function Page() {\n  return <OrderList />;\n}', { line: 2, column: 11 }, "'OrderList' is not declared"],
  ])('rejects %s at its position', (_what, code, position, message) => {
    const result = validateFeatureCode(code);
    expect(result.valid).toBe(false);
    expect(result.errors).toEqual([{ code: 'UNDECLARED_NAME', message: expect.stringContaining(message), ...position }]);
  });

  it('reports every use of an undeclared component, each at its line', () => {
    const code = 'export default function Page() {\n  return (\n    <div>\n      <Text>A</Text>\n      <Text>B</Text>\n    </div>\n  );\n}';
    expect(validateFeatureCode(code).errors.map(({ code, line }) => ({ code, line }))).toEqual([
      { code: 'UNDECLARED_NAME', line: 4 },
      { code: 'UNDECLARED_NAME', line: 5 },
    ]);
  });

  it.each([
    ['JavaScript built-ins', 'const n = Math.max(1, Number("2")) + JSON.stringify({}).length + new Date().getTime() + parseInt("1", 10); Promise.all([]); new Intl.NumberFormat("en").format(n);'],
    ['browser globals', 'console.log(document.title, window.location.href, navigator.language); setTimeout(() => 1, 1); new URLSearchParams("a=1"); structuredClone({}); requestAnimationFrame(() => 1);'],
    ['window functions and interfaces named by their shape', 'addEventListener("resize", () => 1); const frame = document.createElement("iframe"); frame instanceof HTMLIFrameElement; new PopStateEvent("x"); new DOMMatrix();'],
    ['typeof of an undeclared name', "const has = typeof someLibrary !== 'undefined';"],
    ['a class declared in the function', 'class Store { get size() { return 1; } } const store = new Store(); store.size;'],
    ['a function declared after its use', 'helper(); function helper() { return 1; }'],
    ['parameters, destructuring, defaults and rest', 'const f = ({ a, b: [c = 1, ...d] }, e = a) => a + c + d.length + e; f({ b: [] });'],
    ['catch, for-of and for-in bindings', 'try { JSON.parse("x"); } catch (error) { error.message; } for (const item of []) item; for (const key in {}) key;'],
    ['labels and object keys', 'outer: for (const i of [1]) { for (const j of [2]) { if (i + j) break outer; } } const o = { undeclaredKey: 1, method() { return arguments.length; } };'],
    ['a var hoisted out of a block', 'if (true) { var later = 1; } later;'],
    ['a component declared later in the file, and intrinsic elements', 'const e = <section><Row /><span /></section>;'],
    ['a namespace import of the components', 'const e = <UI.Text>Hi</UI.Text>;'],
  ])('accepts %s', (_what, body) => {
    const code = `import * as UI from '@trellis/ui';\nexport default function Page() {\n  ${body}\n  return null;\n}\nfunction Row() { return null; }\n`;
    expect(validateFeatureCode(code).errors).toEqual([]);
  });
});

describe('validateFeatureCode: props of @trellis/ui components', () => {
  it.each([
    ['a prop Table does not take', "import { Table } from '@trellis/ui';", '<Table rows={rows} data={rows} />', 'data=', 'UNKNOWN_PROP', '<Table> has no prop \'data\': it takes rows, columns'],
    ['a misspelt prop of Input', "import { Input } from '@trellis/ui';", '<Input lable="Name" />', 'lable=', 'UNKNOWN_PROP', "<Input> has no prop 'lable': it takes label, error, hint"],
    [
      'a state setter as the onChange of an Input',
      "import { Input } from '@trellis/ui';",
      '<Input value={name} onChange={setName} />',
      'onChange=',
      'EVENT_TO_SETTER',
      "so setName would store the event object (the page shows [object Object]): write onChange={(event) => setName(event.target.value)}",
    ],
    ['a handler that passes the event to a setter', "import { Select } from '@trellis/ui';", '<Select options={[]} onChange={(value) => setName(value)} />', 'onChange=', 'EVENT_TO_SETTER', 'onChange={(event) => setName(event.target.value)}'],
    ['a state setter as the onClick of a Button', "import { Button } from '@trellis/ui';", '<Button onClick={setName}>Go</Button>', 'onClick=', 'EVENT_TO_SETTER', 'onClick={() => setName(...)}'],
    ['a setter given through a namespace import', "import * as UI from '@trellis/ui';", '<UI.Input onChange={setName} />', 'onChange=', 'EVENT_TO_SETTER', 'event.target.value'],
  ])('rejects %s at the prop', (_what, imports, element, at, code, message) => {
    const body = `return ${element};`;
    const result = validateFeatureCode(withState(imports, body));
    expect(result.valid).toBe(false);
    expect(result.errors).toEqual([{ code, message: expect.stringContaining(message), line: STATE_BODY_LINE, column: 3 + body.indexOf(at) }]);
  });

  it.each([
    [
      'declared props, attributes of the element, aria-*, data-* and key',
      '<Input key="n" label="Name" value={name} onChange={(event) => setName(event.target.value)} placeholder="Name" aria-describedby="help" data-test="name" className="wide" style={{}} autoFocus />',
    ],
    ['a setter for a handler that receives a row or the values', '<><Table rows={rows} columns={columns} onRowClick={setName} /><Form onSubmit={setName}><Button type="submit">Save</Button></Form></>'],
    ['event handlers of the element, and a handler that is no setter', '<Button onClick={save} onMouseEnter={() => setName("x")} disabled>Save</Button>'],
    ['a Modal closed by a function', '<Modal title="Edit" onClose={close}>Hi</Modal>'],
  ])('accepts %s', (_what, element) => {
    const imports = "import { Button, Form, Input, Modal, Table } from '@trellis/ui';";
    expect(validateFeatureCode(withState(imports, `return ${element};`)).errors).toEqual([]);
  });

  it('does not check a local component named like one of @trellis/ui', () => {
    const code = "import { Input } from '@trellis/ui';\nexport default function Page() {\n  const Table = ({ data }) => data;\n  return <Table data={1} anything />;\n}";
    expect(validateFeatureCode(code).errors).toEqual([]);
  });
});

describe('GraphQL documents the validator cannot read', () => {
  it('warns at the call whose document is not a literal or a const holding one, and not for those that are', () => {
    const code = [
      "import { graphql, useQuery } from '@trellis/runtime';",
      'const LIST = `{ listOrders { items { _id } } }`;',
      'const run = (document) => graphql(document);',
      'export default function Page() {',
      '  useQuery(LIST);',
      "  run('{ listOrders { total } }');",
      '  return null;',
      '}',
    ].join('\n');
    const warnings = validateFeatureCode(code).warnings.filter((warning) => warning.code === 'GRAPHQL_NOT_CHECKED');
    expect(warnings).toEqual([expect.objectContaining({ line: 3, message: expect.stringContaining('granting the feature to a role cannot see which tables it needs') })]);
  });
});

describe('ALLOWED_FEATURE_MODULES', () => {
  it('describes each allowed module in one line', () => {
    expect(ALLOWED_FEATURE_MODULES.map((module) => module.name)).toEqual(['react', '@trellis/runtime', '@trellis/ui', 'date-fns', 'lodash-es']);
    for (const module of ALLOWED_FEATURE_MODULES) expect(module.description).toMatch(/^[^\n]{10,}$/);
  });
});
