import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../access/permissions.js';
import type { Services } from '../services.js';
import { startTestServices, type TestServices } from '../../test/helpers/services.js';
import { TrellisError } from './errors.js';

/**
 * Issue 18, item 6: one rule for every name people read, asserted on the services every adapter
 * calls. A name with an invisible or bidirectional control character is refused, and so is a name
 * whose confusable skeleton (Unicode TR39) equals the name of another record of the same kind:
 * BAD_INPUT naming the name it clashes with.
 */

const PAGE = 'export default function Page() {\n  return <p>Payroll</p>;\n}\n';

let harness: TestServices;
let services: Services;
let owner: Principal;
let payrollId: string;
let otherFeatureId: string;
let ordersId: string;

const createFeature = (name: string) => services.features.createFeature(owner, { name, customCode: PAGE });
const upsertMenu = (name: string, entries: Array<{ label: string; path: string }>) => services.menus.upsertMenu(owner, { name, entries });
const createUser = (email: string, name: string) => services.access.createUser(owner, { email, password: 'password-123', name });
const renameFeature = (_id: string, name: string) => services.features.updateFeature(owner, { _id, name });

beforeAll(async () => {
  harness = await startTestServices();
  ({ services, owner } = harness);
  payrollId = (await createFeature('Payroll'))._id;
  otherFeatureId = (await createFeature('Timesheets'))._id;
  await upsertMenu('Main', [{ label: 'Payroll', path: `/feature/${payrollId}` }]);
  ordersId = (await services.tables.createTable(owner, { name: 'Payroll', fields: [{ name: 'total', type: 'number' }] }))._id;
  await services.hooks.createHook(owner, { name: 'sync-payroll', type: 'webHook', content: 'async () => 1' });
});
afterAll(async () => harness?.close());

async function expectBadInput(write: Promise<unknown>, message: string) {
  const error = await write.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(TrellisError);
  expect((error as TrellisError).code).toBe('BAD_INPUT');
  expect((error as TrellisError).message).toContain(message);
}

describe('invisible and bidirectional characters', () => {
  const names = [
    ['a zero-width space', 'Pay\u200Broll', 'U+200B'],
    ['a right-to-left override', '\u202EPayroll', 'U+202E'],
    ['a right-to-left isolate', 'Pay\u2067roll', 'U+2067'],
    ['a no-break space', 'Pay\u00A0roll', 'U+00A0'],
    ['a Hangul filler', '\u3164', 'U+3164'],
  ] as const;

  it.each(names)('are refused in a feature name: %s', async (_what, name, codePoint) => {
    await expectBadInput(createFeature(name), `name: must not contain ${codePoint}`);
  });

  it.each(names)('are refused in a menu name: %s', async (_what, name, codePoint) => {
    await expectBadInput(upsertMenu(name, []), `name: must not contain ${codePoint}`);
  });

  it.each(names)('are refused in a menu entry label: %s', async (_what, name, codePoint) => {
    await expectBadInput(upsertMenu('Side', [{ label: name, path: `/feature/${payrollId}` }]), `entries.0.label: must not contain ${codePoint}`);
  });

  it.each(names)("are refused in a user's display name: %s", async (_what, name, codePoint) => {
    await expectBadInput(createUser(`hidden-${codePoint}@example.com`, name), `name: must not contain ${codePoint}`);
  });

  it('are refused in a feature rename too', async () => {
    await expectBadInput(renameFeature(otherFeatureId, 'Time\u200Dsheets'), 'name: must not contain U+200D');
  });
});

describe('names that look like an existing one', () => {
  it.each([
    ['a feature (Cyrillic а)', () => createFeature('P\u0430yroll'), "name: looks the same as the existing feature 'Payroll'"],
    ['a feature (digits for letters)', () => createFeature('PAYRO11'), "name: looks the same as the existing feature 'Payroll'"],
    ['a feature (fullwidth letters)', () => createFeature('\uFF30ayroll'), "name: looks the same as the existing feature 'Payroll'"],
    ['a menu', () => upsertMenu('M\u0430in', []), "name: looks the same as the existing menu 'Main'"],
    ['a role', () => services.access.createRole(owner, { name: 'adrnin' }), "name: looks the same as the existing role 'admin'"],
    ["a user's display name", () => createUser('impostor@example.com', '\u039Fwner'), "name: looks the same as the existing user 'Owner'"],
    ['a table', () => services.tables.createTable(owner, { name: 'PayroII' }), "name: looks the same as the existing table 'Payroll'"],
    ['a hook', () => services.hooks.createHook(owner, { name: 'sync-payro11', type: 'webHook', content: 'async () => 1' }), "name: looks the same as the existing hook 'sync-payroll'"],
  ] as const)('is refused with BAD_INPUT naming the clash: %s', async (_what, write, message) => {
    await expectBadInput(write(), message);
  });

  it('is refused for a field beside the fields of its table', async () => {
    await expectBadInput(services.tables.addTableField(owner, { tableId: ordersId, field: { name: 'tota1', type: 'number' } }), "field.name: looks the same as the existing field 'total'");
  });

  it('is refused for two entries of one menu', async () => {
    const entries = [
      { label: 'Payroll', path: `/feature/${payrollId}` },
      { label: 'P\u0430yroll', path: `/feature/${otherFeatureId}` },
    ];
    await expectBadInput(upsertMenu('Side', entries), "entries.1.label: looks the same as the label 'Payroll' of entry 0");
  });

  it('is refused when a feature is renamed to look like another', async () => {
    await expectBadInput(renameFeature(otherFeatureId, 'Payro\u217C\u217C'), "name: looks the same as the existing feature 'Payroll'");
  });

  it('lets a record keep a name that looks like its own, and distinct names through', async () => {
    expect((await renameFeature(payrollId, 'PAYROLL')).feature.name).toBe('PAYROLL');
    await upsertMenu('main', [{ label: 'Payroll', path: `/feature/${payrollId}` }]);
    expect((await createFeature('Payroll report')).name).toBe('Payroll report');
    expect((await createFeature('Café')).name).toBe('Café');
  });
});

describe('a reference by name (D15), in every read that takes a record by _id', () => {
  it('finds the feature, hook or table by its name in any letter case', async () => {
    expect((await services.features.getFeature(owner, 'TIMESHEETS'))._id).toBe(otherFeatureId);
    expect((await services.features.listFeatureVersions(owner, 'timesheets')).map((version) => version.version)).toEqual([1]);
    expect(await services.features.versionDiff(owner, 'Timesheets', 1, 1)).toBe('');
    expect((await services.appPage.previewFeature(owner, 'timesheets'))._id).toBe(otherFeatureId);
    expect(await services.access.featureRoles(owner, 'Timesheets')).toEqual(await services.access.featureRoles(owner, otherFeatureId));
    expect((await services.hooks.getHook(owner, 'SYNC-PAYROLL')).name).toBe('sync-payroll');
    expect((await services.tables.getTable(owner, 'payroll'))._id).toBe(ordersId);
  });

  it('answers NOT_FOUND for a name no record has, also where the answer is a list', async () => {
    for (const read of [() => services.access.featureRoles(owner, 'No such feature'), () => services.features.listFeatureVersions(owner, 'No such feature')]) {
      const error = await read().then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect((error as TrellisError).code).toBe('NOT_FOUND');
    }
  });
});

describe('a reference handed to a service on its own (not inside a parsed input)', () => {
  it('is BAD_INPUT when it holds text PostgreSQL cannot store, not a failed query', async () => {
    const nul = 'pay\u0000roll';
    const reads = [
      () => services.features.getFeature(owner, nul),
      () => services.features.listFeatureVersions(owner, nul),
      () => services.features.versionDiff(owner, nul, 1, 1),
      () => services.features.validateCode(owner, PAGE, nul),
      () => services.appPage.previewFeature(owner, nul),
      () => services.appPage.publishedFeature(owner, nul),
      () => services.access.featureRoles(owner, nul),
      () => services.access.deleteRole(owner, nul),
      () => services.hooks.getHook(owner, nul),
      () => services.tables.getTable(owner, nul),
    ];
    for (const read of reads) await expectBadInput(read(), 'must not contain the NUL character (U+0000)');
  });
});
