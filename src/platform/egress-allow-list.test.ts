import { describe, expect, it } from 'vitest';
import { egressEntryProblem, parseEgressAllowEntry } from './egress-allow-list.js';

describe('parseEgressAllowEntry', () => {
  it.each([
    ['10.0.0.0/8', { kind: 'network', network: '10.0.0.0', prefix: 8, family: 'ipv4' }],
    ['fd00::/8', { kind: 'network', network: 'fd00::', prefix: 8, family: 'ipv6' }],
    ['127.0.0.1', { kind: 'address', address: '127.0.0.1', family: 'ipv4' }],
    ['::1', { kind: 'address', address: '::1', family: 'ipv6' }],
    ['hooks.internal', { kind: 'host', host: 'hooks.internal' }],
    ['hooks.internal:8080', { kind: 'host', host: 'hooks.internal:8080' }],
    ['[::1]:8080', { kind: 'host', host: '[::1]:8080' }],
  ])('reads %s', (text, entry) => {
    expect(parseEgressAllowEntry(text)).toEqual({ entry });
  });

  it.each([
    ['10.0.0.0/33', "'10.0.0.0/33' is not a valid CIDR range"],
    ['::1/129', "'::1/129' is not a valid CIDR range"],
    ['hooks.internal/8', "'hooks.internal/8' is not a valid CIDR range"],
    ['not a host', "'not a host' is not a host, host:port, IP address or CIDR range"],
    ['http://x.test', "'http://x.test' is not a host, host:port, IP address or CIDR range"],
  ])('refuses %s saying why', (text, problem) => {
    expect(parseEgressAllowEntry(text)).toEqual({ problem });
  });
});

describe('egressEntryProblem', () => {
  it('trims and lower-cases the entry as the policy does, and finds no problem in an empty one', () => {
    expect(egressEntryProblem('  Hooks.Internal:8080 ')).toBeUndefined();
    expect(egressEntryProblem('   ')).toBeUndefined();
    expect(egressEntryProblem('Not A Host')).toBe("'not a host' is not a host, host:port, IP address or CIDR range");
  });
});
