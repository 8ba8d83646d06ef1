import { createTraceState, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SamplingDecision, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { startAttemptSpan, type AttemptSpanSource, type SpanLimits } from '../../src/tracing/attempt-spans.js';
import { protobufEncoding, type SpanGroup } from '../../src/tracing/otlp-encoding.js';
import type { ProtoWriter } from '../../src/tracing/proto-writer.js';
import { EncodingSpanProcessor } from '../../src/tracing/span-batches.js';
import { attemptSampling, sampler } from '../../src/tracing/otel.js';
import type { Sampler as SamplerName, TracingSettings } from '../../src/tracing/settings.js';
import type { TraceHeaders } from '../../src/tracing/types.js';

/**
 * An attempt's span is made without the SDK's tracer (tracing/attempt-spans.ts). The SDK's span for the same attempt,
 * made as svc made it before (its tracer, the stored context as a remote parent, the same attributes, status and
 * end), is the reference: the same sampling, the same recorded fields and, ids and times aside, the same OTLP bytes.
 */

const resource = resourceFromAttributes({ 'service.name': 'svc-test' });
const SAMPLERS: SamplerName[] = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];
const DEFAULT_LIMITS: SpanLimits = { attributeCountLimit: 128, attributeValueLengthLimit: Infinity };

const settingsOf = (name: SamplerName, ratio = 1, limits = DEFAULT_LIMITS): TracingSettings => ({
  url: 'http://127.0.0.1:1/v1/traces',
  protocol: 'http/protobuf',
  serviceName: 'svc-test',
  sampler: name,
  ratio,
  limits,
});

/** Ended spans, collected as the processor sees them. */
function collecting(): SpanProcessor & { ended: ReadableSpan[] } {
  const ended: ReadableSpan[] = [];
  return { ended, onStart() {}, onEnd: (s) => void ended.push(s), forceFlush: async () => {}, shutdown: async () => {} };
}

type Result = { statusCode: number } | { error: string } | null;

/** The attempt as svc made it through the SDK before (otel.ts up to the twenty-second session). */
function sdkAttempt(settings: TracingSettings, stored: TraceHeaders, name: string, kind: SpanKind, attributes: Record<string, string | number>, result: Result) {
  const processor = collecting();
  const provider = new BasicTracerProvider({ resource, sampler: sampler(settings), spanLimits: settings.limits, spanProcessors: [processor] });
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(stored.traceparent);
  const valid = m !== null && !/^0+$/.test(m[1]!) && !/^0+$/.test(m[2]!);
  const parent = valid
    ? trace.setSpanContext(ROOT_CONTEXT, {
        traceId: m[1]!,
        spanId: m[2]!,
        traceFlags: parseInt(m[3]!, 16),
        isRemote: true,
        ...(stored.tracestate === null ? {} : { traceState: createTraceState(stored.tracestate) }),
      })
    : ROOT_CONTEXT;
  const span = provider.getTracer('svc').startSpan(name, { kind, attributes: { ...attributes } }, parent);
  if (result !== null && 'statusCode' in result) {
    span.setAttribute('http.response.status_code', result.statusCode);
    if (result.statusCode < 200 || result.statusCode > 299) span.setAttribute('error.type', String(result.statusCode)).setStatus({ code: SpanStatusCode.ERROR });
  } else if (result !== null) {
    span.setAttribute('error.type', result.error).setStatus({ code: SpanStatusCode.ERROR, message: result.error });
  }
  span.end();
  return { context: span.spanContext(), ended: processor.ended };
}

function ourAttempt(settings: TracingSettings, stored: TraceHeaders, name: string, kind: SpanKind, attributes: Record<string, string | number>, result: Result) {
  const processor = collecting();
  const source: AttemptSpanSource = { sampled: attemptSampling(settings), limits: settings.limits, clock: systemClock, resource, scope: { name: 'svc' }, processor };
  const before = Date.now();
  const span = startAttemptSpan(source, stored, name, kind, { ...attributes });
  span.end(result);
  return { headers: span.headers, ended: processor.ended, before, after: Date.now() };
}

const ns = (t: readonly [number, number]) => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);

/** The SDK's span with our span's ids and times, to compare the rest byte for byte. */
const withIdsAndTimesOf = (theirs: ReadableSpan, ours: ReadableSpan): ReadableSpan => ({
  name: theirs.name,
  kind: theirs.kind,
  spanContext: () => ({ ...theirs.spanContext(), spanId: ours.spanContext().spanId, traceId: ours.spanContext().traceId }),
  parentSpanContext: theirs.parentSpanContext,
  startTime: ours.startTime,
  endTime: ours.endTime,
  status: theirs.status,
  attributes: theirs.attributes,
  links: theirs.links,
  events: theirs.events,
  duration: theirs.duration,
  ended: theirs.ended,
  resource: theirs.resource,
  instrumentationScope: theirs.instrumentationScope,
  droppedAttributesCount: theirs.droppedAttributesCount,
  droppedEventsCount: theirs.droppedEventsCount,
  droppedLinksCount: theirs.droppedLinksCount,
});

const encoded = (span: ReadableSpan) =>
  Buffer.from(protobufEncoding.request([{ resource: span.resource, scope: span.instrumentationScope, spans: protobufEncoding.append(protobufEncoding.empty(), span) }]));

const SAMPLED: TraceHeaders = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=a1b2,other=x' };
const UNSAMPLED: TraceHeaders = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00', tracestate: null };
const INVALID: TraceHeaders = { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01', tracestate: null };
const GARBLED: TraceHeaders = { traceparent: 'not a traceparent', tracestate: 'k=v' };

const HTTPS = { 'server.address': 'hooks.example.test', 'http.request.method': 'POST', 'svc.delivery.id': 'del_01J0000000000000000000000', 'svc.webhook.id': 'wh_1', 'svc.attempt.number': 3 };
const RESULTS: Result[] = [{ statusCode: 200 }, { statusCode: 503 }, { error: 'connect_refused' }, null];

describe('attempt spans without the SDK tracer', () => {
  it('decide sampling as the SDK samplers do, for every sampler, a sampled, unsampled, invalid or missing parent', () => {
    for (const name of SAMPLERS) {
      for (const ratio of [0, 0.5, 1]) {
        const settings = settingsOf(name, ratio);
        const ours = attemptSampling(settings);
        const theirs = sampler(settings);
        for (let i = 0; i < 200; i++) {
          const traceId = Array.from({ length: 32 }, () => '0123456789abcdef'[Math.floor(Math.random() * 16)]).join('');
          for (const flags of [TraceFlags.SAMPLED, TraceFlags.NONE, null]) {
            const parent: SpanContext | null = flags === null ? null : { traceId, spanId: '00f067aa0ba902b7', traceFlags: flags, isRemote: true };
            const context = parent === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent);
            const expected = theirs.shouldSample(context, traceId, 'POST', SpanKind.CLIENT, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED;
            expect(ours(traceId, flags), `${name} ${ratio} ${traceId} ${flags}`).toBe(expected);
          }
        }
      }
    }
  });

  it('record what the SDK span records: the same bytes, ids and times aside', () => {
    for (const stored of [SAMPLED, INVALID, GARBLED]) {
      for (const result of RESULTS) {
        for (const [name, kind, attributes] of [
          ['POST', SpanKind.CLIENT, HTTPS],
          ['send orders.{collection}', SpanKind.PRODUCER, { 'messaging.system': 'nats', 'messaging.destination.name': 'orders.{collection}', 'svc.attempt.number': 1 }],
        ] as const) {
          const settings = settingsOf('parentbased_always_on');
          const theirs = sdkAttempt(settings, stored, name, kind, attributes, result).ended;
          const ours = ourAttempt(settings, stored, name, kind, attributes, result);
          expect(theirs).toHaveLength(1);
          expect(ours.ended).toHaveLength(1);
          const [t, o] = [theirs[0]!, ours.ended[0]!];
          expect(encoded(o).equals(encoded(withIdsAndTimesOf(t, o))), `${stored.traceparent} ${JSON.stringify(result)} ${name}`).toBe(true);
          // A valid stored parent: the same trace and parent; none: a trace of its own.
          if (stored === SAMPLED) {
            expect(o.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
            expect(o.parentSpanContext).toMatchObject({ spanId: '00f067aa0ba902b7', isRemote: true });
            expect(ours.headers).toEqual({ traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-${o.spanContext().spanId}-01`, tracestate: 'vendor=a1b2,other=x' });
          } else {
            expect(o.parentSpanContext).toBeUndefined();
            expect(o.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
            expect(o.spanContext().traceId).not.toBe('0'.repeat(32));
            expect(ours.headers).toEqual({ traceparent: `00-${o.spanContext().traceId}-${o.spanContext().spanId}-01`, tracestate: null });
          }
          expect(o.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
          // The wall clock at the start; the end after it.
          expect(ns(o.startTime)).toBeGreaterThanOrEqual(BigInt(ours.before) * 1_000_000n);
          expect(ns(o.startTime)).toBeLessThanOrEqual(BigInt(ours.after) * 1_000_000n);
          expect(ns(o.endTime)).toBeGreaterThanOrEqual(ns(o.startTime));
          expect(ns(o.duration)).toBe(ns(o.endTime) - ns(o.startTime));
          expect(o.ended).toBe(true);
        }
      }
    }
  });

  it('apply the span limits as the SDK does: attributes past the count dropped and counted, strings cut', () => {
    for (const limits of [
      { attributeCountLimit: 3, attributeValueLengthLimit: Infinity },
      { attributeCountLimit: 0, attributeValueLengthLimit: Infinity },
      { attributeCountLimit: 128, attributeValueLengthLimit: 4 },
      { attributeCountLimit: 5, attributeValueLengthLimit: 6 },
    ]) {
      for (const result of RESULTS) {
        const settings = settingsOf('parentbased_always_on', 1, limits);
        const [t] = sdkAttempt(settings, SAMPLED, 'POST', SpanKind.CLIENT, HTTPS, result).ended;
        const [o] = ourAttempt(settings, SAMPLED, 'POST', SpanKind.CLIENT, HTTPS, result).ended;
        expect(o!.attributes).toEqual(t!.attributes);
        expect(o!.droppedAttributesCount).toBe(t!.droppedAttributesCount);
        expect(encoded(o!).equals(encoded(withIdsAndTimesOf(t!, o!)))).toBe(true);
      }
    }
  });

  it('send an unsampled context and record nothing when the sampler drops the span', () => {
    for (const [settings, stored] of [
      [settingsOf('parentbased_always_on'), UNSAMPLED],
      [settingsOf('always_off'), SAMPLED],
      [settingsOf('parentbased_always_off'), GARBLED],
    ] as const) {
      const theirs = sdkAttempt(settings, stored, 'POST', SpanKind.CLIENT, HTTPS, { statusCode: 200 });
      const ours = ourAttempt(settings, stored, 'POST', SpanKind.CLIENT, HTTPS, { statusCode: 200 });
      expect(theirs.ended).toHaveLength(0);
      expect(ours.ended).toHaveLength(0);
      const [, traceId, spanId, flags] = ours.headers.traceparent.split('-');
      expect(flags).toBe('00');
      expect(spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(spanId).not.toBe('00f067aa0ba902b7');
      if (stored !== GARBLED) expect(traceId).toBe(theirs.context.traceId);
      expect(ours.headers.tracestate).toBe(theirs.context.traceState?.serialize() ?? null);
    }
  });

  it('decide sampling through the stored context as the SDK did: odd flags, invalid and garbled parents, every sampler', () => {
    const stored: TraceHeaders[] = [
      SAMPLED,
      UNSAMPLED,
      INVALID,
      GARBLED,
      { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03', tracestate: null },
      { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-02', tracestate: null },
      { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff', tracestate: 'k=v' },
      { traceparent: '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', tracestate: null },
      { traceparent: '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: null },
      { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', tracestate: null },
    ];
    for (const name of SAMPLERS) {
      for (const ratio of [0, 0.5, 1]) {
        const settings = settingsOf(name, ratio);
        for (const parent of stored) {
          const theirs = sdkAttempt(settings, parent, 'POST', SpanKind.CLIENT, HTTPS, { statusCode: 200 });
          const ours = ourAttempt(settings, parent, 'POST', SpanKind.CLIENT, HTTPS, { statusCode: 200 });
          const what = `${name} ${ratio} ${parent.traceparent}`;
          const ourTrace = ours.headers.traceparent.slice(3, 35);
          // No valid parent: each side starts a trace with an id of its own, which a ratio of ½ decides by chance.
          if (ourTrace !== theirs.context.traceId && ratio === 0.5 && name.endsWith('traceidratio')) continue;
          expect(ours.ended.length, what).toBe(theirs.ended.length);
          expect(ours.headers.traceparent.slice(-2), what).toBe(theirs.context.traceFlags === 1 ? '01' : '00');
          // A valid parent's trace continues (sampled or not); an invalid one starts a trace of its own on both sides.
          expect(ourTrace === theirs.context.traceId, what).toBe(parent.traceparent.includes(theirs.context.traceId));
          expect(ours.ended[0]?.parentSpanContext?.spanId, what).toBe(theirs.ended[0]?.parentSpanContext?.spanId);
        }
      }
    }
  });

  it('share one ScopeSpans with the SDK spans of a batch: the request is what the SDK serializer makes of the same spans', async () => {
    const requests: Buffer[] = [];
    const processor = new EncodingSpanProcessor(protobufEncoding, {
      export(batch, done) {
        requests.push(Buffer.from(protobufEncoding.request(batch.groups as Array<SpanGroup<ProtoWriter>>)));
        done({ code: 0 });
      },
      shutdown: async () => {},
    });
    const ended: ReadableSpan[] = [];
    const both: SpanProcessor = { onStart() {}, onEnd: (s) => void (ended.push(s), processor.onEnd(s)), forceFlush: () => processor.forceFlush(), shutdown: () => processor.shutdown() };
    const provider = new BasicTracerProvider({ resource, spanProcessors: [both] });
    const tracer = provider.getTracer('svc');
    const scope = (tracer as unknown as { instrumentationScope: InstrumentationScope }).instrumentationScope;
    const source: AttemptSpanSource = { sampled: () => true, limits: DEFAULT_LIMITS, clock: systemClock, resource, scope, processor: both };
    tracer.startSpan('GET /readyz', { kind: SpanKind.SERVER }).end();
    startAttemptSpan(source, SAMPLED, 'POST', SpanKind.CLIENT, HTTPS).end({ statusCode: 204 });
    tracer.startSpan('svc.transaction').end();
    startAttemptSpan(source, SAMPLED, 'send orders', SpanKind.PRODUCER, { 'svc.attempt.number': 2 }).end({ error: 'timeout' });
    await processor.forceFlush();
    expect(ended).toHaveLength(4);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(ended)!))).toBe(true);
  });

  it('end once: a second end records nothing more', () => {
    const processor = collecting();
    const source: AttemptSpanSource = { sampled: () => true, limits: DEFAULT_LIMITS, clock: systemClock, resource, scope: { name: 'svc' }, processor };
    const span = startAttemptSpan(source, SAMPLED, 'POST', SpanKind.CLIENT, HTTPS);
    span.end({ statusCode: 200 });
    span.end({ error: 'shutdown' });
    expect(processor.ended).toHaveLength(1);
    expect(processor.ended[0]!.status.code).toBe(SpanStatusCode.UNSET);
  });
});
