import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import { parseEgressAllowEntry } from '../platform/egress-allow-list.js';
import { withFields } from '../platform/objects.js';

/** Limits of one outbound request made by hook code. */
export interface EgressLimits {
  /** Whole exchange, redirects included. Default 5000 ms. */
  timeoutMs: number;
  /** Largest response body read; a larger one fails the fetch. Default 1 MB. */
  maxResponseBytes: number;
  /** Redirects followed, each target checked again. Default 3. */
  maxRedirects: number;
}

export const DEFAULT_EGRESS_LIMITS: EgressLimits = { timeoutMs: 5000, maxResponseBytes: 1024 * 1024, maxRedirects: 3 };

export interface EgressRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface EgressResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: string;
  /** The URL that answered, after redirects. */
  url: string;
}

/** A refused or failed outbound request; the message is safe to show to the hook's author. */
export class EgressError extends Error {
  override readonly name = 'EgressError';
}

type Family = 4 | 6;

const RANGES: ReadonlyArray<[string, number, Family, string]> = [
  ['0.0.0.0', 8, 4, 'unspecified'],
  ['10.0.0.0', 8, 4, 'private'],
  ['100.64.0.0', 10, 4, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 4, 'loopback'],
  ['169.254.0.0', 16, 4, 'link-local'],
  ['172.16.0.0', 12, 4, 'private'],
  ['192.0.0.0', 24, 4, 'reserved'],
  ['192.0.2.0', 24, 4, 'documentation'],
  ['192.88.99.0', 24, 4, 'reserved'],
  ['192.168.0.0', 16, 4, 'private'],
  ['198.18.0.0', 15, 4, 'reserved'],
  ['198.51.100.0', 24, 4, 'documentation'],
  ['203.0.113.0', 24, 4, 'documentation'],
  ['224.0.0.0', 4, 4, 'multicast'],
  ['240.0.0.0', 4, 4, 'reserved'],
  ['::', 128, 6, 'unspecified'],
  ['::1', 128, 6, 'loopback'],
  ['64:ff9b:1::', 48, 6, 'local-use NAT64'],
  ['100::', 64, 6, 'discard-only'],
  ['2001:db8::', 32, 6, 'documentation'],
  ['3fff::', 20, 6, 'documentation'],
  ['fec0::', 10, 6, 'site-local'],
  ['fc00::', 7, 6, 'private'],
  ['fe80::', 10, 6, 'link-local'],
  ['ff00::', 8, 6, 'multicast'],
];

const FORBIDDEN = RANGES.map(([network, prefix, family, label]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family === 4 ? 'ipv4' : 'ipv6');
  return { list, label };
});

/**
 * Which destinations hook code may reach. Refused by default: loopback, private, link-local
 * (cloud metadata included), unspecified, carrier-grade NAT, multicast, documentation and reserved
 * ranges, and every address of this machine's own interfaces (a public one too), also
 * when written as IPv4-mapped, IPv4-compatible or NAT64 IPv6. `allow` entries lift the refusal:
 * `host` or `host:port` (matched against the URL's host name), an IP address or a CIDR range
 * (matched against every resolved address).
 *
 * @throws Error naming the entry when an allow-list entry is not a host, host:port, IP or CIDR
 * @example new EgressPolicy(['127.0.0.1/32', 'hooks.internal:8080'])
 */
export class EgressPolicy {
  private readonly allowedNetworks = new BlockList();
  private readonly allowedHosts = new Set<string>();
  private own: { addresses: ReadonlySet<string>; read: number } = { addresses: new Set(), read: -Infinity };

  /**
   * @param ownAddresses the addresses of this machine's interfaces besides loopback (read again every
   * few seconds): a public address of the server itself reaches its own services as loopback would
   */
  constructor(
    allow: readonly string[] = [],
    private readonly ownAddresses: () => readonly string[] = interfaceAddresses,
  ) {
    for (const entry of allow) this.add(entry.trim().toLowerCase());
  }

  /**
   * The reason `address` is refused for `host`/`port`, or undefined when it may be reached. An IPv6
   * address that carries an IPv4 address (mapped, compatible, translated, NAT64, 6to4, Teredo) is
   * refused when that IPv4 address would be.
   */
  refusal(address: string, host: string, port: number): string | undefined {
    if (this.allowedHosts.has(host) || this.allowedHosts.has(`${host}:${port}`)) return undefined;
    const candidates = [address, ...embeddedIPv4s(address)];
    if (candidates.some((ip) => this.allowedNetworks.check(ip, familyOf(ip)))) return undefined;
    const own = this.ownSet();
    if (candidates.some((ip) => own.has(canonical(ip)))) return OWN;
    for (const ip of candidates) {
      const label = FORBIDDEN.find(({ list }) => list.check(ip, familyOf(ip)))?.label;
      if (label) return label;
    }
    return undefined;
  }

  private ownSet(): ReadonlySet<string> {
    const now = performance.now();
    if (now - this.own.read > OWN_ADDRESSES_TTL_MS) this.own = { addresses: new Set(this.ownAddresses().map(canonical)), read: now };
    return this.own.addresses;
  }

  private add(text: string): void {
    if (text === '') return;
    const { entry, problem } = parseEgressAllowEntry(text);
    if (problem !== undefined) throw new Error(`TRELLIS_HOOK_EGRESS_ALLOW: ${problem}`);
    if (entry.kind === 'network') this.allowedNetworks.addSubnet(entry.network, entry.prefix, entry.family);
    else if (entry.kind === 'address') this.allowedNetworks.addAddress(entry.address, entry.family);
    else this.allowedHosts.add(entry.host);
  }
}

/** The reason `refusal` gives for an address of one of this machine's own interfaces. */
export const OWN = 'own';
/** How long the list of this machine's addresses is kept before it is read again. */
const OWN_ADDRESSES_TTL_MS = 5000;

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).filter(({ internal }) => !internal).map(({ address }) => address));
}

/** One spelling per address: IPv6 groups in full lower-case hex without a zone, IPv4 as it is. */
function canonical(ip: string): string {
  const groups = ipv6Groups(ip);
  return groups ? groups.map((group) => group.toString(16)).join(':') : ip;
}

function familyOf(ip: string): 'ipv4' | 'ipv6' {
  return isIP(ip) === 4 ? 'ipv4' : 'ipv6';
}

/**
 * The IPv4 addresses an IPv6 address carries: IPv4-compatible (::a.b.c.d), -mapped (::ffff:a.b.c.d)
 * and -translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:AABB:CCDD::) and Teredo
 * (2001:0:server:…:~client), in any notation the address is written in.
 */
export function embeddedIPv4s(address: string): string[] {
  const g = ipv6Groups(address);
  if (!g) return [];
  const v4 = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join('.');
  const zero = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  const found: string[] = [];
  if (zero(0, 5) && (g[5] === 0 || g[5] === 0xffff)) found.push(v4(g[6]!, g[7]!));
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) found.push(v4(g[6]!, g[7]!));
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) found.push(v4(g[6]!, g[7]!));
  if (g[0] === 0x2002) found.push(v4(g[1]!, g[2]!));
  if (g[0] === 0x2001 && g[1] === 0) found.push(v4(g[2]!, g[3]!), v4(g[6]! ^ 0xffff, g[7]! ^ 0xffff));
  return found;
}

/** The eight 16-bit groups of an IPv6 address (a zone id ignored), or undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(bare) !== 6) return undefined;
  let text = bare.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const groups = tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : undefined;
}

/**
 * Performs one HTTP(S) request for hook code. Every hop (the first request and each redirect)
 * resolves the host once, checks all its addresses against the policy and connects to the
 * checked address, so a DNS answer that changes between check and connect cannot redirect the
 * connection. Only http and https; at most `maxRedirects` redirects; the response body is read
 * up to `maxResponseBytes`; the whole exchange ends after `timeoutMs`, or when `cancel` aborts (the run ended).
 *
 * @throws EgressError with a safe message when refused, too large, too slow or unreachable
 */
export async function guardedFetch(
  request: EgressRequest,
  policy: EgressPolicy,
  limits: EgressLimits = DEFAULT_EGRESS_LIMITS,
  cancel?: AbortSignal,
): Promise<EgressResponse> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const signal = cancel ? AbortSignal.any([timeout, cancel]) : timeout;
  let current = { url: parseUrl(request.url), method: (request.method ?? 'GET').toUpperCase(), headers: cleanHeaders(request.headers), body: request.body };
  for (let hop = 0; ; hop += 1) {
    const target = await vet(current.url, policy);
    const answer = await exchange(current, target, limits, signal);
    const location = answer.status >= 300 && answer.status < 400 ? answer.headers.location : undefined;
    if (location === undefined) return withFields(answer, { url: current.url.href });
    if (hop >= limits.maxRedirects) throw new EgressError(`fetch failed: more than ${limits.maxRedirects} redirects`);
    current = redirected(current, answer.status, parseUrl(location, current.url));
  }
}

interface Hop {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

interface Vetted {
  address: string;
  family: Family;
}

function parseUrl(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw new EgressError('fetch failed: invalid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EgressError(`fetch refused: only http and https URLs are allowed, not ${url.protocol}`);
  return url;
}

const DROPPED_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade']);

function cleanHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    if (!DROPPED_HEADERS.has(lower)) out[lower] = String(value);
  }
  return out;
}

async function vet(url: URL, policy: EgressPolicy): Promise<Vetted> {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) as Family }] : await resolve(host);
  for (const { address } of addresses) {
    const reason = policy.refusal(address, url.hostname.toLowerCase(), port);
    if (reason) {
      const what = reason === OWN ? 'an address of this server' : `a ${reason} address`;
      throw new EgressError(`fetch refused: ${url.hostname} is ${what}; hooks may not reach it unless TRELLIS_HOOK_EGRESS_ALLOW lists it`);
    }
  }
  return addresses[0]!;
}

async function resolve(host: string): Promise<Vetted[]> {
  try {
    const found = await dnsLookup(host, { all: true, verbatim: true });
    if (found.length > 0) return found.map(({ address, family }) => ({ address, family: family as Family }));
  } catch {
    // reported below with the same message as an empty answer
  }
  throw new EgressError(`fetch failed: cannot resolve ${host}`);
}

function redirected(previous: Hop, status: number, url: URL): Hop {
  const toGet = status === 303 || ((status === 301 || status === 302) && previous.method === 'POST');
  const headers = { ...previous.headers };
  if (url.origin !== previous.url.origin) {
    delete headers.authorization;
    delete headers.cookie;
  }
  if (toGet) delete headers['content-type'];
  return { url, method: toGet ? 'GET' : previous.method, headers, body: toGet ? undefined : previous.body };
}

function exchange(hop: Hop, target: Vetted, limits: EgressLimits, signal: AbortSignal): Promise<Omit<EgressResponse, 'url'>> {
  const pinned: LookupFunction = (_host, options, callback) => {
    if (options.all) (callback as unknown as (e: null, a: Vetted[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const transport = hop.url.protocol === 'https:' ? https : http;
  return new Promise((resolvePromise, reject) => {
    const fail = (message: string) => reject(new EgressError(message));
    const request = transport.request(hop.url, { method: hop.method, headers: hop.headers, lookup: pinned, signal }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxResponseBytes) {
          request.destroy();
          fail(`fetch failed: the response is larger than ${limits.maxResponseBytes} bytes`);
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () =>
        resolvePromise({ status: response.statusCode ?? 0, headers: flatHeaders(response.headers), body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', () => fail(failure(signal, limits)));
    });
    request.on('error', () => fail(failure(signal, limits)));
    request.end(hop.body);
  });
}

function failure(signal: AbortSignal, limits: EgressLimits): string {
  return signal.aborted ? `fetch failed: no complete answer within ${limits.timeoutMs} ms` : 'fetch failed: the connection failed';
}

function flatHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}
