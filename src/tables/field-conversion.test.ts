import { describe, expect, it } from 'vitest';
import { fieldConversion } from './field-conversion.js';
import { FIELD_TYPES, type FieldType } from './schema.js';

/** The conversion table of field-conversion.ts, row by row: what `fieldConversion(from, to)` is. */
const EXPECTED: Record<FieldType, Partial<Record<FieldType, 'always' | 'checked' | 'emptyOnly'>>> = {
  text: { number: 'checked', boolean: 'checked', date: 'checked', datetime: 'checked', json: 'checked' },
  number: { text: 'always', boolean: 'checked', date: 'checked', datetime: 'checked', json: 'always' },
  boolean: { text: 'always', number: 'checked', date: 'checked', datetime: 'checked', json: 'always' },
  date: { text: 'always', number: 'checked', boolean: 'checked', datetime: 'always', json: 'always' },
  datetime: { text: 'always', number: 'checked', boolean: 'checked', date: 'checked', json: 'always' },
  json: { text: 'always', number: 'checked', boolean: 'checked', date: 'checked', datetime: 'checked' },
  reference: { 'multi-reference': 'always' },
  'multi-reference': { reference: 'checked' },
};

const pairs = FIELD_TYPES.flatMap((from) => FIELD_TYPES.filter((to) => to !== from).map((to) => [from, to] as const));

describe('fieldConversion', () => {
  it.each(pairs)('converts %s to %s as the table in its comment says', (from, to) => {
    expect(fieldConversion(from, to).kind).toBe(EXPECTED[from][to] ?? 'emptyOnly');
  });

  it('needs an empty field to point a reference at another table', () => {
    expect(fieldConversion('reference', 'reference', false).kind).toBe('emptyOnly');
    expect(fieldConversion('multi-reference', 'reference', false).kind).toBe('emptyOnly');
  });

  it.each([
    ['number', ['12.5', ' -3 ', '1e3', '.5', '+7', '', '  '], ['twelve', '1,5', '0x10', 'NaN', 'Infinity', '1e400', '\t1']],
    ['boolean', ['true', 'FALSE', ' true '], ['yes', '1', 't']],
    ['date', ['2024-05-31', '2024-02-29'], ['2023-02-29', '31/05/2024', '2024-5-31']],
    ['datetime', ['2024-05-31T12:00:00Z', '2024-05-31T12:00+02:00'], ['2024-05-31 12:00', '2024-05-31T12:00:00']],
    ['json', ['{"a":1}', '[1]', '"x"', '3'], ['not json', '{"a":"\\u0000"}']],
  ] as const)('from text to %s accepts what the record layer takes (and blank text, which becomes no value) and nothing else', (to, accepted, refused) => {
    const conversion = fieldConversion('text', to);
    if (conversion.kind !== 'checked') throw new Error('expected a checked conversion');
    expect(accepted.filter((text) => !conversion.accepts(text))).toEqual([]);
    expect(refused.filter((text) => conversion.accepts(text))).toEqual([]);
  });
});
