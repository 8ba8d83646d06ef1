import type { IncomingHttpHeaders } from 'node:http';

/** The shapes tracing.ts and otel.ts share (apart, so the lazily loaded otel.ts and its loader import no cycle). */

/** A server span of one request, as the HTTP hooks hold it. */
export interface RequestSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Runs `fn` (and whatever it starts) with this span as the active one: the handler's writes are its children. */
  run<T>(fn: () => T): T;
  /** Ends the span with the answer's status, or `aborted` when the client left before any answer was sent. */
  end(route: string | undefined, status: number | 'aborted'): void;
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
  /** An internal span around `fn`, a child of the active span; error status when `fn` throws. */
  inSpan<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** Adds to the active span's attribute lists (a batch writes several records in one transaction). */
  note(attributes: Readonly<Record<string, string>>): void;
  /** `fn`, to run later in the context active now (a group commit runs writes from another request's turn). */
  bind<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  /** The active span's context as headers, or null when there is no span. */
  current(): TraceHeaders | null;
  /** A span of one delivery attempt, a child of the context stored with its event (`parent`); started now. */
  startAttempt(parent: TraceHeaders, kind: 'client' | 'producer', attributes: Readonly<Record<string, string | number>>): AttemptSpan;
  shutdown(): Promise<void>;
}
