import { describe, expect, it } from 'vitest';
import type { FrameUser } from '../shared/frame-protocol.js';
import { currentUserFrom } from './current-user.js';

const USER: FrameUser = {
  _id: 'u1',
  email: 'vic@example.com',
  name: 'Vic',
  roleName: 'viewer',
  tableAccess: [
    { tableId: 't-orders', table: 'Orders', read: 'OWN', create: 'ALL', update: 'NONE', delete: 'NONE', hiddenFields: ['amount'], readOnlyFields: [] },
    { tableId: 't-regions', table: 'Regions', read: 'FILTER', create: 'NONE', update: 'FILTER', delete: 'NONE', hiddenFields: [], readOnlyFields: [] },
  ],
};

describe('currentUserFrom', () => {
  it.each([
    ['Orders', 'read', true],
    ['Orders', 'create', true],
    ['Orders', 'update', false],
    ['Orders', 'delete', false],
    ['orders', 'read', true],
    ['ORDERS', 'delete', false],
    ['t-orders', 'create', true],
    ['Regions', 'read', true],
    ['Regions', 'update', true],
    ['Regions', 'create', false],
    ['Customers', 'read', false],
    ['Orders', 'archive', false],
    ['Orders', 'READ', true],
  ])('can(%s, %s) is %s', (table, action, expected) => {
    expect(currentUserFrom(USER).can(table, action)).toBe(expected);
  });

  it('keeps the data the host sent beside can', () => {
    const user = currentUserFrom(USER);
    expect(user).toMatchObject({ _id: 'u1', email: 'vic@example.com', roleName: 'viewer', tableAccess: USER.tableAccess });
    expect(Object.isFrozen(user)).toBe(true);
  });

  it('grants nothing when the host sent no table access', () => {
    const user = currentUserFrom({ ...USER, tableAccess: undefined as unknown as FrameUser['tableAccess'] });
    expect(user.tableAccess).toEqual([]);
    expect(user.can('Orders', 'read')).toBe(false);
  });
});
