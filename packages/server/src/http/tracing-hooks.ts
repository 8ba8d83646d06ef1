import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { tracing, type RequestSpan } from '../tracing/tracing.js';

/**
 * A server span for every request (SPEC §15), by a hook pair rather than the auto-instrumentation packages: those
 * patch `http` and Fastify at load, which a process without tracing must not pay for. With tracing off nothing is
 * registered here at all.
 */

const SPAN = Symbol('svc.requestSpan');
type Traced = FastifyRequest & { [SPAN]?: RequestSpan };

/** The server span of a request, the parent of its writes' spans; null when tracing is off. */
export const requestSpan = (request: FastifyRequest): RequestSpan | null => (request as Traced)[SPAN] ?? null;

export function registerTracingHooks(app: FastifyInstance): void {
  const runtime = tracing();
  if (runtime === null) return;
  app.addHook('onRequest', (request, _reply, done) => {
    // An incoming traceparent/tracestate continues the caller's trace; the span ends in onResponse.
    const span = runtime.startRequest(request.method, request.headers, request.protocol);
    (request as Traced)[SPAN] = span;
    // Every later line of this request (its 'request' line included) names the trace, beside the request id: on
    // Fastify's logger of this request itself, cheaper than a child of it.
    // (app.ts gives Fastify svc's pino logger, whose per-request children these are.)
    (request.log as unknown as Logger).setBindings({ traceId: span.traceId, spanId: span.spanId });
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = (request as Traced)[SPAN];
    if (span) {
      (request as Traced)[SPAN] = undefined;
      span.end(request.routeOptions.url, reply.statusCode);
    }
    done();
  });
  // A client that leaves before the answer (a long-poll given up, a stream closed) gets no onResponse: without this
  // its span would never end, never be exported, and stay in memory.
  app.addHook('onRequestAbort', (request, done) => {
    const span = (request as Traced)[SPAN];
    if (span) {
      (request as Traced)[SPAN] = undefined;
      span.end(request.routeOptions.url, 'aborted');
    }
    done();
  });
}
