/**
 * The script that hardens a sandbox context once, before any hook code runs in it, so that the
 * context can serve run after run without one run being able to leave anything for the next
 * (hardened JavaScript, as in SES `lockdown()`):
 *
 * - Code generation from strings is disabled: `eval` and the `Function`, `AsyncFunction`,
 *   `GeneratorFunction` and `AsyncGeneratorFunction` constructors throw an EvalError. (They could
 *   declare global lexical bindings, which freezing cannot reach.)
 * - `WeakRef` and `FinalizationRegistry` are removed: a finalizer of one run would run in a later
 *   one. `Proxy` is removed: a proxy could answer the length checks below and the engine's own
 *   reads differently.
 * - `Math.random` is the host's `__hostRandom` (crypto-strong): the engine's generator keeps one
 *   state per context, seeded with the time, from which a run could count earlier runs' draws.
 * - The generic `Array.prototype` methods refuse a receiver (or, for `concat` and `flat`, an array
 *   inside) longer than 2^22 elements that memory does not back: the engine loops over such
 *   lengths natively, without the interrupt checks that stop a hook (a sparse `new Array(2 ** 32 - 1)`,
 *   or `{ length: 2 ** 53 - 1 }` sent in a request body). An array-like must hold its `length`
 *   as an own data property. Real arrays that fit in a hook's memory are never that long.
 * - The properties that code commonly assigns on its own objects (`name` and `message` of errors,
 *   `toString`, `constructor`, ...) become accessors whose setter defines the property on the
 *   object assigned to, so freezing their prototypes does not break `this.name = 'MyError'`
 *   (the "override mistake").
 * - Every object reachable from the global object, and the intrinsics reachable only through
 *   syntax (generator, async and iterator prototypes), is frozen, the global object included.
 *
 * Hook code itself runs in strict mode, so an assignment to a frozen built-in throws a TypeError
 * instead of failing silently. Evaluates to the number of objects frozen.
 */
export const HARDEN_REALM = String.raw`(() => {
  'use strict';
  const { defineProperty, freeze, getOwnPropertyDescriptor, getPrototypeOf, hasOwn } = Object;
  const { apply, ownKeys } = Reflect;
  const MAX_LENGTH = 2 ** 22;
  const TypedArray = getPrototypeOf(Int8Array);

  const syntax = {
    generatorFunction: getPrototypeOf(function* () {}),
    asyncFunction: getPrototypeOf(async function () {}),
    asyncGeneratorFunction: getPrototypeOf(async function* () {}),
    iterator: getPrototypeOf(getPrototypeOf([][Symbol.iterator]())),
  };
  const hidden = hiddenIntrinsics();
  useHostRandom();
  disableCodeGeneration();
  delete globalThis.WeakRef;
  delete globalThis.FinalizationRegistry;
  delete globalThis.Proxy;
  guardArrayMethods();
  guardStringSearch();
  guardNormalization();
  tameOverrideMistake();
  return freezeAll([globalThis, ...hidden]);

  /** Intrinsics no property of the global object leads to; more are added as they are replaced. */
  function hiddenIntrinsics() {
    const list = [
      syntax.generatorFunction,
      syntax.asyncFunction,
      syntax.asyncGeneratorFunction,
      getPrototypeOf([][Symbol.iterator]()),
      getPrototypeOf(new Map()[Symbol.iterator]()),
      getPrototypeOf(new Set()[Symbol.iterator]()),
      getPrototypeOf(''[Symbol.iterator]()),
      getPrototypeOf('a'.matchAll(/a/g)),
    ];
    if (typeof Iterator === 'function') {
      list.push(getPrototypeOf(Iterator.from({ next() { return { done: true, value: undefined }; } })));
      list.push(getPrototypeOf([].values().map((x) => x)));
      if (typeof Iterator.concat === 'function') list.push(getPrototypeOf(Iterator.concat()));
    }
    return list;
  }

  function useHostRandom() {
    const hostRandom = globalThis.__hostRandom;
    delete globalThis.__hostRandom;
    defineProperty(Math, 'random', { value: hostRandom });
  }

  function disableCodeGeneration() {
    const refuse = (name) => function () {
      throw new EvalError(name + ' is not allowed in hooks: code generation from strings is disabled; write the logic as plain functions');
    };
    defineProperty(globalThis, 'eval', { value: refuse('eval') });
    const constructors = [['Function', Function.prototype], ['AsyncFunction', syntax.asyncFunction], ['GeneratorFunction', syntax.generatorFunction], ['AsyncGeneratorFunction', syntax.asyncGeneratorFunction]];
    for (const [name, prototype] of constructors) {
      const constructor = refuse(name);
      defineProperty(constructor, 'name', { value: name });
      defineProperty(constructor, 'prototype', { value: prototype, writable: false });
      defineProperty(prototype, 'constructor', { value: constructor });
      if (name === 'Function') defineProperty(globalThis, 'Function', { value: constructor });
    }
  }

  function guardArrayMethods() {
    const iterators = new Set(['entries', 'keys', 'values', Symbol.iterator]);
    for (const key of ownKeys(Array.prototype)) {
      const { value: method } = getOwnPropertyDescriptor(Array.prototype, key);
      if (typeof method !== 'function' || key === 'constructor' || iterators.has(key)) continue;
      hidden.push(method);
      const guarded = guardedMethod(String(key), method);
      defineProperty(guarded, 'length', { value: method.length });
      defineProperty(Array.prototype, key, { value: guarded });
    }
  }

  function guardedMethod(name, method) {
    return {
      [name](...args) {
        checkLength(name, this);
        if (name === 'concat') return apply(method, this, checkedSpreads(name, this, args));
        if (name === 'flat') {
          const depth = args[0] === undefined ? 1 : Math.min(Math.trunc(Number(args[0])) || 0, 100);
          checkNested(name, this, depth);
          return apply(method, this, [depth]);
        }
        if (name === 'flatMap' && typeof args[0] === 'function') {
          const [map, thisArg] = args;
          const checkedMap = function (...mapArgs) {
            const mapped = apply(map, this, mapArgs);
            checkLength(name, mapped);
            return mapped;
          };
          return apply(method, this, [checkedMap, thisArg]);
        }
        return apply(method, this, args);
      },
    }[name];
  }

  /** concat's inputs, refused when a getter could grow one of them while concat runs. */
  function checkedSpreads(name, target, args) {
    for (const value of [target, ...args]) {
      checkLength(name, value);
      if (value !== null && (typeof value === 'object' || typeof value === 'function') && Symbol.isConcatSpreadable in value) {
        throw new TypeError('Array.prototype.concat refused: Symbol.isConcatSpreadable is not supported in hooks');
      }
    }
    return args;
  }

  function checkLength(name, target) {
    if (target === null || (typeof target !== 'object' && typeof target !== 'function')) return;
    if (Array.isArray(target)) {
      if (target.length > MAX_LENGTH) throw tooLong(name);
      return;
    }
    if (target instanceof TypedArray && !hasOwn(target, 'length')) return;
    const length = getOwnPropertyDescriptor(target, 'length');
    if (length === undefined) {
      if ('length' in target) throw new TypeError('Array.prototype.' + name + ' refused: an array-like in a hook must have its own length');
      return;
    }
    const { value } = length;
    if (!('value' in length) || (typeof value === 'object' && value !== null) || typeof value === 'function') {
      throw new TypeError('Array.prototype.' + name + ' refused: an array-like in a hook must have a plain number as its length');
    }
    if (Number(value) > MAX_LENGTH) throw tooLong(name);
  }

  function checkNested(name, target, depth) {
    checkLength(name, target);
    if (depth <= 0 || !Array.isArray(target)) return;
    for (let i = 0; i < target.length; i++) {
      const element = getOwnPropertyDescriptor(target, i);
      if (element && !('value' in element)) throw new TypeError('Array.prototype.' + name + ' refused: an array with getters for elements');
      if (element && Array.isArray(element.value)) checkNested(name, element.value, depth - 1);
    }
  }

  function tooLong(name) {
    return new RangeError('Array.prototype.' + name + ' refused: more than ' + MAX_LENGTH + ' elements (hooks are limited to lengths memory can hold)');
  }

  /**
   * The engine searches strings naively, in a native loop the interrupt never reaches: a 200 000-
   * character needle in a 400 000-character text (a 600 KB webhook body) held the thread 27 s.
   * A search whose naive worst case passes 2^24 character comparisons runs here instead, in
   * linear time (Knuth-Morris-Pratt) and in code the CPU budget can stop; same answers.
   */
  function guardStringSearch() {
    const costly = (text, needle) => typeof needle === 'string' && needle.length > 1 && (text.length - needle.length + 1) * needle.length > 2 ** 24;
    const search = { indexOf: linearIndexOf, includes: (text, needle, position) => linearIndexOf(text, needle, position) !== -1, split: linearSplit, replace: (text, needle, replacement) => linearReplace(text, needle, replacement, false), replaceAll: (text, needle, replacement) => linearReplace(text, needle, replacement, true) };
    for (const name of ['indexOf', 'includes', 'split', 'replace', 'replaceAll']) {
      const method = String.prototype[name];
      const custom = name === 'split' ? Symbol.split : name.startsWith('replace') ? Symbol.replace : undefined;
      hidden.push(method);
      const guarded = {
        [name](needle, ...rest) {
          if (this === null || this === undefined) return apply(method, this, [needle, ...rest]);
          const text = typeof this === 'string' ? this : String(this);
          const pattern = typeof needle === 'object' && needle !== null && !(needle instanceof RegExp) && !(custom && custom in needle) ? String(needle) : needle;
          if (costly(text, pattern)) return search[name](text, pattern, ...rest);
          return apply(method, text, [pattern, ...rest]);
        },
      }[name];
      defineProperty(guarded, 'length', { value: method.length });
      defineProperty(String.prototype, name, { value: guarded });
    }
  }

  /**
   * The engine orders combining marks with an insertion sort, natively: normalising 200 000 marks
   * in a row held the thread 56 s. normalize and localeCompare refuse runs of more than 1024.
   */
  function guardNormalization() {
    for (const name of ['normalize', 'localeCompare']) {
      const method = String.prototype[name];
      hidden.push(method);
      const guarded = {
        [name](...args) {
          if (this === null || this === undefined) return apply(method, this, args);
          const text = typeof this === 'string' ? this : String(this);
          checkMarkRuns(name, text);
          if (name === 'localeCompare') {
            const that = String(args[0]);
            checkMarkRuns(name, that);
            return apply(method, text, [that, ...args.slice(1)]);
          }
          return apply(method, text, args);
        },
      }[name];
      defineProperty(guarded, 'length', { value: method.length });
      defineProperty(String.prototype, name, { value: guarded });
    }
  }

  function checkMarkRuns(name, text) {
    if (text.length <= 1024) return;
    const marks = /\p{M}+/gu;
    for (let run = marks.exec(text); run !== null; run = marks.exec(text)) {
      if (run[0].length > 1024) throw new RangeError('String.prototype.' + name + ' refused: more than 1024 combining marks in a row');
    }
  }

  function linearIndexOf(text, needle, position) {
    const m = needle.length;
    const failure = new Int32Array(m);
    for (let i = 1, k = 0; i < m; i++) {
      while (k > 0 && needle.charCodeAt(i) !== needle.charCodeAt(k)) k = failure[k - 1];
      if (needle.charCodeAt(i) === needle.charCodeAt(k)) k++;
      failure[i] = k;
    }
    const from = Math.min(Math.max(Math.trunc(Number(position)) || 0, 0), text.length);
    for (let i = from, k = 0; i < text.length; i++) {
      while (k > 0 && text.charCodeAt(i) !== needle.charCodeAt(k)) k = failure[k - 1];
      if (text.charCodeAt(i) === needle.charCodeAt(k)) k++;
      if (k === m) return i - m + 1;
    }
    return -1;
  }

  function linearSplit(text, needle, limit) {
    const max = limit === undefined ? 2 ** 32 - 1 : limit >>> 0;
    const parts = [];
    if (max === 0) return parts;
    let start = 0;
    for (let at = linearIndexOf(text, needle, 0); at !== -1; at = linearIndexOf(text, needle, start)) {
      parts.push(text.slice(start, at));
      if (parts.length === max) return parts;
      start = at + needle.length;
    }
    parts.push(text.slice(start));
    return parts;
  }

  function linearReplace(text, needle, replacement, all) {
    const substitute = typeof replacement === 'function' ? replacement : String(replacement);
    let result = '';
    let start = 0;
    for (let at = linearIndexOf(text, needle, 0); at !== -1; at = all ? linearIndexOf(text, needle, start) : -1) {
      result += text.slice(start, at) + (typeof substitute === 'function' ? String(substitute(needle, at, text)) : substitution(substitute, needle, at, text));
      start = at + needle.length;
      if (!all) break;
    }
    return result + text.slice(start);
  }

  /** GetSubstitution for a string pattern: $$, $&, $ and a backtick, $' (no groups). */
  function substitution(template, matched, position, text) {
    let out = '';
    for (let i = 0; i < template.length; i++) {
      const next = template[i + 1];
      if (template[i] !== '$' || next === undefined) out += template[i];
      else if (next === '$') { out += '$'; i++; }
      else if (next === '&') { out += matched; i++; }
      else if (next === '\x60') { out += text.slice(0, position); i++; }
      else if (next === "'") { out += text.slice(position + matched.length); i++; }
      else out += '$';
    }
    return out;
  }

  function tameOverrideMistake() {
    const errorKeys = ['constructor', 'message', 'name', 'toString'];
    overridable(Object.prototype, ['constructor', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', 'toString', 'valueOf']);
    overridable(Function.prototype, ['constructor', 'apply', 'bind', 'call', 'toString']);
    overridable(Array.prototype, ['constructor', 'concat', 'push', 'toString']);
    overridable(Promise.prototype, ['constructor']);
    overridable(syntax.iterator, ['constructor', 'toString', Symbol.toStringTag]);
    for (const name of ['Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'EvalError', 'URIError', 'AggregateError', 'InternalError']) {
      if (typeof globalThis[name] === 'function') overridable(globalThis[name].prototype, errorKeys);
    }
  }

  function overridable(object, keys) {
    for (const key of keys) {
      const descriptor = getOwnPropertyDescriptor(object, key);
      if (!descriptor || !('value' in descriptor) || !descriptor.writable) continue;
      const { value } = descriptor;
      hidden.push(value);
      defineProperty(object, key, {
        get() { return value; },
        set(next) {
          if (this === object) throw new TypeError("Cannot assign to read only property '" + String(key) + "' of a built-in");
          if (hasOwn(this, key)) this[key] = next;
          else defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
        },
        enumerable: descriptor.enumerable,
        configurable: false,
      });
    }
  }

  function freezeAll(roots) {
    const seen = new Set();
    const pending = [...roots];
    while (pending.length > 0) {
      const value = pending.pop();
      if (value === null || (typeof value !== 'object' && typeof value !== 'function') || seen.has(value)) continue;
      seen.add(value);
      freeze(value);
      pending.push(getPrototypeOf(value));
      for (const key of ownKeys(value)) {
        const descriptor = getOwnPropertyDescriptor(value, key);
        if ('value' in descriptor) pending.push(descriptor.value);
        else pending.push(descriptor.get, descriptor.set);
      }
    }
    return seen.size;
  }
})()`;
