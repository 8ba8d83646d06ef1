import type { IncomingHttpHeaders } from 'node:http';
import { context, diag, DiagLogLevel, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Logger } from 'pino';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, NodeTracerProvider, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-node';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_SERVICE_NAME, ATTR_URL_SCHEME } from '@opentelemetry/semantic-conventions';
import { systemClock } from '../lib/clock.js';
import { startAttemptSpan, type AttemptSpanSource } from './attempt-spans.js';
import { otlpExporter } from './otlp-exporter.js';
import { protobufEncoding, type OtlpEncoding } from './otlp-encoding.js';
import { jsonEncoding } from './otlp-json.js';
import type { TracingSettings } from './settings.js';
import { EncodingSpanProcessor } from './span-batches.js';
import type { AttemptSpan, RequestSpan, TraceHeaders, TracingRuntime, WorkSpan } from './types.js';

/**
 * The OpenTelemetry SDK behind tracing.ts. Only ever loaded by its dynamic import(), when an endpoint is set: this
 * module and those only it imports (attempt-spans.ts, the encoding and the exporter) are svc's only ones that import
 * @opentelemetry/* at run time.
 */

/**
 * The configured sampler's decision for an attempt's span, as the SDK's samplers below decide it: `parent` is the
 * stored context's trace flags (a remote parent), or null when there is none. The parent-based samplers follow a
 * remote parent's sampled flag (their defaults for one: `sampler()` gives them no other) and ask their root sampler
 * only for a new trace. attempt-spans.test.ts holds the two functions to the same decisions; change them together.
 */
export function attemptSampling(settings: TracingSettings): AttemptSpanSource['sampled'] {
  const ratio = new TraceIdRatioBasedSampler(settings.ratio);
  const byRatio = (traceId: string) => ratio.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;
  const parentSampled = (parent: number) => (parent & TraceFlags.SAMPLED) !== 0;
  switch (settings.sampler) {
    case 'always_on':
      return () => true;
    case 'always_off':
      return () => false;
    case 'traceidratio':
      return byRatio;
    case 'parentbased_always_on':
      return (_, parent) => (parent === null ? true : parentSampled(parent));
    case 'parentbased_always_off':
      return (_, parent) => (parent === null ? false : parentSampled(parent));
    case 'parentbased_traceidratio':
      return (traceId, parent) => (parent === null ? byRatio(traceId) : parentSampled(parent));
  }
}

/** The SDK's sampler for svc's other spans (requests, a write's transaction). */
export function sampler(settings: TracingSettings): Sampler {
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

/** What a diag argument says in a log line: an error's name, message and code (and its cause's), else the value. */
function loggable(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error)) return value;
  const { code, cause } = value as Error & { code?: unknown; cause?: unknown };
  const because = cause !== undefined && depth < 3 ? { cause: loggable(cause, depth + 1) } : {};
  // A connection refused on every address of a name is an AggregateError with an empty message: its errors say why.
  const each = value instanceof AggregateError && depth < 3 ? { errors: value.errors.slice(0, 4).map((e) => loggable(e, depth + 1)) } : {};
  return { type: value.name, message: value.message, ...(code !== undefined ? { code } : {}), ...because, ...each };
}

const processor = <T>(encoding: OtlpEncoding<T>, settings: TracingSettings) => new EncodingSpanProcessor(encoding, otlpExporter(settings.url, encoding), settings.batches);

export async function createOtelRuntime(settings: TracingSettings, logger: Logger): Promise<TracingRuntime> {
  // The SDK reports a failed export through diag, which logs nowhere by default: a collector that is down shows in
  // svc's log instead of silently dropping spans.
  const log = logger.child({ component: 'tracing' });
  // An error among the arguments is logged as one (pino shows an Error nested in a list as `{}`).
  const warn = (message: string, args: unknown[]) => log.warn({ detail: args.map(loggable) }, message);
  diag.setLogger({ error: (m, ...a) => warn(m, a), warn: (m, ...a) => warn(m, a), info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);
  const resource = defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }));
  const spans = settings.protocol === 'http/json' ? processor(jsonEncoding, settings) : processor(protobufEncoding, settings);
  const provider = new NodeTracerProvider({ resource, sampler: sampler(settings), spanLimits: settings.limits, spanProcessors: [spans] });
  // The W3C trace-context propagator as the global one, and no context manager: svc passes its spans by hand
  // (types.ts RequestSpan), so no AsyncLocalStorage hooks every promise of the process.
  provider.register({ contextManager: null });
  const tracer = provider.getTracer('svc');
  // The attempts' spans: the same sampling, limits, resource and scope, ended into the same processor (attempt-spans.ts).
  // The tracer's own scope object: a request groups spans by resource and scope as the SDK's serializer does, by
  // identity, so attempts share their ScopeSpans with the SDK's spans.
  const scope = (tracer as unknown as { readonly instrumentationScope: InstrumentationScope }).instrumentationScope;
  const attempts: AttemptSpanSource = { sampled: attemptSampling(settings), limits: settings.limits, clock: systemClock, resource, scope, processor: spans };
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
      // HTTP client spans are named by the method (semantic conventions; the URL may carry secrets and is left out),
      // producer spans `send <destination>` (the target's template: one name for all its messages). The stored
      // context's sampled flag decides this span's sampling (the parent-based samplers), so a trace is kept or dropped
      // as a whole, however much later the attempt runs.
      if (kind === 'client') return startAttemptSpan(attempts, parent, 'POST', SpanKind.CLIENT, attributes);
      return startAttemptSpan(attempts, parent, `send ${attributes['messaging.destination.name'] ?? ''}`.trim(), SpanKind.PRODUCER, attributes);
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
