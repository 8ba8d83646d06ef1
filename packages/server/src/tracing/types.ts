import type { IncomingHttpHeaders } from 'node:http';

/** The shapes tracing.ts and otel.ts share (apart, so the lazily loaded otel.ts and its loader import no cycle). */

/**
 * A server span of one request, as the HTTP hooks hold it. Spans are passed by hand, never through a context
 * manager: on Node 20 an AsyncLocalStorage puts a hook on every promise the process makes, which cost W2 a third of
 * its throughput with tracing on, sampled or not (bench/README, W2T).
 */
export interface RequestSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Ends the span with the answer's status, or `aborted` when the client left before any answer was sent. */
  end(route: string | undefined, status: number | 'aborted'): void;
}

/** An internal span of svc's own work (a write's transaction), as the work holds it. */
export interface WorkSpan {
  /** Adds to the span's attribute lists (a batch writes several records in one transaction). */
  note(attributes: Readonly<Record<string, string>>): void;
  /** The span's context as headers (a span tracing did not sample has one too, flagged so). */
  readonly headers: TraceHeaders;
}

/** A span context as W3C headers carry it. */
export interface TraceHeaders {
  readonly traceparent: string;
  readonly tracestate: string | null;
}

/** A client (HTTPS) or producer (broker) span of one delivery attempt. */
export interface AttemptSpan {
  /** What the attempt sends: the attempt span's own context, so a receiver continues the trace under it. */
  readonly headers: TraceHeaders;
  /**
   * Ends the span with the HTTP answer's status (error status when not 2xx), a failure's code (error status), or
   * null: a broker's acceptance.
   */
  end(result: { statusCode: number } | { error: string } | null): void;
}

/** What ./otel.js provides once loaded. */
export interface TracingRuntime {
  startRequest(method: string, headers: IncomingHttpHeaders, scheme: string): RequestSpan;
  /**
   * An internal span around `fn`, a child of `parent` (a request's span; none: a root span), given to `fn`; error
   * status when `fn` throws.
   */
  inSpan<T>(name: string, parent: RequestSpan | null, fn: (span: WorkSpan) => Promise<T>): Promise<T>;
  /** A span of one delivery attempt, a child of the context stored with its event (`parent`); started now. */
  startAttempt(parent: TraceHeaders, kind: 'client' | 'producer', attributes: Readonly<Record<string, string | number>>): AttemptSpan;
  shutdown(): Promise<void>;
}
