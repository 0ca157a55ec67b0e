import { describe, expect, it } from 'vitest';
import { graphqlPlace, importChange, propPlace, type GuideTable } from './code-assist.js';

const ORDERS: GuideTable = {
  name: 'Orders',
  fields: [
    { name: 'title', type: 'text', required: true },
    { name: 'amount', type: 'number', required: false },
  ],
  operations: { type: 'Orders', input: 'OrdersInput', list: 'listOrders', get: 'getOrders', create: 'createOrders', update: 'updateOrders', delete: 'deleteOrders' },
};

function applied(code: string, change: { from: number; to: number; insert: string } | null): string {
  return change ? code.slice(0, change.from) + change.insert + code.slice(change.to) : code;
}

describe('importChange', () => {
  it.each([
    ['adds the name to the import of its module', "import { Card } from '@trellis/ui';\n\nexport default 1;\n", "import { Card, Text } from '@trellis/ui';\n\nexport default 1;\n"],
    ['adds an import line after the last import', "import { useState } from 'react';\nimport { useQuery } from '@trellis/runtime';\n\nx;\n", "import { useState } from 'react';\nimport { useQuery } from '@trellis/runtime';\nimport { Text } from '@trellis/ui';\n\nx;\n"],
    ['starts the file with the import when there is none', 'export default 1;\n', "import { Text } from '@trellis/ui';\nexport default 1;\n"],
    ['leaves code that imports the name already', "import { Card, Text } from '@trellis/ui';\n", "import { Card, Text } from '@trellis/ui';\n"],
  ])('%s', (_what, code, expected) => {
    expect(applied(code, importChange(code, 'Text', '@trellis/ui'))).toBe(expected);
  });
});

describe('graphqlPlace', () => {
  it.each([
    ['the root fields of a query', 'query Orders { ', { kind: 'root', mutation: false }],
    ['the root fields of a shorthand query', '{ li', { kind: 'root', mutation: false }],
    ['the root fields of a mutation', 'mutation Add($data: OrdersInput!) { cre', { kind: 'root', mutation: true }],
    ["a list's page", 'query { listOrders(limit: 5) { ', { kind: 'page', table: ORDERS }],
    ["a list's items", 'query { listOrders(sort: [{ field: title }]) { items { _id ti', { kind: 'fields', table: ORDERS }],
    ['the answer of a create', 'mutation { createOrders(data: { title: "x" }) { ', { kind: 'fields', table: ORDERS }],
  ])('finds %s', (_what, prefix, place) => {
    expect(graphqlPlace(prefix, [ORDERS])).toEqual(place);
  });

  it.each([
    ['the operation name', 'query Ord'],
    ['arguments', 'query { listOrders(li'],
    ['an unknown root field', 'query { listThings { '],
    ['a field of an unknown object', 'query { listOrders { total { '],
  ])('offers nothing in %s', (_what, prefix) => {
    expect(graphqlPlace(prefix, [ORDERS])).toBeNull();
  });
});

describe('propPlace', () => {
  it.each([
    ['after the name', '<Input ', { component: 'Input', typed: '', given: [] }],
    ['after attributes of every kind', '<Input label="Title" value={title} onChange={(event) => setTitle(event.target.value)} pla', { component: 'Input', typed: 'pla', given: ['label', 'value', 'onChange'] }],
    ['on a later line', '<Button\n  variant="secondary"\n  ', { component: 'Button', typed: '', given: ['variant'] }],
  ])('finds the props of a component %s', (_what, prefix, place) => {
    expect(propPlace(prefix)).toEqual(place);
  });

  it.each([
    ['in the name', '<Inp'],
    ['in a value', '<Input label="Ti'],
    ['after the tag', '<Input label="Title" /> '],
    ['in an HTML element', '<div cl'],
  ])('offers nothing %s', (_what, prefix) => {
    expect(propPlace(prefix)).toBeNull();
  });
});
