import { describe, expect, it } from 'vitest';
import { FEATURE_PARAMS_MAX_LENGTH, featureQuery, parseFeaturePath } from './frame-protocol.js';

describe('parseFeaturePath', () => {
  it.each([
    ['a feature', '/feature/orders', { featureId: 'orders', params: {} }],
    ['a feature with parameters', '/feature/order-detail?order=12&tab=items', { featureId: 'order-detail', params: { order: '12', tab: 'items' } }],
    ['an encoded id and value', '/feature/caf%C3%A9?q=a%20b%26c', { featureId: 'café', params: { q: 'a b&c' } }],
  ])('reads %s', (_what, path, target) => {
    expect(parseFeaturePath(path)).toEqual(target);
  });

  it.each([
    ['another page of the origin', '/graphql'],
    ['a nested path', '/feature/orders/12'],
    ['a full URL', 'https://example.com/feature/orders'],
    ['a broken escape', '/feature/%E0%A4%A'],
    ['parameters longer than an address keeps', `/feature/orders?q=${'x'.repeat(FEATURE_PARAMS_MAX_LENGTH)}`],
  ])('refuses %s', (_what, path) => {
    expect(parseFeaturePath(path)).toBeNull();
  });
});

describe('featureQuery', () => {
  it.each([
    [{}, ''],
    [{ order: '12' }, '?order=12'],
    [{ q: 'a b&c', empty: '' }, '?q=a+b%26c&empty='],
  ])('writes %j as %j', (params, query) => {
    expect(featureQuery(params)).toBe(query);
    expect(parseFeaturePath(`/feature/x${query}`)?.params).toEqual(params);
  });
});
