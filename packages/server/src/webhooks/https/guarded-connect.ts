import net from 'node:net';
import type tls from 'node:tls';
import buildConnector from 'undici/lib/core/connect.js';
import { connectionFacts, type ConnectionTracing } from '../connection-trace.js';
import { checkHost, DestinationError, type CidrList, type ResolvedAddress, type Resolver } from '../destination-guard.js';
import { isUnreachable } from './failure-codes.js';

export interface GuardOptions {
  resolver: Resolver;
  allow: CidrList;
  /** Connect to status line: the look-up and the dial are bounded by it too. */
  timeoutMs: number;
  secureContext?: tls.SecureContext;
}

/**
 * The connection step of every delivery connection, with the destination guard inside it (SPEC §5): it resolves the
 * host with the injected resolver, checks every address, and dials a checked IP with the host name kept for SNI and
 * certificate checks, so nothing can resolve differently between the check and the connect. Only https.
 */
export function guardedConnector(opts: GuardOptions, tracing: ConnectionTracing): buildConnector.connector {
  const dial = buildConnector({ timeout: opts.timeoutMs, ...(opts.secureContext ? { secureContext: opts.secureContext } : {}) });
  return (options, callback) => {
    const host = options.hostname;
    if (options.protocol !== 'https:') {
      callback(new DestinationError('destination_refused', 'only https destinations are allowed'), null);
      return;
    }
    // Names get SNI (without the trailing dot RFC 6066 forbids); IP literals are verified against the IP itself.
    const servername = net.isIP(host) === 0 ? host.replace(/\.$/, '') : undefined;
    // Marks for the attempt's diagnostics; an IP literal is never looked up, so it has no DNS phase.
    const start = performance.now();
    let resolved: number | null = null;
    withDeadline(checkHost(host, opts), opts.timeoutMs, () => new DestinationError('dns_failed', `${host} did not resolve within ${opts.timeoutMs} ms`)).then(
      (addresses) => {
        if (servername !== undefined) resolved = performance.now();
        dialInTurn(addresses, 0);
      },
      (err: Error) => callback(err, null),
    );

    function dialInTurn(addresses: ResolvedAddress[], index: number): void {
      const target = addresses[index];
      if (target === undefined) return;
      const dialled = performance.now();
      let tcp: number | null = null;
      const facts = (secure: number | null) => connectionFacts({ start, resolved, dialled, tcp, secure, address: target.address });
      // undici's connector returns the socket it opens (its typings say void).
      const socket = (dial as (...args: Parameters<typeof dial>) => net.Socket | undefined)({ ...options, hostname: target.address, ...(servername ? { servername } : {}) }, (err, connected) => {
        // A dual-stack name whose first family has no route here: the next checked address may work.
        if (err && index + 1 < addresses.length && isUnreachable(err)) {
          dialInTurn(addresses, index + 1);
          return;
        }
        if (err) {
          tracing.failed(err, facts(null));
          callback(err, null);
        } else {
          tracing.opened(connected!, facts(performance.now()));
          callback(null, connected!);
        }
      });
      // A TLS socket says 'connect' when its TCP connection is up, before the handshake.
      socket?.once('connect', () => (tcp = performance.now()));
    }
  };
}

/** A resolver that never answers would leave the origin's connection pending, and every later request behind it. */
export function withDeadline<T>(work: Promise<T>, ms: number, onLate: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(onLate()), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
