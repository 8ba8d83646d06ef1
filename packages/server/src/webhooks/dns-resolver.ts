import { promises as dns } from 'node:dns';
import { readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import { systemClock, type Clock } from '../lib/clock.js';
import type { ResolvedAddress, Resolver } from '../lib/resolver.js';

/**
 * Name resolution for deliveries (SPEC §11). `dns.lookup` runs getaddrinfo on libuv's four pool threads, and a
 * deadline stops the waiting, not the thread: a few targets behind a lame DNS server would hold every thread that
 * argon2 logins and file reads need. c-ares (`dns.Resolver`) asks the servers over sockets on the event loop, so a
 * silent server costs a timer, not a thread. The hosts file is read here, since c-ares never consults it.
 */

export interface DeliveryResolverOptions {
  /** The whole look-up, A and AAAA together (`SVC_DNS_TIMEOUT_MS`). */
  timeoutMs: number;
  /** `host[:port]` entries; default: the servers of /etc/resolv.conf. */
  servers?: string[];
  hostsFile?: string;
  clock?: Clock;
  /** How long a failure is remembered, so a lame server is not asked again for every attempt. */
  negativeTtlMs?: number;
  /** Upper bound on the records' own TTL: a moved receiver is found within this time. */
  maxPositiveTtlMs?: number;
  maxEntries?: number;
}

export class DnsLookupError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = 'DnsLookupError';
  }
}

/** A Resolver for the guard, plus the shutdown habit: pending questions are dropped and their timers cleared. */
export type DeliveryResolver = Resolver & { close(): void };

type Answer = { address: string; ttl: number };
type Entry = { expiresAt: number; addresses: ResolvedAddress[] } | { expiresAt: number; error: DnsLookupError };

const HOSTS_STAT_INTERVAL_MS = 1_000;

/** Lower case without the trailing dot: `Example.COM.` and `example.com` are one name, in the hosts file too. */
const canonical = (name: string): string => name.toLowerCase().replace(/\.$/, '');

export function createDeliveryResolver(options: DeliveryResolverOptions): DeliveryResolver {
  const clock = options.clock ?? systemClock;
  const negativeTtlMs = options.negativeTtlMs ?? 5_000;
  const maxPositiveTtlMs = options.maxPositiveTtlMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 1_000;
  // Two tries of half the deadline each: a lost packet is asked again, and c-ares gives up when our deadline ends.
  const resolver = new dns.Resolver({ timeout: Math.max(1, Math.ceil(options.timeoutMs / 2)), tries: 2 });
  if (options.servers) resolver.setServers(options.servers);
  const hosts = hostsFileReader(options.hostsFile ?? '/etc/hosts', clock);
  const cache = new Map<string, Entry>();
  // Every attempt to a target resolves its host; concurrent attempts share one question to the server.
  const inFlight = new Map<string, Promise<ResolvedAddress[]>>();

  function remember(name: string, entry: Entry): void {
    cache.delete(name);
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
    cache.set(name, entry);
  }

  async function ask(name: string): Promise<ResolvedAddress[]> {
    try {
      const { v4, v6 } = await bothFamilies(resolver, name, options.timeoutMs);
      const answers = [...v4, ...v6];
      const ttlMs = Math.min(maxPositiveTtlMs, ...answers.map((a) => a.ttl * 1000));
      // IPv4 first: the client dials in turn, and a v4 route is the one more hosts have.
      const addresses = [...v4.map((a) => ({ address: a.address, family: 4 as const })), ...v6.map((a) => ({ address: a.address, family: 6 as const }))];
      if (ttlMs > 0) remember(name, { expiresAt: clock.now() + ttlMs, addresses });
      return addresses;
    } catch (err) {
      const error = err instanceof DnsLookupError ? err : lookupError(name, codeOf(err), options.timeoutMs);
      remember(name, { expiresAt: clock.now() + negativeTtlMs, error });
      throw error;
    }
  }

  const resolve: Resolver = async (hostname) => {
    const family = net.isIP(hostname);
    if (family !== 0) return [{ address: hostname, family: family === 6 ? 6 : 4 }];
    const name = canonical(hostname);
    const fromHosts = hosts.lookup(name);
    if (fromHosts) return fromHosts;
    const cached = cache.get(name);
    if (cached && cached.expiresAt > clock.now()) {
      if ('error' in cached) throw cached.error;
      return cached.addresses;
    }
    let pending = inFlight.get(name);
    if (!pending) {
      pending = ask(name).finally(() => inFlight.delete(name));
      inFlight.set(name, pending);
    }
    return pending;
  };
  return Object.assign(resolve, { close: () => resolver.cancel() });
}

/**
 * A and AAAA in parallel under one deadline. One family failing is fine when the other answered; at the deadline,
 * whatever has arrived is used, so a server that drops AAAA questions costs time but not the delivery.
 */
function bothFamilies(resolver: dns.Resolver, name: string, timeoutMs: number): Promise<{ v4: Answer[]; v6: Answer[] }> {
  return new Promise((resolve, reject) => {
    const got: { v4?: Answer[]; v6?: Answer[] } = {};
    const failed: { v4?: unknown; v6?: unknown } = {};
    let settled = false;
    const decide = (atDeadline: boolean): void => {
      if (settled) return;
      const done = (got.v4 || failed.v4 !== undefined) && (got.v6 || failed.v6 !== undefined);
      if (!done && !atDeadline) return;
      settled = true;
      clearTimeout(timer);
      const answers = { v4: got.v4 ?? [], v6: got.v6 ?? [] };
      if (answers.v4.length + answers.v6.length > 0) resolve(answers);
      else reject(lookupError(name, done ? preferredCode(failed.v4, failed.v6) : 'ETIMEOUT', timeoutMs));
    };
    const timer = setTimeout(() => decide(true), timeoutMs);
    resolver.resolve4(name, { ttl: true }).then(
      (a) => ((got.v4 = a), decide(false)),
      (e: unknown) => ((failed.v4 = e ?? 'error'), decide(false)),
    );
    resolver.resolve6(name, { ttl: true }).then(
      (a) => ((got.v6 = a), decide(false)),
      (e: unknown) => ((failed.v6 = e ?? 'error'), decide(false)),
    );
  });
}

// c-ares's own give-up and our deadline are the same event to the operator.
const lookupError = (name: string, code: string, timeoutMs: number): DnsLookupError =>
  new DnsLookupError(code, code === 'ETIMEOUT' ? `${name} did not resolve within ${timeoutMs} ms` : `${name} could not be resolved (${code})`);

const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'EUNKNOWN';
};

/** ENODATA for one family says nothing about the name; the other family's error is the telling one. */
function preferredCode(v4: unknown, v6: unknown): string {
  const a = codeOf(v4);
  return a === 'ENODATA' ? codeOf(v6) : a;
}

/**
 * The hosts file as glibc reads it: every line naming the host contributes its address, in file order; names
 * compare case-insensitively. Re-read when its mtime or size changes, checked at most once a second. The check is
 * synchronous on purpose: an async stat would queue behind the very pool threads a login storm keeps busy.
 */
function hostsFileReader(path: string, clock: Clock): { lookup(name: string): ResolvedAddress[] | null } {
  let table = new Map<string, ResolvedAddress[]>();
  let version = '';
  let checkedAt = -Infinity;

  function refresh(): void {
    const now = clock.now();
    if (now - checkedAt < HOSTS_STAT_INTERVAL_MS) return;
    checkedAt = now;
    let stamp = 'missing';
    try {
      const s = statSync(path);
      stamp = `${s.mtimeMs}:${s.size}`;
    } catch {
      // No hosts file is an empty one, as for getaddrinfo.
    }
    if (stamp === version) return;
    version = stamp;
    table = stamp === 'missing' ? new Map() : parseHosts(readFileSync(path, 'utf8'));
  }

  return {
    lookup(name) {
      refresh();
      const found = table.get(name);
      if (found) return found;
      // RFC 6761: `localhost` names are loopback even when the file forgets them, and never go to a DNS server.
      if (name === 'localhost' || name.endsWith('.localhost')) return [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
      return null;
    },
  };
}

export function parseHosts(text: string): Map<string, ResolvedAddress[]> {
  const table = new Map<string, ResolvedAddress[]>();
  for (const line of text.split('\n')) {
    const [address, ...names] = (line.split('#')[0] ?? '').trim().split(/\s+/);
    const family = net.isIP(address ?? '');
    // A zoned address (fe80::1%lo0) is only dialable on that link; a webhook never goes there.
    if (!address || family === 0 || address.includes('%')) continue;
    for (const raw of names) {
      const name = canonical(raw);
      const list = table.get(name) ?? [];
      if (!list.some((a) => a.address === address)) list.push({ address, family: family === 6 ? 6 : 4 });
      table.set(name, list);
    }
  }
  return table;
}
