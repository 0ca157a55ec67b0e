import { describe, expect, it } from 'vitest';
import { withFields } from './objects.js';

describe('withFields', () => {
  it('copies the source with the fields added or replacing its own, and leaves the source as it was', () => {
    const source = { kind: 'user', requestId: 'old', permissions: new Set(['config:read']) };
    const copy = withFields(source, { requestId: 'new', baseUrl: 'http://127.0.0.1' });
    expect(copy).toEqual({ kind: 'user', requestId: 'new', permissions: new Set(['config:read']), baseUrl: 'http://127.0.0.1' });
    expect(copy).not.toBe(source);
    // The same Set: a shallow copy, as the spread made.
    expect(copy.permissions).toBe(source.permissions);
    expect(source).toEqual({ kind: 'user', requestId: 'old', permissions: new Set(['config:read']) });
    expect(Object.keys(copy)).toEqual(['kind', 'requestId', 'permissions', 'baseUrl']);
  });

  it('copies an own __proto__ key as a field, as the spread does, and never sets the copy’s prototype', () => {
    const source = JSON.parse('{"__proto__": {"limit": 5}, "sort": "name"}') as Record<string, unknown>;
    const copy = withFields(source, { filter: { total: 1 } }) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(copy.limit).toBeUndefined();
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect(Object.keys(copy)).toEqual(['__proto__', 'sort', 'filter']);
    const fromFields = withFields({ sort: 'name' }, JSON.parse('{"__proto__": {"limit": 5}}') as object) as Record<string, unknown>;
    expect(Object.getPrototypeOf(fromFields)).toBe(Object.prototype);
    expect(fromFields.limit).toBeUndefined();
  });
});
