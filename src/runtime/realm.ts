/**
 * The script that hardens a sandbox context once, before any hook code runs in it, so that the
 * context can serve run after run without one run being able to leave anything for the next
 * (hardened JavaScript, as in SES `lockdown()`):
 *
 * - Code generation from strings is disabled: `eval` and the `Function`, `AsyncFunction`,
 *   `GeneratorFunction` and `AsyncGeneratorFunction` constructors throw an EvalError. (They could
 *   declare global lexical bindings, which freezing cannot reach.)
 * - `WeakRef` and `FinalizationRegistry` are removed: a finalizer of one run would run in a later one.
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
  const { ownKeys } = Reflect;

  const generatorFunction = getPrototypeOf(function* () {});
  const asyncFunction = getPrototypeOf(async function () {});
  const asyncGeneratorFunction = getPrototypeOf(async function* () {});
  const hidden = [
    generatorFunction,
    asyncFunction,
    asyncGeneratorFunction,
    getPrototypeOf([][Symbol.iterator]()),
    getPrototypeOf(new Map()[Symbol.iterator]()),
    getPrototypeOf(new Set()[Symbol.iterator]()),
    getPrototypeOf(''[Symbol.iterator]()),
    getPrototypeOf('a'.matchAll(/a/g)),
  ];
  if (typeof Iterator === 'function') {
    hidden.push(getPrototypeOf(Iterator.from({ next() { return { done: true, value: undefined }; } })));
    hidden.push(getPrototypeOf([].values().map((x) => x)));
  }

  const refuse = (name) => function () {
    throw new EvalError(name + ' is not allowed in hooks: code generation from strings is disabled; write the logic as plain functions');
  };
  defineProperty(globalThis, 'eval', { value: refuse('eval') });
  for (const [name, prototype] of [['Function', Function.prototype], ['AsyncFunction', asyncFunction], ['GeneratorFunction', generatorFunction], ['AsyncGeneratorFunction', asyncGeneratorFunction]]) {
    const constructor = refuse(name);
    defineProperty(constructor, 'name', { value: name });
    defineProperty(constructor, 'prototype', { value: prototype, writable: false });
    defineProperty(prototype, 'constructor', { value: constructor });
    if (name === 'Function') defineProperty(globalThis, 'Function', { value: constructor });
  }
  delete globalThis.WeakRef;
  delete globalThis.FinalizationRegistry;

  const overridable = (object, keys) => {
    for (const key of keys) {
      const descriptor = getOwnPropertyDescriptor(object, key);
      if (!descriptor || !('value' in descriptor) || !descriptor.writable) continue;
      const { value } = descriptor;
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
  };
  const errorKeys = ['constructor', 'message', 'name', 'toString'];
  overridable(Object.prototype, ['constructor', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', 'toString', 'valueOf']);
  overridable(Function.prototype, ['constructor', 'apply', 'bind', 'call', 'toString']);
  overridable(Array.prototype, ['constructor', 'concat', 'push', 'toString']);
  overridable(Promise.prototype, ['constructor']);
  overridable(getPrototypeOf(hidden[3]), ['constructor', 'toString', Symbol.toStringTag]);
  for (const name of ['Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'EvalError', 'URIError', 'AggregateError', 'InternalError']) {
    if (typeof globalThis[name] === 'function') overridable(globalThis[name].prototype, errorKeys);
  }

  const seen = new Set();
  const pending = [globalThis, ...hidden];
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
})()`;
