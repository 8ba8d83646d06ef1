import Agent from 'undici/lib/dispatcher/agent.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { ConnectionTracing, NO_TRACE } from './connection-trace.js';
import { checkDestination, DestinationError, webhookUrlProblem, type CidrList, type Resolver } from './destination-guard.js';
import { urlTextProblem } from './destination-names.js';
import { dispatchAttempt } from './https/dispatch.js';
import { describeFailure } from './https/failure-codes.js';
import { guardedConnector, withDeadline } from './https/guarded-connect.js';
import { deliverySecureContext } from './https/trust-store.js';
import type { AttemptOutcome, DeliverySender, FailureCode, OutgoingMessage } from './senders/sender.js';
import type { TargetRow } from './targets-store.js';

/**
 * The HTTPS sender (SPEC §5): one attempt is one POST through an undici Agent whose connection step holds the
 * destination guard (https/guarded-connect.ts). No redirects, no proxies (a plain undici Agent honours neither), and a
 * bounded read of the answer (https/dispatch.ts). Its parts: the guard at connect time, the dispatch, the snippet
 * (https/snippet.ts), Retry-After (https/retry-after.ts), the failure codes (https/failure-codes.ts) and the trust
 * store (https/trust-store.ts); this file puts them together and keeps what is per URL.
 */

export type { AttemptOutcome, FailureCode } from './senders/sender.js';
export { parseRetryAfter } from './https/retry-after.js';
export { snippetOf } from './https/snippet.js';

export interface DeliveryClientOptions {
  resolver: Resolver;
  allow: CidrList;
  /** Extra PEM certificate authorities, trusted beside the default roots (and NODE_EXTRA_CA_CERTS). */
  ca?: string[];
  connectionsPerOrigin: number;
  /** Connect to status line. */
  timeoutMs: number;
  /** Reads the time a Retry-After date is counted from (the process's clock; the system clock when not given). */
  clock?: Clock;
}

/** One POST as the client takes it: the headers are sent as given. */
export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string | Buffer;
}

export interface DeliveryClient extends DeliverySender {
  send(req: DeliveryRequest, signal?: AbortSignal): Promise<AttemptOutcome>;
  close(): Promise<void>;
}

/** svc's own header on every HTTPS attempt (SPEC §5); a broker message has none (there is no agent to name). */
const USER_AGENT = 'svc-webhooks/1';

type ParsedUrl = { problem: string; origin?: never; path?: never; textProblem?: never } | { problem: null; origin: string; path: string; textProblem: string | null };

export function createDeliveryClient(opts: DeliveryClientOptions): DeliveryClient {
  const tracing = new ConnectionTracing();
  const clock = opts.clock ?? systemClock;
  const connect = guardedConnector({ resolver: opts.resolver, allow: opts.allow, timeoutMs: opts.timeoutMs, secureContext: deliverySecureContext(opts.ca ?? []) }, tracing);
  const agent = new Agent({
    connect,
    connections: opts.connectionsPerOrigin,
    // Backstops only: the attempt's own timer (dispatch.ts) is what bounds the attempt.
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });

  /** Parsed and checked once per URL: a target's URL is the same for every attempt. */
  const parsed = new Map<string, ParsedUrl>();
  function parse(url: string): ParsedUrl {
    let t = parsed.get(url);
    if (!t) {
      const problem = webhookUrlProblem(url);
      if (problem !== null) t = { problem };
      else {
        const u = new URL(url);
        t = { problem: null, origin: u.origin, path: `${u.pathname}${u.search}`, textProblem: urlTextProblem(url) };
      }
      if (parsed.size >= 1000) parsed.delete(parsed.keys().next().value!);
      parsed.set(url, t);
    }
    return t;
  }

  const failure = (code: FailureCode, message: string, startedAt: number): AttemptOutcome => ({
    kind: 'failure',
    code,
    message,
    durationMs: Math.round(performance.now() - startedAt),
    trace: NO_TRACE,
  });

  /**
   * SPEC §12: a URL whose text is refused (whitespace, port 0) goes out only when every address of its host is
   * allowed. Checked here, because the connect step sees the parsed origin, in which the parser has dropped tabs.
   */
  function send(req: DeliveryRequest, signal?: AbortSignal): Promise<AttemptOutcome> {
    const startedAt = performance.now();
    const target = parse(req.url);
    if (target.problem !== null) return Promise.resolve(failure('destination_refused', `The URL ${target.problem}.`, startedAt));
    const go = () => dispatchAttempt(agent, { origin: target.origin, path: target.path, headers: req.headers, tracer: tracing.start(req.body) }, opts.timeoutMs, clock, signal);
    if (target.textProblem === null) return go();
    return withDeadline(checkDestination(req.url, opts), opts.timeoutMs, () => new DestinationError('dns_failed', 'The host did not resolve in time')).then(go, (err: unknown) => {
      const { code, message } = describeFailure(err, opts.timeoutMs);
      return failure(code, message, startedAt);
    });
  }

  function deliver(target: TargetRow, message: OutgoingMessage, signal: AbortSignal): Promise<AttemptOutcome> {
    if (target.url === null) return Promise.resolve(failure('connection_failed', `A ${target.type} target is delivered by a broker connection, which this sender does not have.`, performance.now()));
    return send({ url: target.url, body: message.body, headers: { ...message.headers, 'user-agent': USER_AGENT } }, signal);
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

  return { send, deliver, close: () => (closing ??= shutDown()) };
}
