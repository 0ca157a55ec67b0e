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
});
