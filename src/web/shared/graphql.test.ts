import { describe, expect, it } from 'vitest';
import { stringRecordOf } from './graphql.js';

describe('stringRecordOf', () => {
  it('keeps the string entries of a JSON object and nothing else', () => {
    expect(stringRecordOf({ '--primary': '#2563eb', '--radius': '6px', count: 3, nested: { a: 'b' }, none: null })).toEqual({ '--primary': '#2563eb', '--radius': '6px' });
    for (const value of [null, undefined, 'text', 12, ['--primary']]) expect(stringRecordOf(value)).toEqual({});
  });
});
