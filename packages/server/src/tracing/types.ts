import type { IncomingHttpHeaders } from 'node:http';

/** The shapes tracing.ts and otel.ts share (apart, so the lazily loaded otel.ts and its loader import no cycle). */

/** A server span of one request, as the HTTP hooks hold it. */
export interface RequestSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Runs `fn` (and whatever it starts) with this span as the active one: the handler's writes are its children. */
  run<T>(fn: () => T): T;
  end(route: string | undefined, status: number): void;
}

/** A span context as W3C headers carry it. */
export interface TraceHeaders {
  readonly traceparent: string;
  readonly tracestate: string | null;
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
  /** The active span's context as headers, or null when there is no sampled span. */
  current(): TraceHeaders | null;
  shutdown(): Promise<void>;
}
