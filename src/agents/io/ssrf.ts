import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';

/**
 * SSRF guard for every URL Cairn calls on a user's word (Invoke, MCP servers, model provider base URLs:
 * see services/outbound-urls.ts for the one policy they share): a URL's host is resolved first and refused when any
 * of its addresses is not a public one (private, loopback, link-local, CGNAT, unspecified, multicast,
 * reserved, documentation ranges, and the IPv6 forms that embed such an IPv4 address), unless the
 * operator allows it. The request then connects to exactly the address that was checked (DNS pinning),
 * so a name that resolves differently a moment later (DNS rebinding) cannot redirect it.
 */

export interface UrlPolicy {
  /** CAIRN_ALLOW_PRIVATE_URLS: every address is allowed. */
  allowPrivate: boolean;
  /**
   * CAIRN_PRIVATE_URL_ALLOWLIST: hosts (`intranet.local`, `*.corp.example`) or address ranges
   * (`10.1.2.3`, `10.0.0.0/8`, `fd00::/8`) that may be non-public, each optionally with a port
   * (`127.0.0.1:11434`, `[::1]:11434`) that then is the only one allowed.
   */
  allowList?: string[];
  /** Name resolution, replaceable in tests; default the system resolver (all addresses). */
  resolve?: (host: string) => Promise<ResolvedAddress[]>;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export class SsrfError extends Error {
  override name = 'SsrfError';
}

/** The policy's refusal behind a failed request (fetch wraps it in "fetch failed", SDKs wrap that again), if that is why it failed. */
export function refusalOf(err: unknown): SsrfError | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 8; depth++) {
    if (e instanceof SsrfError) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

type Range = { family: 4 | 6; base: bigint; bits: number; label: string };

const V4: [string, string][] = [
  ['0.0.0.0/8', 'an unspecified ("this network")'],
  ['10.0.0.0/8', 'a private'],
  ['100.64.0.0/10', 'a carrier-grade NAT (CGNAT)'],
  ['127.0.0.0/8', 'a loopback'],
  ['169.254.0.0/16', 'a link-local'],
  ['172.16.0.0/12', 'a private'],
  ['192.0.0.0/24', 'an IETF protocol-assignment'],
  ['192.0.2.0/24', 'a documentation (TEST-NET-1)'],
  ['192.88.99.0/24', 'a 6to4 relay anycast'],
  ['192.168.0.0/16', 'a private'],
  ['198.18.0.0/15', 'a benchmarking'],
  ['198.51.100.0/24', 'a documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'a documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'a multicast'],
  ['240.0.0.0/4', 'a reserved'],
];

const V6: [string, string][] = [
  ['::/128', 'an unspecified'],
  ['::1/128', 'a loopback'],
  ['100::/64', 'a discard-only'],
  ['2001::/23', 'an IETF protocol-assignment'],
  ['2001:db8::/32', 'a documentation'],
  ['fc00::/7', 'a private (unique local)'],
  ['fe80::/10', 'a link-local'],
  ['fec0::/10', 'a site-local'],
  ['ff00::/8', 'a multicast'],
];

const RANGES: Range[] = [...V4.map(([cidr, label]) => parseCidr(cidr, label)), ...V6.map(([cidr, label]) => parseCidr(cidr, label))];

function parseCidr(cidr: string, label = ''): Range {
  const [addr, bitsText] = cidr.split('/');
  const family = isIP(addr!) as 4 | 6;
  if (!family) throw new Error(`not an address range: ${cidr}`);
  const max = family === 4 ? 32 : 128;
  const bits = bitsText === undefined ? max : Number(bitsText);
  if (!Number.isInteger(bits) || bits < 0 || bits > max) throw new Error(`not an address range: ${cidr}`);
  return { family, base: toBigInt(addr!, family), bits, label };
}

function toBigInt(addr: string, family: 4 | 6): bigint {
  if (family === 4) return addr.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
  let text = addr.replace(/%.*$/, '');
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = toBigInt(v4[1]!, 4);
    text = text.slice(0, -v4[1]!.length) + `${((n >> 16n) & 0xffffn).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

function inRange(value: bigint, family: 4 | 6, r: Range): boolean {
  if (r.family !== family) return false;
  const shift = BigInt((family === 4 ? 32 : 128) - r.bits);
  return value >> shift === r.base >> shift;
}

/** The IPv4 address an IPv6 one stands for: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::/96), 6to4 (2002::/16). */
function embeddedV4(value: bigint): bigint | undefined {
  const top96 = value >> 32n;
  const low32 = value & 0xffffffffn;
  if (top96 === 0xffffn) return low32; // ::ffff:0:0/96
  if (top96 === 0n && low32 > 1n) return low32; // ::/96 (deprecated IPv4-compatible)
  if (top96 === 0x64ff9b0000000000000000n) return low32; // 64:ff9b::/96
  if (value >> 112n === 0x2002n) return (value >> 80n) & 0xffffffffn; // 2002::/16
  return undefined;
}

/**
 * Why an address is not public ("a loopback", "a private", ...), or undefined for a public one.
 * IPv6 forms that carry an IPv4 address are judged by that address ("an IPv4-mapped loopback").
 */
export function nonPublicKind(address: string): string | undefined {
  const family = isIP(address.replace(/%.*$/, '')) as 0 | 4 | 6;
  if (!family) return 'an invalid';
  const value = toBigInt(address, family);
  if (family === 6) {
    const v4 = embeddedV4(value);
    if (v4 !== undefined) {
      const kind = RANGES.find((r) => inRange(v4, 4, r))?.label;
      if (!kind) return undefined;
      return `${value >> 32n === 0xffffn ? 'an IPv4-mapped' : 'an IPv4-embedding'} ${kind.replace(/^an? /, '')}`;
    }
  }
  if (family === 4 && value === 0xffffffffn) return 'a broadcast';
  return RANGES.find((r) => inRange(value, family, r))?.label;
}

/** The loopback servers the spec runs beside Cairn on one machine: Ollama (11434) and Xinference (9997). */
export const DEFAULT_PRIVATE_URL_ALLOWLIST = ['127.0.0.1:11434', '[::1]:11434', '127.0.0.1:9997', '[::1]:9997'];

/**
 * An allowlist entry split into what it names and an optional port: `10.0.0.0/8`, `host:8080`,
 * `127.0.0.1:11434`, `[::1]:11434`. An IPv6 entry takes a port only in brackets (`fd00::1` has none).
 */
function splitEntry(entry: string): { target: string; port?: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { target: bracketed[1]!, port: bracketed[2] === undefined ? undefined : Number(bracketed[2]) };
  const withPort = /^([^:]+):(\d+)$/.exec(entry);
  if (withPort) return { target: withPort[1]!, port: Number(withPort[2]) };
  return { target: entry };
}

/** The allowlist entry that would let exactly this address and port through. */
function entryFor(a: ResolvedAddress, port: number): string {
  return a.family === 6 ? `[${a.address}]:${port}` : `${a.address}:${port}`;
}

/** The port a URL connects to (its default when it names none). */
function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

function allowedByList(host: string, port: number, address: string, allowList: string[]): boolean {
  const family = isIP(address) as 4 | 6;
  const value = family ? toBigInt(address, family) : undefined;
  for (const raw of allowList) {
    const { target: entry, port: entryPort } = splitEntry(raw.trim().toLowerCase());
    if (!entry) continue;
    if (entryPort !== undefined && entryPort !== port) continue;
    if (isIP(entry.split('/')[0]!)) {
      try {
        const r = parseCidr(entry);
        if (value !== undefined && inRange(value, family, r)) return true;
      } catch {
        /* a malformed entry allows nothing */
      }
    } else if (entry.startsWith('*.')) {
      if (host.endsWith(entry.slice(1))) return true;
    } else if (host === entry) return true;
  }
  return false;
}

const systemResolve = async (host: string): Promise<ResolvedAddress[]> =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family as 4 | 6 }));

/** The host of a URL without IPv6 brackets, lower-cased. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/**
 * Checks a URL for the policy and returns the address to connect to (the first one the name resolved
 * to; every one of them must pass). Throws SsrfError with a message naming the address and the setting.
 */
export async function checkUrl(url: URL, policy: UrlPolicy, component = 'Invoke'): Promise<ResolvedAddress> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SsrfError(`${component}: only http and https URLs are allowed, not ${url.protocol.replace(/:$/, '')}`);
  const host = hostOf(url);
  if (!host) throw new SsrfError(`${component}: the URL has no host`);
  const literal = isIP(host) as 0 | 4 | 6;
  let addresses: ResolvedAddress[];
  if (literal) addresses = [{ address: host, family: literal }];
  else {
    try {
      addresses = await (policy.resolve ?? systemResolve)(host);
    } catch (err) {
      const code = (err as { code?: string }).code;
      throw new SsrfError(`${component}: cannot resolve ${host}${code ? ` (${code})` : ''}`);
    }
    if (!addresses.length) throw new SsrfError(`${component}: cannot resolve ${host}`);
  }
  if (!policy.allowPrivate) {
    for (const a of addresses) {
      const kind = nonPublicKind(a.address);
      if (!kind || allowedByList(host, portOf(url), a.address, policy.allowList ?? [])) continue;
      const what = literal ? a.address : `${host} resolves to ${a.address}, which`;
      throw new SsrfError(
        `${component}: ${what} is ${kind} address; set CAIRN_ALLOW_PRIVATE_URLS=true (or list it in CAIRN_PRIVATE_URL_ALLOWLIST, e.g. ${entryFor(a, portOf(url))}) to allow it`,
      );
    }
  }
  return addresses[0]!;
}

/** A `lookup` for http.request / net.connect that answers with the checked address only, whatever the name. */
export function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return ((_host: string, options: { all?: boolean } | number | undefined, callback: (...args: unknown[]) => void) => {
    const cb = typeof options === 'function' ? (options as (...args: unknown[]) => void) : callback;
    const all = typeof options === 'object' && options?.all;
    if (all) cb(null, [{ address: pinned.address, family: pinned.family }]);
    else cb(null, pinned.address, pinned.family);
  }) as LookupFunction;
}
