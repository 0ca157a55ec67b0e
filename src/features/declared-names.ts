import type { Program } from '@babel/types';
import { findingAt, isBound, isReference, type Finding, type Visit } from '../authoring/ast-walk.js';
import { ALLOWED_FEATURE_MODULES } from './modules.js';

/**
 * The global names a feature's frame offers that code may read without declaring them: the
 * JavaScript built-ins and the browser's. Left out on purpose: names of `@trellis/ui` and
 * `@trellis/runtime` exports (the browser's `Text` is a DOM node constructor, so `<Text>` without
 * its import fails at run time with "Failed to construct 'Text'"), and window properties that an
 * undeclared variable reaches by mistake (`name`, `status`, `event`, `length`, `origin`, `close`,
 * `print`, ...): code that means them writes `window.name`.
 */
const FRAME_GLOBALS: readonly string[] = [
  // ECMAScript
  'globalThis', 'Infinity', 'NaN', 'undefined', 'arguments', 'isFinite', 'isNaN', 'parseFloat', 'parseInt', 'decodeURI',
  'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'AggregateError', 'Array', 'ArrayBuffer', 'Atomics', 'BigInt',
  'BigInt64Array', 'BigUint64Array', 'Boolean', 'DataView', 'Date', 'Error', 'EvalError', 'FinalizationRegistry',
  'Float32Array', 'Float64Array', 'Int8Array', 'Int16Array', 'Int32Array', 'Intl', 'Iterator', 'JSON', 'Map', 'Math',
  'Number', 'Object', 'Promise', 'Proxy', 'RangeError', 'ReferenceError', 'Reflect', 'RegExp', 'Set', 'SharedArrayBuffer',
  'String', 'Symbol', 'SyntaxError', 'TypeError', 'Uint8Array', 'Uint8ClampedArray', 'Uint16Array', 'Uint32Array',
  'URIError', 'WeakMap', 'WeakRef', 'WeakSet', 'WebAssembly',
  // The browser
  'window', 'self', 'document', 'navigator', 'location', 'history', 'screen', 'console', 'performance', 'crypto',
  'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'requestAnimationFrame', 'cancelAnimationFrame',
  'requestIdleCallback', 'cancelIdleCallback', 'queueMicrotask', 'structuredClone', 'atob', 'btoa', 'alert', 'confirm',
  'prompt', 'getComputedStyle', 'matchMedia', 'getSelection', 'scrollTo', 'scrollBy', 'innerWidth', 'innerHeight',
  'outerWidth', 'outerHeight', 'scrollX', 'scrollY', 'devicePixelRatio', 'createImageBitmap', 'reportError',
  'URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'Blob', 'File', 'FileReader', 'FileList', 'FormData',
  'Headers', 'Request', 'Response', 'AbortController', 'AbortSignal', 'Event', 'EventTarget', 'CustomEvent',
  'KeyboardEvent', 'MouseEvent', 'PointerEvent', 'FocusEvent', 'InputEvent', 'SubmitEvent', 'TouchEvent', 'WheelEvent',
  'DragEvent', 'ClipboardEvent', 'AnimationEvent', 'TransitionEvent', 'ErrorEvent', 'PromiseRejectionEvent',
  'MessageEvent', 'MessageChannel', 'MessagePort', 'BroadcastChannel', 'Node', 'Element', 'HTMLElement',
  'HTMLInputElement', 'HTMLSelectElement', 'HTMLTextAreaElement', 'HTMLFormElement', 'HTMLButtonElement',
  'HTMLDivElement', 'HTMLAnchorElement', 'HTMLImageElement', 'HTMLCanvasElement', 'HTMLTableElement', 'SVGElement',
  'Document', 'DocumentFragment', 'DOMParser', 'XMLSerializer', 'DOMRect', 'DOMException', 'Range', 'Selection',
  'NodeFilter', 'TreeWalker', 'ResizeObserver', 'IntersectionObserver', 'MutationObserver', 'PerformanceObserver',
  'CSS', 'CSSStyleSheet', 'Image', 'Audio', 'Option', 'ImageData', 'ImageBitmap', 'OffscreenCanvas', 'Path2D',
  'CanvasRenderingContext2D', 'ReadableStream', 'WritableStream', 'TransformStream', 'CompressionStream',
  'DecompressionStream', 'Worker', 'SharedWorker', 'Notification', 'addEventListener', 'removeEventListener', 'dispatchEvent',
  'postMessage', 'customElements', 'visualViewport', 'isSecureContext', 'crossOriginIsolated', 'trustedTypes', 'scheduler',
  'speechSynthesis', 'escape', 'unescape', 'Window', 'Location', 'History', 'Navigator', 'Screen', 'Storage', 'Crypto',
  'SubtleCrypto', 'CryptoKey', 'Comment', 'CharacterData', 'NodeList', 'ShadowRoot', 'FontFace', 'Animation',
  'KeyframeEffect', 'TextEncoderStream', 'TextDecoderStream',
];

/**
 * Browser interfaces by the shape of their names (HTMLIFrameElement, SVGSVGElement, DOMMatrix,
 * CSSStyleRule, PopStateEvent, ReadableStreamDefaultReader, ...), so that the list above need not
 * hold each one. Narrow on purpose: a component of the feature's own (`OrderList`) must still be
 * declared. No `@trellis/ui` or `@trellis/runtime` export has such a name.
 */
const FRAME_INTERFACE = /^(?:HTML|SVG|CSS|DOM|WebGL|Media|Performance|Readable|Writable|Transform)[A-Z0-9]\w*$|^[A-Z]\w*(?:Event|Observer)$/;

/** Where each name a feature may import comes from, to say so when it is used undeclared. */
const IMPORTED_FROM = new Map<string, string>([
  ...['useState', 'useEffect', 'useMemo', 'useCallback', 'useRef', 'useReducer', 'useContext', 'useLayoutEffect', 'useId', 'useTransition', 'useDeferredValue', 'Fragment', 'createContext', 'memo', 'forwardRef', 'React'].map(
    (name) => [name, 'react'] as const,
  ),
  ...ALLOWED_FEATURE_MODULES.flatMap((module) => (module.exports ?? []).map((name) => [name, module.name] as const)),
]);

const MODULE_LIST = ALLOWED_FEATURE_MODULES.map((module) => module.name).join(', ');

/**
 * The names code may read undeclared: the frame's globals and `alsoKnown` (names another check
 * reports, such as forbidden globals), less every name an allowed module exports.
 */
export function knownGlobals(alsoKnown: Iterable<string>): ReadonlySet<string> {
  const known = new Set([...FRAME_GLOBALS, ...alsoKnown]);
  for (const name of IMPORTED_FROM.keys()) known.delete(name);
  return known;
}

/**
 * An error for a name read (a JSX component, a variable, a function) that no import, declaration
 * or parameter in scope declares and that is not one of `known`; for a name an allowed module
 * exports, it says which import to write. `typeof name` is exempt (it never throws), and so are a
 * default export's name and re-exports, which the module-shape checks report.
 */
export function undeclaredName(visit: Visit, known: ReadonlySet<string>, program: Program): Finding | undefined {
  const { node, parent } = visit;
  if (node.type !== 'Identifier' && node.type !== 'JSXIdentifier') return undefined;
  if (!isReference(visit) || isBound(visit.scope, node.name) || known.has(node.name) || FRAME_INTERFACE.test(node.name)) return undefined;
  if (parent?.type === 'UnaryExpression' && parent.operator === 'typeof') return undefined;
  if (parent?.type === 'ExportSpecifier' || parent?.type === 'ExportDefaultDeclaration') return undefined;
  return findingAt(node, 'UNDECLARED_NAME', undeclaredMessage(node.name, program));
}

function undeclaredMessage(name: string, program: Program): string {
  const module = IMPORTED_FROM.get(name);
  if (!module) {
    return `'${name}' is not declared: declare it (const, let, function) or import it from an allowed module (${MODULE_LIST}); check its spelling`;
  }
  if (name === 'React') return `'React' is not declared: import React from 'react', or import what you use, e.g. import { useState } from 'react'`;
  const existing = program.body.find((statement) => statement.type === 'ImportDeclaration' && statement.source.value === module);
  return existing
    ? `'${name}' is not declared: add it to the import from '${module}' at line ${existing.loc?.start.line ?? 1}`
    : `'${name}' is not declared: import it from '${module}', e.g. import { ${name} } from '${module}'`;
}
