import { isIP } from 'node:net';

export type IpFamily = 'ipv4' | 'ipv6';

/**
 * One entry of TRELLIS_HOOK_EGRESS_ALLOW, parsed: a CIDR range, an IP address, or a host name
 * (`host`, `host:port` or `[ipv6]:port`, matched against the URL's host name).
 */
export type EgressAllowEntry =
  | { kind: 'network'; network: string; prefix: number; family: IpFamily }
  | { kind: 'address'; address: string; family: IpFamily }
  | { kind: 'host'; host: string };

/**
 * Parses one allow-list entry, already trimmed and lower-cased. Pure: no DNS, no I/O.
 *
 * @returns the entry, or `problem` saying why it is not a host, host:port, IP address or CIDR range
 * @example parseEgressAllowEntry('10.0.0.0/8') // { entry: { kind: 'network', network: '10.0.0.0', prefix: 8, family: 'ipv4' } }
 * @example parseEgressAllowEntry('10.0.0.0/33') // { problem: "'10.0.0.0/33' is not a valid CIDR range" }
 */
export function parseEgressAllowEntry(entry: string): { entry: EgressAllowEntry; problem?: undefined } | { entry?: undefined; problem: string } {
  const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
  if (cidr) {
    const family = isIP(cidr[1]!);
    const prefix = Number(cidr[2]);
    if (family === 0 || prefix > (family === 4 ? 32 : 128)) return { problem: `'${entry}' is not a valid CIDR range` };
    return { entry: { kind: 'network', network: cidr[1]!, prefix, family: family === 4 ? 'ipv4' : 'ipv6' } };
  }
  const family = isIP(entry);
  if (family !== 0) return { entry: { kind: 'address', address: entry, family: family === 4 ? 'ipv4' : 'ipv6' } };
  if (!/^[a-z0-9.-]+(:\d{1,5})?$/.test(entry) && !/^\[[0-9a-f:.]+\]:\d{1,5}$/.test(entry)) {
    return { problem: `'${entry}' is not a host, host:port, IP address or CIDR range` };
  }
  return { entry: { kind: 'host', host: entry } };
}

/** Why `entry` of TRELLIS_HOOK_EGRESS_ALLOW is not a host, host:port, IP address or CIDR range; undefined when it is one. */
export function egressEntryProblem(entry: string): string | undefined {
  const trimmed = entry.trim().toLowerCase();
  return trimmed === '' ? undefined : parseEgressAllowEntry(trimmed).problem;
}
