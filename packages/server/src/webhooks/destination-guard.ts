import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may go (SPEC §4, §5): only to addresses the IANA IPv4 and IPv6 special-purpose registries mark
 * globally reachable. Addresses that carry an IPv4 inside them (mapped, compatible, NAT64, 6to4, Teredo) are judged
 * by that IPv4, because ipaddr.js calls them all plain "unicast". The only way around a refusal is the operator's
 * allow list (`SVC_WEBHOOK_ALLOW_CIDRS`).
 */

// Parsed with the rest of the configuration (lib/cidr.ts); re-exported for the guard's callers and tests.
export { parseCidrList, type CidrList } from '../lib/cidr.js';
import type { CidrList } from '../lib/cidr.js';

export type { ResolvedAddress, Resolver } from '../lib/resolver.js';
import type { ResolvedAddress, Resolver } from '../lib/resolver.js';
import { hostNameProblem, urlTextProblem } from './destination-names.js';

export class DestinationError extends Error {
  constructor(
    readonly code: 'destination_refused' | 'dns_failed',
    message: string,
  ) {
    super(message);
    this.name = 'DestinationError';
  }
}


type V4Rule = readonly [network: string, bits: number, reason: string | null];

// Longest prefix wins; `null` = globally reachable (the registry's more specific exceptions).
const V4_RULES: readonly V4Rule[] = [
  ['0.0.0.0', 8, 'a "this network" address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a shared (CGNAT) address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local address'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'an IETF protocol assignment'],
  ['192.0.0.9', 32, null],
  ['192.0.0.10', 32, null],
  ['192.0.2.0', 24, 'a documentation address'],
  // The registry keeps 192.88.99.2/32 (6a44 relay) global; a relay anycast is never a webhook receiver.
  ['192.88.99.0', 24, 'a deprecated 6to4 relay address'],
  ['192.168.0.0', 16, 'a private address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['198.51.100.0', 24, 'a documentation address'],
  ['203.0.113.0', 24, 'a documentation address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
  ['255.255.255.255', 32, 'the broadcast address'],
  // Public-looking, but answered by the cloud host itself (Azure's wire server).
  ['168.63.129.16', 32, 'a cloud metadata address'],
];

type V6Rule = readonly [network: string, bits: number, reason: string | null];

const V6_RULES: readonly V6Rule[] = [
  ['100::', 64, 'a discard-only address'],
  ['100:0:0:1::', 64, 'a dummy address'],
  ['2001::', 23, 'an IETF protocol assignment'],
  ['2001:1::1', 128, null],
  ['2001:1::2', 128, null],
  ['2001:1::3', 128, null],
  ['2001:2::', 48, 'a benchmarking address'],
  ['2001:3::', 32, null],
  ['2001:4:112::', 48, null],
  ['2001:10::', 28, 'a deprecated ORCHID address'],
  ['2001:20::', 28, null],
  ['2001:30::', 28, null],
  ['2001:db8::', 32, 'a documentation address'],
  ['3fff::', 20, 'a documentation address'],
  ['5f00::', 16, 'an SRv6 segment identifier'],
  ['fc00::', 7, 'a unique local address'],
  ['fe80::', 10, 'a link-local address'],
  ['fec0::', 10, 'a site-local address'],
  ['ff00::', 8, 'a multicast address'],
];

const V6 = (text: string): ipaddr.IPv6 => ipaddr.IPv6.parse(text);
const parsedV4 = V4_RULES.map(([n, b, r]) => [ipaddr.IPv4.parse(n), b, r] as const).sort((x, y) => y[1] - x[1]);
const parsedV6 = V6_RULES.map(([n, b, r]) => [V6(n), b, r] as const).sort((x, y) => y[1] - x[1]);
const [UNSPECIFIED, NAT64, LOCAL_NAT64, SIX_TO_FOUR, TEREDO, GLOBAL_UNICAST] = ['::', '64:ff9b::', '64:ff9b:1::', '2002::', '2001::', '2000::'].map(V6) as [
  ipaddr.IPv6, ipaddr.IPv6, ipaddr.IPv6, ipaddr.IPv6, ipaddr.IPv6, ipaddr.IPv6,
];

function v4Problem(v4: ipaddr.IPv4): string | null {
  for (const [net4, bits, reason] of parsedV4) if (v4.match(net4, bits)) return reason;
  return null;
}

const v4FromBytes = (b: number[]): ipaddr.IPv4 => new ipaddr.IPv4(b.slice(0, 4));

/** Judged by the IPv4 inside: the message names both, so an admin can see why `[::ffff:a00:1]` was refused. */
function embedded(kind: string, v4: ipaddr.IPv4): string | null {
  const problem = v4Problem(v4);
  return problem && `${kind} address of ${v4.toString()}, ${problem}`;
}

/**
 * 64:ff9b:1::/48 is local-use NAT64 (RFC 8215): the operator picks the prefix length, and RFC 6052 puts the IPv4
 * in a different place for each. Every layout that could hold this address (reserved octet and suffix zero) must
 * carry a reachable IPv4; if none can, nobody can say where it leads.
 */
function localNat64Problem(b: number[]): string | null {
  const layouts: Array<[bits: number, v4: number[], zero: number[]]> = [
    [48, [6, 7, 9, 10], [8, 11, 12, 13, 14, 15]],
    [56, [7, 9, 10, 11], [8, 12, 13, 14, 15]],
    [64, [9, 10, 11, 12], [8, 13, 14, 15]],
    [96, [12, 13, 14, 15], []],
  ];
  let plausible = 0;
  for (const [bits, at, zero] of layouts) {
    if (zero.some((i) => b[i] !== 0)) continue;
    plausible += 1;
    const problem = embedded(`a local NAT64 (/${bits})`, new ipaddr.IPv4(at.map((i) => b[i] ?? 0)));
    if (problem) return problem;
  }
  return plausible === 0 ? 'a local NAT64 address with no decodable IPv4' : null;
}

function v6Problem(v6: ipaddr.IPv6): string | null {
  const b = v6.toByteArray();
  const words = v6.parts;
  if (v6.match(UNSPECIFIED, 127)) return v6.match(UNSPECIFIED, 128) ? 'the unspecified address' : 'a loopback address';
  if (v6.isIPv4MappedAddress()) return embedded('an IPv4-mapped', v6.toIPv4Address());
  if (words.slice(0, 6).every((w) => w === 0)) return embedded('an IPv4-compatible', v4FromBytes(b.slice(12)));
  if (v6.match(NAT64, 96)) return embedded('a NAT64', v4FromBytes(b.slice(12)));
  if (v6.match(LOCAL_NAT64, 48)) return localNat64Problem(b);
  if (v6.match(SIX_TO_FOUR, 16)) return embedded('a 6to4', v4FromBytes(b.slice(2, 6)));
  if (v6.match(TEREDO, 32)) {
    // Teredo: the server's IPv4 in clear, the client's (the NAT's public side) bit-inverted in the last 32 bits.
    const client = embedded('a Teredo', new ipaddr.IPv4(b.slice(12).map((x) => ~x & 0xff)));
    return client ?? embedded('a Teredo (server)', v4FromBytes(b.slice(4, 8)));
  }
  for (const [net6, bits, reason] of parsedV6) if (v6.match(net6, bits)) return reason;
  // Outside 2000::/3 everything is reserved or unassigned by the IETF: nothing there is a real receiver.
  if (!v6.match(GLOBAL_UNICAST, 3)) return 'a reserved address';
  return null;
}

/** Strict forms only: what a resolver returns or a WHATWG URL leaves after normalising. Zones never reach the internet. */
function parseStrict(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (net.isIP(ip) === 0 || ip.includes('%')) return null;
  return ipaddr.parse(ip);
}

function problemOf(addr: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  return addr.kind() === 'ipv4' ? v4Problem(addr as ipaddr.IPv4) : v6Problem(addr as ipaddr.IPv6);
}

/** Globally reachable per the IANA registries, and not a known cloud metadata address. */
export function isPublicAddress(ip: string): boolean {
  const addr = parseStrict(ip);
  return addr !== null && problemOf(addr) === null;
}

function allowed(addr: ipaddr.IPv4 | ipaddr.IPv6, allow: CidrList): boolean {
  // A mapped address dials the IPv4 itself on a dual-stack socket, so an allowed IPv4 allows its mapped form too.
  const forms = addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? [addr, (addr as ipaddr.IPv6).toIPv4Address()] : [addr];
  return forms.some((form) => allow.some(([network, bits]) => form.kind() === network.kind() && form.match(network, bits)));
}

/** Whether the operator's allow list covers this address: the one thing that excuses a refused name (SPEC §12). */
export function inAllowList(ip: string, allow: CidrList): boolean {
  const addr = parseStrict(ip);
  return addr !== null && allowed(addr, allow);
}

/** What is wrong with dialling this address (`a private address`), or null when nothing is. */
function addressProblem(ip: string, allow: CidrList): string | null {
  const addr = parseStrict(ip);
  if (addr === null) return 'not an IP address';
  return allowed(addr, allow) ? null : problemOf(addr);
}

export function checkAddress(ip: string, allow: CidrList): { ok: true } | { ok: false; reason: string } {
  if (parseStrict(ip) === null) return { ok: false, reason: `"${ip}" is not an IP address` };
  const problem = addressProblem(ip, allow);
  return problem === null ? { ok: true } : { ok: false, reason: `${ip} is ${problem}` };
}

/** The allow list in force as SVC_WEBHOOK_ALLOW_CIDRS would write it, for messages: `none` when empty. */
export function allowListText(allow: CidrList): string {
  return allow.length === 0 ? 'none' : allow.map(([network, bits]) => `${network.toString()}/${bits}`).join(',');
}

/**
 * What an admin can do about a refused destination (issue 24 item 7): most refusals at save are a developer's local
 * receiver, and the two ways to reach one are `svc listen` and the operator's allow list, named with its value now.
 */
export function refusalAdvice(allow: CidrList): string {
  return (
    `Not allowed by SVC_WEBHOOK_ALLOW_CIDRS (now: ${allowListText(allow)}). ` +
    'To receive webhooks on your own machine, run "svc listen --forward-to <your local URL>": it forwards the event feed ' +
    'there, signed like a delivery, with no webhook target. Or whoever runs svc adds the receiver\'s addresses to ' +
    'SVC_WEBHOOK_ALLOW_CIDRS (for example 127.0.0.0/8,::1/128), for development only: deliveries may then reach those ' +
    'private addresses. See docs/local-development.md.'
  );
}

export function webhookUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.protocol !== 'https:') return 'must use https';
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain a user name or password';
  if (parsed.hostname === '') return 'must have a host';
  return null;
}

/** The URL's host as WHATWG normalised it (`0x7f.1` → `127.0.0.1`, brackets dropped), so we judge what gets dialled. */
export function urlHost(url: string): string {
  const hostname = new URL(url).hostname;
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

/**
 * A refused name or URL text (destination-names.ts) goes through only when every address it resolves to is in the
 * allow list. With an empty list nothing can excuse it, so the callers refuse it before any look-up: `.onion` and
 * `.local` names never reach a DNS server, and the refusal costs no time.
 */
function unlessAllAllowed(problem: string, addresses: readonly ResolvedAddress[], allow: CidrList): void {
  if (addresses.length === 0 || !addresses.every(({ address }) => inAllowList(address, allow))) {
    throw new DestinationError('destination_refused', problem);
  }
}

/**
 * Resolves `host` (unless it is an IP literal) and checks every address: one private address among public ones is
 * enough to refuse, because we cannot know which one a later look-up or connection would pick. A host refused by
 * name (single label, a local-only suffix) passes only when every address is in the allow list.
 */
export async function checkHost(host: string, opts: { resolver: Resolver; allow: CidrList }): Promise<ResolvedAddress[]> {
  const family = net.isIP(host);
  const nameProblem = hostNameProblem(host);
  if (nameProblem !== null && opts.allow.length === 0) throw new DestinationError('destination_refused', nameProblem);
  let addresses: ResolvedAddress[];
  if (family !== 0) {
    addresses = [{ address: host, family: family === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await opts.resolver(host);
    } catch (err) {
      // A refused name that does not resolve is refused for its name: that is what the admin can act on.
      if (nameProblem !== null) throw new DestinationError('destination_refused', nameProblem);
      const code = (err as { code?: unknown }).code;
      throw new DestinationError('dns_failed', `${host} could not be resolved${typeof code === 'string' ? ` (${code})` : ''}`);
    }
    if (addresses.length === 0) throw new DestinationError('dns_failed', `${host} has no addresses`);
  }
  if (nameProblem !== null) unlessAllAllowed(nameProblem, addresses, opts.allow);
  for (const { address } of addresses) {
    const problem = addressProblem(address, opts.allow);
    if (problem !== null) {
      throw new DestinationError('destination_refused', family === 0 ? `${host} resolves to ${address}, ${problem}` : `${address} is ${problem}`);
    }
  }
  return addresses;
}

/** The whole check of a URL at save, enable and (for URLs whose text is refused) delivery: shape, text, name, addresses. */
export async function checkDestination(url: string, opts: { resolver: Resolver; allow: CidrList }): Promise<ResolvedAddress[]> {
  const problem = webhookUrlProblem(url);
  if (problem !== null) throw new DestinationError('destination_refused', `The URL ${problem}`);
  const textProblem = urlTextProblem(url);
  if (textProblem !== null && opts.allow.length === 0) throw new DestinationError('destination_refused', `The URL ${textProblem}`);
  const addresses = await checkHost(urlHost(url), opts);
  if (textProblem !== null) unlessAllAllowed(`The URL ${textProblem}`, addresses, opts.allow);
  return addresses;
}

/**
 * What can be judged without a look-up, for a target saved disabled (SPEC §11, §12): an address written in the URL,
 * and a refused name or URL text when nothing could excuse it (an IP literal outside the allow list, or an empty
 * list). A name the allow list might excuse waits for the look-up that enabling the target makes.
 */
export function offlineDestinationProblem(url: string, allow: CidrList): string | null {
  const host = urlHost(url);
  const literal = net.isIP(host) !== 0;
  if (literal) {
    const verdict = checkAddress(host, allow);
    if (!verdict.ok) return verdict.reason;
  }
  const text = urlTextProblem(url);
  const problem = hostNameProblem(host) ?? (text === null ? null : `The URL ${text}`);
  if (problem === null) return null;
  return (literal ? inAllowList(host, allow) : allow.length > 0) ? null : problem;
}
