import type { IncomingHttpHeaders } from 'node:http';
import { context, createTraceState, diag, DiagLogLevel, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-node';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_SERVICE_NAME, ATTR_URL_SCHEME } from '@opentelemetry/semantic-conventions';
import { otlpExporter } from './otlp-exporter.js';
import { protobufEncoding, type OtlpEncoding } from './otlp-encoding.js';
import { jsonEncoding } from './otlp-json.js';
import type { TracingSettings } from './settings.js';
import { EncodingSpanProcessor } from './span-batches.js';
import type { AttemptSpan, RequestSpan, TraceHeaders, TracingRuntime, WorkSpan } from './types.js';

/**
 * The OpenTelemetry SDK behind tracing.ts. Only ever loaded by its dynamic import(), when an endpoint is set: this is
 * the one module of svc that imports @opentelemetry/* at run time.
 */

function sampler(settings: TracingSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.ratio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}

const hex2 = (n: number) => n.toString(16).padStart(2, '0');

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * A context whose span is the one a stored `traceparent` names (version 00, as svc stores it), remote; the root
 * context when it names none valid (a new trace then starts, as the propagator would).
 */
function storedContext(stored: TraceHeaders): Context {
  const m = TRACEPARENT.exec(stored.traceparent);
  if (m === null) return ROOT_CONTEXT;
  const traceId = m[1]!;
  const spanId = m[2]!;
  // The pattern has checked both are lowercase hex of the right length; all zeros is the one invalid value left
  // (what isSpanContextValid would test again with two more patterns, for every attempt).
  if (traceId === INVALID_TRACE_ID || spanId === INVALID_SPAN_ID) return ROOT_CONTEXT;
  const spanContext = {
    traceId,
    spanId,
    traceFlags: parseInt(m[3]!, 16),
    isRemote: true,
    ...(stored.tracestate === null ? {} : { traceState: createTraceState(stored.tracestate) }),
  };
  return trace.setSpanContext(ROOT_CONTEXT, spanContext);
}

const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_SPAN_ID = '0'.repeat(16);

const processor = <T>(encoding: OtlpEncoding<T>, settings: TracingSettings) => new EncodingSpanProcessor(encoding, otlpExporter(settings.url, encoding));

export async function createOtelRuntime(settings: TracingSettings, logger: Logger): Promise<TracingRuntime> {
  // The SDK reports a failed export through diag, which logs nowhere by default: a collector that is down shows in
  // svc's log instead of silently dropping spans.
  const log = logger.child({ component: 'tracing' });
  diag.setLogger(
    { error: (m, ...a) => log.warn({ detail: a }, m), warn: (m, ...a) => log.warn({ detail: a }, m), info: () => {}, debug: () => {}, verbose: () => {} },
    DiagLogLevel.WARN,
  );
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName })),
    sampler: sampler(settings),
    spanProcessors: [settings.protocol === 'http/json' ? processor(jsonEncoding, settings) : processor(protobufEncoding, settings)],
  });
  // The W3C trace-context propagator as the global one, and no context manager: svc passes its spans by hand
  // (types.ts RequestSpan), so no AsyncLocalStorage hooks every promise of the process.
  provider.register({ contextManager: null });
  const tracer = provider.getTracer('svc');
  // The context of a request's span, for its children.
  const requestContexts = new WeakMap<RequestSpan, Context>();

  const headersOf = (span: Span): TraceHeaders => {
    const sc = span.spanContext();
    const tracestate = sc.traceState?.serialize() ?? '';
    return { traceparent: `00-${sc.traceId}-${sc.spanId}-${hex2(sc.traceFlags & 0xff)}`, tracestate: tracestate === '' ? null : tracestate };
  };

  return {
    startRequest(method: string, headers: IncomingHttpHeaders, scheme: string): RequestSpan {
      const parent = propagation.extract(ROOT_CONTEXT, headers);
      const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_SCHEME]: scheme } }, parent);
      const { traceId, spanId } = span.spanContext();
      const request: RequestSpan = {
        traceId,
        spanId,
        end(route, status) {
          // A route template, never the raw path: `/api/v1/collections/:name/records/:id` is one name for all records.
          if (route !== undefined) span.updateName(`${method} ${route}`).setAttribute(ATTR_HTTP_ROUTE, route);
          // A client that left has no status code; the span says why it ended (not a server error: no error status).
          if (status === 'aborted') span.setAttribute(ATTR_ERROR_TYPE, 'aborted');
          else {
            span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
            if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end();
        },
      };
      requestContexts.set(request, trace.setSpan(parent, span));
      return request;
    },
    async inSpan(name, parent, fn) {
      const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, (parent && requestContexts.get(parent)) ?? ROOT_CONTEXT);
      // Attributes `note` gathers: a batch names every collection and record it wrote.
      const seen = new Map<string, string[]>();
      const work: WorkSpan = {
        headers: headersOf(span),
        note(attributes) {
          if (!span.isRecording()) return;
          for (const [key, value] of Object.entries(attributes)) {
            const values = seen.get(key) ?? [];
            if (!values.includes(value)) values.push(value);
            seen.set(key, values);
            span.setAttribute(key, values.length === 1 ? values[0]! : [...values]);
          }
        },
      };
      try {
        return await fn(work);
      } catch (err) {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
        throw err;
      } finally {
        span.end();
      }
    },
    startAttempt(parent, kind, attributes): AttemptSpan {
      // The stored context as the write's request would have sent it: its sampled flag decides this span's sampling
      // (the parent-based samplers), so a trace is kept or dropped as a whole, however much later the attempt runs.
      // Read by hand, not by the propagator: an attempt is a few hundred microseconds, and this runs for every one.
      const stored = storedContext(parent);
      // HTTP client spans are named by the method (semantic conventions; the URL may carry secrets and is left out),
      // producer spans `send <destination>` (the target's template: one name for all its messages).
      const name = kind === 'client' ? 'POST' : `send ${attributes['messaging.destination.name'] ?? ''}`.trim();
      // Every attribute known at the start given at once: the SDK checks a set of them in one pass.
      const span = tracer.startSpan(
        name,
        { kind: kind === 'client' ? SpanKind.CLIENT : SpanKind.PRODUCER, attributes },
        stored,
      );
      return {
        headers: headersOf(span),
        end(result) {
          // null (a broker's acceptance) leaves the status unset, as for any span that did not fail.
          if (result !== null && 'statusCode' in result) {
            span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.statusCode);
            // Anything but 2xx fails the delivery (decision.ts), so it is the attempt span's error too.
            if (result.statusCode < 200 || result.statusCode > 299) span.setAttribute(ATTR_ERROR_TYPE, String(result.statusCode)).setStatus({ code: SpanStatusCode.ERROR });
          } else if (result !== null) {
            span.setAttribute(ATTR_ERROR_TYPE, result.error).setStatus({ code: SpanStatusCode.ERROR, message: result.error });
          }
          span.end();
        },
      };
    },
    async shutdown() {
      try {
        await provider.shutdown();
      } finally {
        // Let a later start in the same process (tests) register its own provider.
        trace.disable();
        context.disable();
        propagation.disable();
        diag.disable();
      }
    },
  };
}
