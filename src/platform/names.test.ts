import { describe, expect, it } from 'vitest';
import { assertDistinctName, readableNameProblem, readsLike } from './names.js';

describe('readableNameProblem', () => {
  it.each([
    ['a zero-width space', 'Pay\u200Broll', 'must not contain U+200B (an invisible character)'],
    ['a zero-width joiner', 'Pay\u200Droll', 'must not contain U+200D (an invisible character)'],
    ['a right-to-left override', '\u202EPayroll', 'must not contain U+202E (a bidirectional control)'],
    ['a first-strong isolate', 'Pay\u2068roll', 'must not contain U+2068 (a bidirectional control)'],
    ['an Arabic letter mark', 'Pay\u061Croll', 'must not contain U+061C (a bidirectional control)'],
    ['a soft hyphen', 'Pay\u00ADroll', 'must not contain U+00AD (an invisible character)'],
    ['a variation selector', 'Pay\uFE0Froll', 'must not contain U+FE0F (an invisible character)'],
    ['a tag character', 'Payroll\u{E0041}', 'must not contain U+E0041 (an invisible character)'],
    ['a Hangul filler', '\u3164', 'must not contain U+3164 (an invisible character)'],
    ['the blank Braille pattern', 'Pay\u2800roll', 'must not contain U+2800 (an invisible character)'],
    ['a line separator', 'Pay\u2028roll', 'must not contain U+2028 (an invisible character)'],
    ['a tab', 'Pay\troll', 'must not contain U+0009 (an invisible character)'],
    ['a no-break space', 'Pay\u00A0roll', 'must not contain U+00A0 (a space other than the ordinary one)'],
    ['an ideographic space', 'Pay\u3000roll', 'must not contain U+3000 (a space other than the ordinary one)'],
  ])('refuses %s', (_what, name, message) => {
    expect(readableNameProblem(name)).toBe(message);
  });

  it.each(['Payroll', 'Pay roll', 'Café', 'Gehälter', 'Зарплата', '給与', 'مرتبات', '📊 Reports'])('accepts %s', (name) => {
    expect(readableNameProblem(name)).toBeUndefined();
  });
});

describe('readsLike (TR39 confusable skeletons, in any letter case)', () => {
  it.each([
    ['a Cyrillic a', 'Payroll', 'P\u0430yroll'],
    ['a Greek capital omicron', 'Owner', '\u039Fwner'],
    ['capital I for l', 'Payroll', 'PayroII'],
    ['digits for letters in capitals', 'Payroll', 'PAYRO11'],
    ['capital I for l in lower case', 'Payroll', 'payroII'],
    ['zero for O', 'Orders', '0rders'],
    ['rn for m', 'admin', 'adrnin'],
    ['fullwidth letters', 'Payroll', '\uFF30\uFF41yroll'],
    ['a Roman numeral', 'Payroll', 'Payro\u217C\u217C'],
    ['another letter case', 'Existing feature', 'EXISTING feature'],
    ['a sharp s', 'Straße', 'STRASSE'],
    ['a run of spaces', 'Pay roll', 'Pay   roll'],
  ])('matches %s', (_what, a, b) => {
    expect(readsLike(a, b)).toBe(true);
    expect(readsLike(b, a)).toBe(true);
  });

  it.each([
    ['a longer name', 'Payroll', 'Payroll report'],
    ['an accent', 'Cafe', 'Café'],
    ['i and l', 'file', 'flle'],
    ['another script altogether', 'Payroll', 'Зарплата'],
  ])('tells apart %s', (_what, a, b) => {
    expect(readsLike(a, b)).toBe(false);
  });
});

describe('assertDistinctName', () => {
  const kind = { what: 'feature', field: 'name' };

  it('refuses a name taken in another letter case with CONFLICT naming the taken name', () => {
    expect(() => assertDistinctName('PAYROLL', ['Timesheets', 'Payroll'], kind)).toThrow(
      expect.objectContaining({ code: 'CONFLICT', message: "name: a feature named 'Payroll' already exists", details: { field: 'name', clashesWith: 'Payroll' } }),
    );
  });

  it('refuses a look-alike with BAD_INPUT naming the name it looks like', () => {
    expect(() => assertDistinctName('P\u0430yroll', ['Payroll'], kind)).toThrow(
      expect.objectContaining({ code: 'BAD_INPUT', message: "name: looks the same as the existing feature 'Payroll'; choose a name that reads differently" }),
    );
  });

  it('accepts a name unlike the others', () => {
    expect(() => assertDistinctName('Payroll report', ['Payroll', 'Timesheets'], kind)).not.toThrow();
  });
});
