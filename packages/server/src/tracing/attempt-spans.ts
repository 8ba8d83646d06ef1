import { createTraceState, SpanKind, SpanStatusCode, TraceFlags, type Attributes, type HrTime, type SpanContext, type SpanStatus, type TraceState } from '@opentelemetry/api';
import { addHrTimes, hrTimeDuration, millisToHrTime, type InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';
import type { Clock } from '../lib/clock.js';
import type { AttemptSpan, TraceHeaders } from './types.js';

/**
 * Delivery attempts' spans, made without the SDK's tracer. An attempt is a few hundred microseconds of a worker's CPU,
 * and the SDK's span around it cost ~50 µs more on W4T's drain (bench/README, twenty-second and twenty-third
 * sessions): a context and a non-recording span to carry the stored parent, two copies of the attributes, the tracer's
 * span metrics' attribute objects and closure, and a span object of twenty-odd fields whose times are arrays. An
 * attempt's span has one parent (the stored context), no events and no links, and its attributes are svc's own; so
 * here it is one object that the span processor encodes as it ends (span-batches.ts), with what the SDK would have
 * decided and recorded for it: the configured sampler's decision, the span limits, the tracer's resource and scope,
 * the same start (the wall clock) and end (start plus the monotonic clock's duration). `attempt-spans.test.ts` holds
 * that the two encode alike.
 */

export interface SpanLimits {
  /** Attributes beyond this many are dropped and counted (OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT; 128 by default). */
  readonly attributeCountLimit: number;
  /** Longer string values are cut to this many characters (OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT; none by default). */
  readonly attributeValueLengthLimit: number;
}

export interface AttemptSpanSource {
  /**
   * Whether a span of this trace is sampled: `parent` is the stored context's trace flags, or null when it named no
   * valid span (the span then starts a trace of its own).
   */
  readonly sampled: (traceId: string, parent: number | null) => boolean;
  readonly limits: SpanLimits;
  /** The wall clock a span's start is read from (lib/clock.ts). */
  readonly clock: Clock;
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
  readonly processor: SpanProcessor;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_SPAN_ID = '0'.repeat(16);

const hex8 = () => ((Math.random() * 0x1_0000_0000) >>> 0).toString(16).padStart(8, '0');

/** A random id of `words` × 4 bytes as lowercase hex, never all zeros (an invalid id). */
function randomId(words: 2 | 4): string {
  for (;;) {
    const id = words === 2 ? hex8() + hex8() : hex8() + hex8() + hex8() + hex8();
    if (id !== INVALID_SPAN_ID && id !== INVALID_TRACE_ID) return id;
  }
}

const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });
const NO_TIME: HrTime = [0, 0];

/** What an attempt sends: its span's context as W3C headers (`tracestate` only when there is one). */
function headersOf(traceId: string, spanId: string, sampled: boolean, traceState: TraceState | undefined): TraceHeaders {
  const state = traceState?.serialize() ?? '';
  return { traceparent: `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`, tracestate: state === '' ? null : state };
}

/** A span that is not recorded: its context still goes to the receiver, flagged not sampled (the SDK's non-recording span). */
class UnsampledAttempt implements AttemptSpan {
  constructor(readonly headers: TraceHeaders) {}
  end(): void {}
}

/** One recorded attempt span: what the processor reads of a ReadableSpan, and nothing else kept. */
class RecordedAttempt implements AttemptSpan, ReadableSpan {
  readonly headers: TraceHeaders;
  readonly parentSpanContext: SpanContext | undefined;
  readonly startTime: HrTime;
  endTime: HrTime = NO_TIME;
  status: SpanStatus = UNSET;
  readonly attributes: Attributes = {};
  droppedAttributesCount = 0;
  readonly links = [];
  readonly events = [];
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  private readonly context: SpanContext;
  private readonly startedAt: number;
  private count = 0;

  constructor(
    private readonly source: AttemptSpanSource,
    readonly name: string,
    readonly kind: SpanKind,
    traceId: string,
    parent: SpanContext | undefined,
    traceState: TraceState | undefined,
    attributes: Readonly<Record<string, string | number>>,
  ) {
    const spanId = randomId(2);
    this.context = { traceId, spanId, traceFlags: TraceFlags.SAMPLED, traceState };
    this.parentSpanContext = parent;
    this.headers = headersOf(traceId, spanId, true, traceState);
    // As the SDK's span: the start from the wall clock, the end from it plus the monotonic clock's duration.
    this.startTime = millisToHrTime(source.clock.now());
    this.startedAt = performance.now();
    for (const key in attributes) this.set(key, attributes[key]!);
  }

  get resource(): Resource {
    return this.source.resource;
  }

  get instrumentationScope(): InstrumentationScope {
    return this.source.scope;
  }

  get ended(): boolean {
    return this.endTime !== NO_TIME;
  }

  /** [-1, -1] until the span ends, as the SDK's span answers. */
  get duration(): HrTime {
    return this.ended ? hrTimeDuration(this.startTime, this.endTime) : [-1, -1];
  }

  spanContext(): SpanContext {
    return this.context;
  }

  /** The SDK span's setAttribute for svc's own values: the count limit, then strings cut to the length limit. */
  private set(key: string, value: string | number): void {
    const { attributeCountLimit, attributeValueLengthLimit } = this.source.limits;
    const isNew = !Object.prototype.hasOwnProperty.call(this.attributes, key);
    if (isNew && this.count >= attributeCountLimit) {
      this.droppedAttributesCount++;
      return;
    }
    this.attributes[key] = typeof value === 'string' && value.length > attributeValueLengthLimit ? value.slice(0, attributeValueLengthLimit) : value;
    if (isNew) this.count++;
  }

  end(result: { statusCode: number } | { error: string } | null): void {
    if (this.ended) return;
    // null (a broker's acceptance) leaves the status unset, as for any span that did not fail.
    if (result !== null && 'statusCode' in result) {
      this.set(ATTR_HTTP_RESPONSE_STATUS_CODE, result.statusCode);
      // Anything but 2xx fails the delivery (decision.ts), so it is the attempt span's error too.
      if (result.statusCode < 200 || result.statusCode > 299) {
        this.set(ATTR_ERROR_TYPE, String(result.statusCode));
        this.status = { code: SpanStatusCode.ERROR };
      }
    } else if (result !== null) {
      this.set(ATTR_ERROR_TYPE, result.error);
      this.status = { code: SpanStatusCode.ERROR, message: result.error };
    }
    // The SDK's end: the start plus the monotonic clock's duration.
    this.endTime = addHrTimes(this.startTime, millisToHrTime(performance.now() - this.startedAt));
    this.source.processor.onEnd(this);
  }
}

/** Parsed once per distinct `tracestate` text (a process sees few: most writes carry none). */
const traceStates = new Map<string, TraceState>();
function traceStateOf(text: string | null): TraceState | undefined {
  if (text === null) return undefined;
  let state = traceStates.get(text);
  if (state === undefined) {
    if (traceStates.size >= 256) traceStates.clear();
    state = createTraceState(text);
    traceStates.set(text, state);
  }
  return state;
}

/**
 * A span of one attempt, a child of the stored context (`00-<trace>-<span>-<flags>`, as svc stores it). A stored
 * value that names no valid span starts a new trace, as the propagator and the SDK would.
 */
export function startAttemptSpan(
  source: AttemptSpanSource,
  stored: TraceHeaders,
  name: string,
  kind: SpanKind,
  attributes: Readonly<Record<string, string | number>>,
): AttemptSpan {
  const m = TRACEPARENT.exec(stored.traceparent);
  const valid = m !== null && m[1] !== INVALID_TRACE_ID && m[2] !== INVALID_SPAN_ID;
  const traceId = valid ? m[1]! : randomId(4);
  const traceState = valid ? traceStateOf(stored.tracestate) : undefined;
  // The stored parent is remote: the write's process recorded it, this one only read it.
  const parent: SpanContext | undefined = valid ? { traceId, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true, traceState } : undefined;
  if (!source.sampled(traceId, parent === undefined ? null : parent.traceFlags)) {
    return new UnsampledAttempt(headersOf(traceId, randomId(2), false, traceState));
  }
  return new RecordedAttempt(source, name, kind, traceId, parent, traceState, attributes);
}
