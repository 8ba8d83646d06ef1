import diagnosticsChannel from 'node:diagnostics_channel';

/**
 * Attempt diagnostics (SPEC §10): the address an attempt's request went to and what each phase cost. Facts only:
 * nothing here decides what an attempt means.
 *
 * The connect step (http-client.ts) knows what opening a connection cost; the request handler knows when the status
 * line came. undici tells neither about the other, so the two meet on its `undici:client:sendHeaders` diagnostics
 * channel, which names the request and the socket it is written to. Each send passes a body Buffer object of its
 * own, which undici keeps as the request's `body`: that object identifies the attempt. A request written on a
 * connection that an earlier request already used (keep-alive) did no look-up, connect or handshake of its own: those
 * phases are null for it, and its address is the connection's.
 */

export interface AttemptTimings {
  /** Resolving the host name (null for an IP literal, or a reused connection). */
  dnsMs: number | null;
  /** TCP connect to the checked address. */
  connectMs: number | null;
  /** TLS handshake (null for a plain connection). */
  tlsMs: number | null;
  /** From the request being written to its status line (null when no answer arrived). */
  firstByteMs: number | null;
}

export interface AttemptTrace {
  /** The address dialled (null when no connection was made, e.g. a refused destination or a DNS failure). */
  remoteAddress: string | null;
  timings: AttemptTimings;
}

export const NO_TRACE: AttemptTrace = { remoteAddress: null, timings: { dnsMs: null, connectMs: null, tlsMs: null, firstByteMs: null } };

/** What opening one connection cost; set by connect() on the socket it hands undici, or on the error it reports. */
export interface ConnectionFacts {
  remoteAddress: string | null;
  dnsMs: number | null;
  connectMs: number | null;
  tlsMs: number | null;
}

/** One attempt being traced: filled in as its request is written and answered. */
export interface AttemptTracer {
  /** The body to hand undici: a Buffer object of this attempt's own. */
  readonly body: Buffer;
  /** Call when the status line arrives. */
  firstByte(): void;
  /** The trace so far; `failure` is the error that ended the attempt, which may carry a failed connection's facts. */
  result(failure?: unknown): AttemptTrace;
}

const ms = (n: number): number => Math.round(n);

export class ConnectionTracing {
  private readonly sockets = new WeakMap<object, ConnectionFacts & { used: boolean }>();
  private readonly failedConnections = new WeakMap<object, ConnectionFacts>();
  private readonly attempts = new WeakMap<object, (socket: object) => void>();
  private readonly onSendHeaders = (message: unknown): void => {
    const { request, socket } = message as { request?: { body?: unknown }; socket?: object };
    const body = request?.body;
    if (body && typeof body === 'object' && socket) this.attempts.get(body)?.(socket);
  };

  constructor() {
    diagnosticsChannel.subscribe('undici:client:sendHeaders', this.onSendHeaders);
  }

  close(): void {
    diagnosticsChannel.unsubscribe('undici:client:sendHeaders', this.onSendHeaders);
  }

  /** connect() opened `socket` at this cost. */
  opened(socket: object, facts: ConnectionFacts): void {
    this.sockets.set(socket, { ...facts, used: false });
  }

  /** connect() failed with `err` after getting this far. */
  failed(err: object, facts: ConnectionFacts): void {
    this.failedConnections.set(err, facts);
  }

  start(body: string | Buffer): AttemptTracer {
    // A view of its own even for a Buffer body: the object, not the bytes, names the attempt.
    const own = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    let sentAt: number | null = null;
    let firstByteMs: number | null = null;
    let connection: ConnectionFacts | null = null;
    const startedAt = performance.now();
    this.attempts.set(own, (socket) => {
      sentAt = performance.now();
      const facts = this.sockets.get(socket);
      if (!facts) return;
      connection = facts.used ? { remoteAddress: facts.remoteAddress, dnsMs: null, connectMs: null, tlsMs: null } : facts;
      facts.used = true;
    });
    return {
      body: own,
      firstByte: () => {
        firstByteMs ??= ms(performance.now() - (sentAt ?? startedAt));
      },
      result: (failure) => {
        const c: ConnectionFacts | null = connection ?? this.failedConnectionOf(failure);
        return {
          remoteAddress: c?.remoteAddress ?? null,
          timings: { dnsMs: c?.dnsMs ?? null, connectMs: c?.connectMs ?? null, tlsMs: c?.tlsMs ?? null, firstByteMs },
        };
      },
    };
  }

  private failedConnectionOf(err: unknown): ConnectionFacts | null {
    // undici may wrap the connect error; the facts sit on the one connect() reported.
    for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
      const facts = this.failedConnections.get(e);
      if (facts) return facts;
    }
    return null;
  }
}

/** Phase durations from performance.now() marks; a phase not reached is null. */
export function connectionFacts(marks: { start: number; resolved: number | null; dialled: number | null; tcp: number | null; secure: number | null; address: string | null }): ConnectionFacts {
  const { start, resolved, dialled, tcp, secure, address } = marks;
  return {
    remoteAddress: address,
    dnsMs: resolved === null ? null : ms(resolved - start),
    connectMs: dialled === null || tcp === null ? null : ms(tcp - dialled),
    tlsMs: tcp === null || secure === null ? null : ms(secure - tcp),
  };
}
