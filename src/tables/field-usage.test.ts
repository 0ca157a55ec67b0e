import { describe, expect, it } from 'vitest';
import { hookCodeTableUses } from './field-usage.js';

const ORDERS = { id: 'orders-id', name: 'Orders' };

describe('hookCodeTableUses', () => {
  it.each([
    ['a db call naming the table in another letter case', "async function (instance) {\n  await db.update('orders', instance.id, { paid: true });\n}", 'paid', undefined, [{ line: 2, detail: "db.update('Orders', …) names paid" }]],
    ['a db call naming the table by _id', "async function (instance) {\n  return db.find('orders-id', { paid: { eq: true } });\n}", 'paid', undefined, [{ line: 2, detail: "db.find('Orders', …) names paid" }]],
    ['a sort naming the field in a string', "async function (instance) {\n  return db.find('Orders', {}, { sort: [{ field: 'paid' }] });\n}", 'paid', undefined, [{ line: 2, detail: "db.find('Orders', …) names paid" }]],
    ['a db call without the field', "async function (instance) {\n  return db.get('Orders', instance.id);\n}", 'paid', undefined, []],
    ["another table's db call", "async function (instance) {\n  return db.create('Invoices', { paid: true });\n}", 'paid', undefined, []],
    ['instance.<field> in a save hook of the table', 'async function (order) {\n  if (order.paid) return;\n}', 'paid', 'beforeSave', [{ line: 2, detail: 'order.paid' }]],
    ['destructuring of the instance', 'async function (instance) {\n  const { paid } = instance;\n}', 'paid', 'afterSave', [{ line: 2, detail: '{ paid } = instance' }]],
    ['a destructured parameter', 'async ({ paid }) => {\n  return paid;\n}', 'paid', 'beforeSave', [{ line: 1, detail: '{ paid } = instance' }]],
    ['instance.<field> in a webhook, whose instance is a request body', 'async function (instance) {\n  return instance.paid;\n}', 'paid', undefined, []],
    ['a nested function destructuring its own parameter', 'async function (instance) {\n  [1].map(({ paid }) => paid);\n}', 'paid', 'beforeSave', []],
    ['code that does not parse', 'async function (instance) {', 'paid', 'beforeSave', []],
  ])('reads %s', (_what, code, field, saveHookType, expected) => {
    expect(hookCodeTableUses(code, ORDERS, field, saveHookType).map(({ line, detail }) => ({ line, detail }))).toEqual(expected);
  });

  it('without a field, lists the db calls on the table and a save hook of it', () => {
    const code = "async function (instance) {\n  await db.update('Orders', instance.id, {});\n  await db.delete('Orders', instance.old);\n}";
    expect(hookCodeTableUses(code, ORDERS, undefined, 'beforeSave').map(({ line, detail }) => ({ line, detail }))).toEqual([
      { line: 1, detail: 'runs on every save of Orders (beforeSave)' },
      { line: 2, detail: "db.update('Orders', …)" },
      { line: 3, detail: "db.delete('Orders', …)" },
    ]);
  });
});
