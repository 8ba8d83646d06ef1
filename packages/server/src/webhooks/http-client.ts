import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import type { AttemptErrorCode } from '../errors.js';
import { ConnectionTracing, connectionFacts, NO_TRACE, type AttemptTrace } from './connection-trace.js';
import { checkDestination, checkHost, DestinationError, webhookUrlProblem, type CidrList, type ResolvedAddress, type Resolver } from './destination-guard.js';
import { urlTextProblem } from './destination-names.js';

/**
 * One webhook attempt over HTTPS (SPEC §5). The guard sits inside the connection step: every new connection
 * resolves the host with the injected resolver, checks every address, and dials a checked IP with the host name
 * kept for SNI and certificate checks, so nothing can resolve differently between the check and the connect.
 * No redirects, no proxies (a plain undici Agent honours neither), and a bounded read of the answer.
 */

export interface DeliveryClientOptions {
  resolver: Resolver;
  allow: CidrList;
  /** Extra PEM certificate authorities, trusted beside the default roots (and NODE_EXTRA_CA_CERTS). */
  ca?: string[];
  connectionsPerOrigin: number;
  /** Connect to status line. */
  timeoutMs: number;
}

export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string | Buffer;
}

/** The client's name for what went wrong before a status line arrived: facts, not a verdict (decision.ts decides). */
export type FailureCode = Extract<AttemptErrorCode, 'timeout' | 'connection_failed' | 'tls_failed' | 'dns_failed' | 'destination_refused'>;

export type AttemptOutcome =
  | { kind: 'response'; statusCode: number; retryAfterSeconds: number | null; snippet: string; durationMs: number; trace: AttemptTrace }
  | { kind: 'failure'; code: FailureCode; message: string; durationMs: number; trace: AttemptTrace };

export interface DeliveryClient {
  send(req: DeliveryRequest, signal?: AbortSignal): Promise<AttemptOutcome>;
  close(): Promise<void>;
}

/** How much of an answer is read: enough to keep small answers' connections alive, never a whole large body. */
const BODY_READ_LIMIT = 64 * 1024;
const SNIPPET_BYTES = 1024;
/** A body that starts right at the deadline still gets this long to show its first bytes. */
const BODY_GRACE_MS = 1_000;

export function createDeliveryClient(opts: DeliveryClientOptions): DeliveryClient {
  const extraCa = opts.ca ?? [];
  // One context for all connections: parsing ~150 root certificates per handshake would cost more than the request.
  const secureContext = extraCa.length > 0 ? tls.createSecureContext({ ca: [...defaultTrust(), ...extraCa] }) : undefined;
  const dial = buildConnector({ timeout: opts.timeoutMs, ...(secureContext ? { secureContext } : {}) });
  const tracing = new ConnectionTracing();

  const connect: buildConnector.connector = (options, callback) => {
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

  const agent = new Agent({
    connect,
    connections: opts.connectionsPerOrigin,
    // Backstops only: the attempt's own timer below is what bounds the attempt.
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });

  /** Parsed and checked once per URL: a target's URL is the same for every attempt. */
  const targets = new Map<string, { problem: string; origin?: never; path?: never } | { problem: null; origin: string; path: string; textProblem: string | null }>();
  function targetOf(url: string) {
    let t = targets.get(url);
    if (!t) {
      const problem = webhookUrlProblem(url);
      if (problem !== null) t = { problem };
      else {
        const u = new URL(url);
        t = { problem: null, origin: u.origin, path: `${u.pathname}${u.search}`, textProblem: urlTextProblem(url) };
      }
      if (targets.size >= 1000) targets.delete(targets.keys().next().value!);
      targets.set(url, t);
    }
    return t;
  }

  /**
   * SPEC §12: a URL whose text is refused (whitespace, port 0) goes out only when every address of its host is
   * allowed. Checked here, because the connect step sees the parsed origin, in which the parser has dropped tabs.
   */
  function send(req: DeliveryRequest, signal?: AbortSignal): Promise<AttemptOutcome> {
    const target = targetOf(req.url);
    if (target.problem !== null || target.textProblem === null) return attempt(req, signal);
    const startedAt = performance.now();
    return withDeadline(checkDestination(req.url, opts), opts.timeoutMs, () => new DestinationError('dns_failed', 'The host did not resolve in time')).then(
      () => attempt(req, signal),
      (err: unknown): AttemptOutcome => ({ kind: 'failure', ...describeFailure(err, opts.timeoutMs), durationMs: Math.round(performance.now() - startedAt), trace: NO_TRACE }),
    );
  }

  /**
   * Straight on undici's dispatcher with a handler of our own: no AbortSignal, no response stream, no async
   * iterator per attempt; the handler keeps the status, Retry-After and the head of the body, and aborts the
   * request itself when a deadline passes, the body runs past BODY_READ_LIMIT or the caller cancels.
   */
  function attempt(req: DeliveryRequest, signal?: AbortSignal): Promise<AttemptOutcome> {
    const startedAt = performance.now();
    const elapsed = (): number => Math.round(performance.now() - startedAt);
    const target = targetOf(req.url);
    const tracer = target.problem === null ? tracing.start(req.body) : null;
    const trace = (failure?: unknown): AttemptTrace => tracer?.result(failure) ?? NO_TRACE;
    const fail = (code: FailureCode, message: string, cause?: unknown): AttemptOutcome => ({ kind: 'failure', code, message, durationMs: elapsed(), trace: trace(cause) });

    if (target.problem !== null) return Promise.resolve(fail('destination_refused', `The URL ${target.problem}.`));
    if (signal?.aborted) return Promise.resolve(fail('connection_failed', 'The attempt was cancelled.'));

    return new Promise<AttemptOutcome>((resolve) => {
      let controller: Dispatcher.DispatchController | null = null;
      let settled = false;
      let statusCode = 0;
      let retryAfterSeconds: number | null = null;
      const kept: Buffer[] = [];
      const failureOf = (err: unknown): AttemptOutcome => {
        const { code, message } = describeFailure(err, opts.timeoutMs);
        return fail(code, message, err);
      };
      let keptBytes = 0;
      let seen = 0;

      const answer = (): AttemptOutcome => ({
        kind: 'response',
        statusCode,
        retryAfterSeconds,
        snippet: snippetOf(Buffer.concat(kept)),
        durationMs: elapsed(),
        trace: trace(),
      });
      const finish = (outcome: AttemptOutcome, abort: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', cancel);
        // The request may still be waiting for a connection (our look-up included): it is aborted when it starts.
        if (abort) controller?.abort(new AttemptStopped());
        resolve(outcome);
      };
      // Until the status line: the attempt's deadline. After it: the body only feeds the snippet, so running out
      // of time cuts it short, nothing more; a body that starts right at the deadline still gets BODY_GRACE_MS.
      const onDeadline = (): void => {
        if (statusCode === 0) finish(fail('timeout', `No response within ${opts.timeoutMs} ms.`), true);
        else finish(answer(), true);
      };
      let timer = setTimeout(onDeadline, opts.timeoutMs);
      const cancel = (): void => finish(fail('connection_failed', 'The attempt was cancelled.'), true);
      signal?.addEventListener('abort', cancel, { once: true });

      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(c) {
          controller = c;
          if (settled) c.abort(new AttemptStopped());
        },
        onResponseStart(_c, status, headers) {
          if (status < 200 || settled) return;
          statusCode = status;
          tracer?.firstByte();
          retryAfterSeconds = parseRetryAfter(headers['retry-after'], Date.now());
          clearTimeout(timer);
          const now = performance.now();
          // Whole milliseconds: Node keeps a timer list per distinct duration, and a fractional one would make a list each time.
          timer = setTimeout(onDeadline, Math.ceil(Math.max(startedAt + opts.timeoutMs, now + BODY_GRACE_MS) - now));
        },
        onResponseData(_c, chunk) {
          if (settled) return;
          if (keptBytes < SNIPPET_BYTES + 4) {
            const part = chunk.subarray(0, SNIPPET_BYTES + 4 - keptBytes);
            kept.push(part);
            keptBytes += part.length;
          }
          seen += chunk.length;
          // Never a whole large body: the connection is given up instead.
          if (seen >= BODY_READ_LIMIT) finish(answer(), true);
        },
        onResponseEnd() {
          finish(answer(), false);
        },
        onResponseError(_c, err) {
          // Cut off mid-body by the peer: what arrived is still worth showing.
          if (statusCode !== 0) finish(answer(), false);
          else finish(failureOf(err), false);
        },
      };
      try {
        agent.dispatch({ origin: target.origin, path: target.path, method: 'POST', headers: req.headers, body: tracer!.body }, handler);
      } catch (err) {
        finish(failureOf(err), false);
      }
    });
  }

  // Graceful first (idle keep-alive sockets), but a connection stuck in its look-up must not hold the shutdown.
  let closing: Promise<void> | null = null;
  async function shutDown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), opts.timeoutMs)));
    const done = await Promise.race([agent.close().then(() => 'closed' as const), late]);
    clearTimeout(timer);
    if (done === 'late') await agent.destroy();
    tracing.close();
  }

  return { send, close: () => (closing ??= shutDown()) };
}

/** Our own abort of an attempt that already has its outcome; never reported. */
class AttemptStopped extends Error {}

/** A resolver that never answers would leave the origin's connection pending, and every later request behind it. */
function withDeadline<T>(work: Promise<T>, ms: number, onLate: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(onLate()), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * C0 controls but tab, newline and carriage return, and DEL. PostgreSQL's `text` refuses NUL outright, so an answer
 * stored as received could never be recorded (its job would be sent again and again); the others are replaced too,
 * so what the admin sees of a binary answer is inert text on every database.
 */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/**
 * At most SNIPPET_BYTES of UTF-8, never ending inside a character (bytes beyond the limit were kept to tell), as
 * text both databases accept: invalid UTF-8 and control characters become U+FFFD.
 */
export function snippetOf(bytes: Buffer): string {
  const fit = (buf: Buffer): Buffer => {
    if (buf.length <= SNIPPET_BYTES) return buf;
    let end = SNIPPET_BYTES;
    // Step back over continuation bytes (10xxxxxx) to the start of the character the limit cuts.
    for (let i = 0; i < 3 && end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80; i++) end--;
    return buf.subarray(0, end);
  };
  const text = fit(bytes).toString('utf8').replace(CONTROL_CHARACTERS, '\ufffd');
  // Invalid bytes and controls become U+FFFD, three bytes each, so the text can outgrow the limit.
  return Buffer.byteLength(text) <= SNIPPET_BYTES ? text : fit(Buffer.from(text, 'utf8')).toString('utf8');
}

/** Delta-seconds or an HTTP-date, as seconds from `nowMs` (never negative); anything else is null. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Number(text);
  // Only date-looking text: Date.parse would otherwise accept "7.5" or "1" as a date.
  if (!/^[A-Za-z]{3},? /.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'HOSTNAME_MISMATCH',
  'EPROTO',
]);
const UNREACHABLE_CODES = new Set(['ENETUNREACH', 'EHOSTUNREACH', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']);

const errorCode = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

function isUnreachable(err: Error): boolean {
  return UNREACHABLE_CODES.has(errorCode(err) ?? '');
}

/** Stable codes with short fixed messages: the peer's words, our headers and the body never reach the job's record. */
function describeFailure(err: unknown, timeoutMs: number): { code: FailureCode; message: string } {
  if (err instanceof DestinationError) return { code: err.code, message: `${err.message}.` };
  // Errors may arrive wrapped (undici's `cause`); the innermost code is the telling one.
  const codes: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = errorCode(e);
    if (code) codes.push(code);
  }
  const code = codes.find((c) => isTimeout(c) || isTls(c)) ?? codes.at(-1) ?? 'unknown';
  if (isTimeout(code)) return { code: 'timeout', message: `No response within ${timeoutMs} ms (${code}).` };
  if (isTls(code)) return { code: 'tls_failed', message: `The TLS handshake or the receiver's certificate failed (${code}).` };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { code: 'dns_failed', message: `The host could not be resolved (${code}).` };
  return { code: 'connection_failed', message: `The connection failed (${code}).` };
}

const isTimeout = (code: string): boolean => TIMEOUT_CODES.has(code);
const isTls = (code: string): boolean =>
  TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || code.startsWith('CERT_') || code.startsWith('SSL_');

/**
 * The default trust store, extra certificates included. Node drops NODE_EXTRA_CA_CERTS as soon as `ca` is given
 * (seen on Node 20.20), so it has to be rebuilt by hand; Node ≥ 22.15 can list it itself.
 */
function defaultTrust(): string[] {
  const list = (tls as { getCACertificates?: (type: 'default') => string[] }).getCACertificates;
  if (typeof list === 'function') return list('default');
  // The one env read outside config: Node's own variable, which Node itself reads the same way.
  const file = process.env.NODE_EXTRA_CA_CERTS;
  let extra: string[] = [];
  if (file) {
    try {
      extra = readFileSync(file, 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    } catch {
      // Node itself only warns about an unreadable file and carries on with the bundled roots.
    }
  }
  return [...tls.rootCertificates, ...extra];
}
