/**
 * A copy of `source` with `fields` added (or replacing its own): what `{ ...source, ...fields }`
 * means, without the spread. On Node 20 (V8 11.3) an object literal that spreads an object and
 * then has more properties (`{ ...a, b }`, `{ ...a, ...b }`) is moved to the old generation at the
 * next scavenge, however short its life: on a path every request takes, that garbage brings on
 * major collections, which delayed the slowest answers by tens of milliseconds (docs/decisions.md,
 * D51). `Object.assign` onto a new object does not. The linter forbids the spread in the modules
 * requests go through (eslint.config.js, REQUEST_PATHS).
 *
 * @example withFields(principal, { requestId: request.id })
 */
export function withFields<T extends object, F extends object>(source: T, fields: F): Omit<T, keyof F> & F {
  // Object.assign sets what the spread defines: an own `__proto__` key (JSON.parse makes one from a
  // caller's input) would set the copy's prototype instead of being copied. Such rare objects take
  // the spread.
  if (Object.hasOwn(source, '__proto__') || Object.hasOwn(fields, '__proto__')) return { ...source, ...fields };
  return Object.assign({}, source, fields);
}
