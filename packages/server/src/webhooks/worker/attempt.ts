import { NO_TRACE, type AttemptTrace } from '../connection-trace.js';
import type { AttemptResult } from '../decision.js';
import { tracing, type TraceHeaders } from '../../tracing/tracing.js';
import type { HeldJob } from '../queue/job.js';
import type { AttemptOutcome, DeliverySender } from '../senders/sender.js';
import { signatureHeaders } from '../signing.js';
import type { TargetRow } from '../targets-store.js';
import type { OpenedTarget, SecretCache } from './secret-cache.js';

export type { DeliverySender } from '../senders/sender.js';

/** The facts of one attempt: what the decision needs, and what the attempt's record keeps. */
export interface AttemptFacts {
  result: AttemptResult;
  startedAt: number;
  durationMs: number;
  snippet: string;
  /** The address dialled and the phases' timings, as the client reported them. */
  trace: AttemptTrace;
  /** The attempt span's ids when it made one (SPEC §15: its log lines carry them), else null. */
  span: SpanIds | null;
}

export interface SpanIds {
  traceId: string;
  spanId: string;
}

export interface AttemptDeps {
  sender: DeliverySender;
  secrets: SecretCache;
  now: () => number;
  leaseSafetyMs: number;
  /** A configured broker's host as its URL names it (no credentials), for a producer span's `server.address`. */
  brokerHost: (name: string) => string | null;
}

/**
 * Prepare, sign and send one attempt of a held job. Reports facts only; decide() says what they mean. An attempt is
 * not made (and uses none of the job's) when svc has its own reason: the target is gone or disabled since the claim,
 * its secret cannot be opened, or the job waited so long its lease could lapse mid-attempt.
 */
export async function attempt(job: HeldJob, target: TargetRow | undefined, deps: AttemptDeps, signal: AbortSignal): Promise<AttemptFacts> {
  const startedAt = deps.now();
  const notAttempted = (reason: Extract<AttemptResult, { kind: 'not-attempted' }>['reason']): AttemptFacts => ({
    result: { kind: 'not-attempted', reason },
    startedAt,
    durationMs: 0,
    snippet: '',
    trace: NO_TRACE,
    span: null,
  });
  if (!target || !target.enabled) return notAttempted('target-unavailable');
  if (job.leaseExpiresAt - startedAt < deps.leaseSafetyMs) return notAttempted('lease-lapsing');
  let opened: OpenedTarget;
  try {
    opened = deps.secrets.openedFor(target, startedAt);
  } catch {
    return notAttempted('secret-unavailable');
  }
  const timestamp = Math.floor(startedAt / 1000);
  const span = attemptSpan(job, target, deps);
  // The same message for every kind of destination: an HTTPS request's headers, a broker message's (SPEC §14).
  const outcome = await deps.sender.deliver(
    target,
    {
      id: job.id,
      body: job.body,
      // The target's own headers first: none of their names can be one of svc's (static-headers.ts refuses them,
      // traceparent and tracestate included).
      headers: {
        ...opened.headers,
        'content-type': 'application/json',
        ...signatureHeaders(target.signatureScheme, opened.signing, job.id, timestamp, job.body),
        ...(span ? traceHeaders(span.headers) : {}),
      },
    },
    signal,
  );
  span?.end(signal.aborted ? { error: 'shutdown' } : outcome.kind === 'response' ? { statusCode: outcome.statusCode } : outcome.kind === 'failure' ? { error: outcome.code } : null);
  if (signal.aborted) return notAttempted('shutdown');
  return {
    result: resultOf(outcome),
    startedAt,
    durationMs: outcome.durationMs,
    snippet: outcome.kind === 'failure' ? '' : outcome.snippet,
    trace: outcome.trace ?? NO_TRACE,
    span: span ? spanIds(span.headers) : null,
  };
}

const resultOf = (outcome: AttemptOutcome): AttemptResult => {
  if (outcome.kind === 'response') return { kind: 'response', statusCode: outcome.statusCode, retryAfterSeconds: outcome.retryAfterSeconds };
  if (outcome.kind === 'accepted') return { kind: 'accepted' };
  return { kind: 'failure', code: outcome.code, message: outcome.message };
};

/**
 * The attempt's span (SPEC §15): only when tracing is on and the event was written in a trace (migration 019). Its
 * parent is the write's stored context, so every attempt of the event, retried, replayed or made by another process,
 * is in the write's trace; with tracing off nothing is started and no trace header is sent. An HTTPS attempt is a
 * client span; a publish into a broker a producer span with the messaging conventions' attributes (its message
 * headers carry the same traceparent and tracestate).
 */
function attemptSpan(job: HeldJob, target: TargetRow, deps: AttemptDeps) {
  const runtime = tracing();
  if (runtime === null || !job.traceparent) return null;
  const parent = { traceparent: job.traceparent, tracestate: job.tracestate ?? null };
  if (target.type === 'https') {
    if (target.url === null) return null;
    // The host as the URL names it (the address dialled is in the attempt's record); every HTTPS attempt is a POST.
    // One object literal, no spreads: this runs for every traced attempt.
    return runtime.startAttempt(parent, 'client', {
      'server.address': hostOf(target.url),
      'http.request.method': 'POST',
      'svc.delivery.id': job.id,
      'svc.webhook.id': job.webhookId,
      'svc.attempt.number': job.attemptCount + 1,
    });
  }
  const common = { 'svc.delivery.id': job.id, 'svc.webhook.id': job.webhookId, 'svc.attempt.number': job.attemptCount + 1 };
  const host = target.broker === null ? null : deps.brokerHost(target.broker);
  return runtime.startAttempt(parent, 'producer', {
    ...(host === null ? {} : { 'server.address': host }),
    'messaging.system': MESSAGING_SYSTEM[target.type],
    'messaging.operation.type': 'send',
    // The destination as the target names it (a template's placeholders kept): one name for every event, as the
    // conventions ask of a span name; the message id is the delivery id, the broker's de-duplication key.
    'messaging.destination.name': destinationOf(target),
    'messaging.message.id': job.id,
    ...(target.type === 'rabbitmq' && target.routingKey !== null ? { 'messaging.rabbitmq.destination.routing_key': target.routingKey } : {}),
    ...common,
  });
}

/** A target URL's host as the URL names it, IPv6 without its brackets; remembered (a URL is parsed once, not per attempt). */
const hosts = new Map<string, string>();
function hostOf(url: string): string {
  let host = hosts.get(url);
  if (host === undefined) {
    host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
    // Bounded: a process that has seen many URLs (targets edited over months) starts over.
    if (hosts.size >= 1024) hosts.clear();
    hosts.set(url, host);
  }
  return host;
}

const MESSAGING_SYSTEM = { nats: 'nats', rabbitmq: 'rabbitmq', redis: 'redis' } as const;

const destinationOf = (target: TargetRow): string =>
  (target.type === 'nats' ? target.subject : target.type === 'rabbitmq' ? target.exchange : target.stream) ?? '';

const traceHeaders = (h: TraceHeaders): Record<string, string> => (h.tracestate === null ? { traceparent: h.traceparent } : { traceparent: h.traceparent, tracestate: h.tracestate });

/** `00-<trace id>-<span id>-<flags>`: the attempt span's own ids, as its log lines name them. */
const spanIds = (h: TraceHeaders): SpanIds => ({ traceId: h.traceparent.slice(3, 35), spanId: h.traceparent.slice(36, 52) });
