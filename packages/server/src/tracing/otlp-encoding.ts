import type { Attributes, SpanContext } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { ProtoWriter } from './proto-writer.js';

/**
 * OTLP's ExportTraceServiceRequest, written a span at a time (span-batches.ts encodes each span when it ends, so the
 * span itself dies young). Both encodings give what the SDK's own serializers give for the same spans: the protobuf
 * byte for byte, the JSON value for value (otlp-json.ts; otlp-encoding.test.ts holds both against @opentelemetry/otlp-transformer).
 * A span's bytes are its `ScopeSpans.spans` entry, tag and length included, so a request is the groups' headers around
 * their spans' bytes laid end to end.
 */

export interface SpanGroup<T> {
  resource: Resource;
  scope: InstrumentationScope;
  /** The encoded spans of this resource and scope, in the order they ended. */
  spans: T;
}

export interface OtlpEncoding<T> {
  readonly contentType: string;
  /** An empty list of encoded spans. */
  empty(): T;
  /** Appends one ended span. */
  append(spans: T, span: ReadableSpan): T;
  /** The request body for groups of spans (grouped by resource, then by scope, as the SDK groups them). */
  request(groups: ReadonlyArray<SpanGroup<T>>): Uint8Array;
}

// Span flags (OTLP): the low byte is the W3C trace flags; these say whether the parent was remote.
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;
export const spanFlags = (traceFlags: number, isRemote: boolean | undefined): number => (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);

function writeValue(w: ProtoWriter, value: unknown): void {
  if (typeof value === 'string') {
    w.tag(1, 2);
    w.string(value);
  } else if (typeof value === 'boolean') {
    w.tag(2, 0);
    w.varint(value ? 1 : 0);
  } else if (typeof value === 'number') {
    // int64 when the number is an integer within its range; a double otherwise.
    if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
      w.tag(3, 0);
      w.varint(value);
    } else {
      w.tag(4, 1);
      w.double(value);
    }
  } else if (value instanceof Uint8Array) {
    w.tag(7, 2);
    w.varint(value.length);
    w.raw(value);
  } else if (Array.isArray(value)) {
    const array = w.begin(5);
    for (const item of value) {
      const at = w.begin(1);
      writeValue(w, item);
      w.end(at);
    }
    w.end(array);
  } else if (typeof value === 'object' && value !== null) {
    const list = w.begin(6);
    for (const [k, v] of Object.entries(value)) writeKeyValue(w, 1, k, v);
    w.end(list);
  }
  // Anything else (undefined, a function) is an AnyValue with nothing set.
}

/** A KeyValue as field `field`: an attribute, or an entry of a kvlist value. */
function writeKeyValue(w: ProtoWriter, field: number, key: string, value: unknown): void {
  const kv = w.begin(field);
  w.tag(1, 2);
  w.string(key);
  const at = w.begin(2);
  writeValue(w, value);
  w.end(at);
  w.end(kv);
}

function writeAttributes(w: ProtoWriter, attributes: Attributes | undefined, field: number): void {
  if (!attributes) return;
  for (const key of Object.keys(attributes)) writeKeyValue(w, field, key, attributes[key]);
}

/** trace_id, span_id and trace_state: fields 1 to 3 of a Span and of a Link alike. */
function writeContext(w: ProtoWriter, context: SpanContext): void {
  w.tag(1, 2);
  w.hexBytes(context.traceId);
  w.tag(2, 2);
  w.hexBytes(context.spanId);
  const state = context.traceState?.serialize();
  if (state) {
    w.tag(3, 2);
    w.string(state);
  }
}

/** One Span message as ScopeSpans' field 2 (opentelemetry/proto/trace/v1/trace.proto). */
function writeSpan(w: ProtoWriter, span: ReadableSpan): void {
  const at = w.begin(2);
  const ctx = span.spanContext();
  writeContext(w, ctx);
  const parent = span.parentSpanContext;
  if (parent?.spanId) {
    w.tag(4, 2);
    w.hexBytes(parent.spanId);
  }
  w.tag(5, 2);
  w.string(span.name);
  // The API's kinds start at 0 (internal); OTLP keeps 0 for unspecified.
  const kind = span.kind == null ? 0 : span.kind + 1;
  if (kind !== 0) {
    w.tag(6, 0);
    w.varint(kind);
  }
  w.tag(7, 1);
  w.time(span.startTime);
  w.tag(8, 1);
  w.time(span.endTime);
  writeAttributes(w, span.attributes, 9);
  w.tag(10, 0);
  w.varint(span.droppedAttributesCount);
  for (const event of span.events) {
    const e = w.begin(11);
    w.tag(1, 1);
    w.time(event.time);
    w.tag(2, 2);
    w.string(event.name);
    writeAttributes(w, event.attributes, 3);
    w.tag(4, 0);
    w.varint(event.droppedAttributesCount ?? 0);
    w.end(e);
  }
  w.tag(12, 0);
  w.varint(span.droppedEventsCount);
  for (const link of span.links) {
    const l = w.begin(13);
    writeContext(w, link.context);
    writeAttributes(w, link.attributes, 4);
    w.tag(5, 0);
    w.varint(link.droppedAttributesCount ?? 0);
    w.tag(6, 5);
    w.fixed32(spanFlags(link.context.traceFlags, link.context.isRemote));
    w.end(l);
  }
  w.tag(14, 0);
  w.varint(span.droppedLinksCount);
  const status = w.begin(15);
  if (span.status.message) {
    w.tag(2, 2);
    w.string(span.status.message);
  }
  w.tag(3, 0);
  w.varint(span.status.code);
  w.end(status);
  w.tag(16, 5);
  w.fixed32(spanFlags(ctx.traceFlags, parent?.isRemote));
  w.end(at);
}

function writeScope(w: ProtoWriter, scope: InstrumentationScope & { attributes?: Attributes; droppedAttributesCount?: number }): void {
  const at = w.begin(1);
  w.tag(1, 2);
  w.string(scope.name);
  if (scope.version) {
    w.tag(2, 2);
    w.string(scope.version);
  }
  writeAttributes(w, scope.attributes, 3);
  if (scope.droppedAttributesCount) {
    w.tag(4, 0);
    w.varint(scope.droppedAttributesCount);
  }
  w.end(at);
}

export const protobufEncoding: OtlpEncoding<ProtoWriter> = {
  contentType: 'application/x-protobuf',
  empty: () => new ProtoWriter(),
  append(spans, span) {
    writeSpan(spans, span);
    return spans;
  },
  request(groups) {
    const w = new ProtoWriter(groups.reduce((n, g) => n + g.spans.pos, 0) + 1024);
    for (const [resource, scopes] of byResource(groups)) {
      const rs = w.begin(1);
      const r = w.begin(1);
      writeAttributes(w, resource.attributes, 1);
      w.tag(2, 0);
      w.varint(0);
      w.end(r);
      for (const { scope, spans } of scopes) {
        const ss = w.begin(2);
        writeScope(w, scope);
        w.raw(spans.bytes());
        if (scope.schemaUrl) {
          w.tag(3, 2);
          w.string(scope.schemaUrl);
        }
        w.end(ss);
      }
      if (resource.schemaUrl) {
        w.tag(3, 2);
        w.string(resource.schemaUrl);
      }
      w.end(rs);
    }
    return w.bytes();
  },
};

export function byResource<T>(groups: ReadonlyArray<SpanGroup<T>>): Map<Resource, Array<SpanGroup<T>>> {
  const out = new Map<Resource, Array<SpanGroup<T>>>();
  for (const g of groups) {
    const list = out.get(g.resource);
    if (list) list.push(g);
    else out.set(g.resource, [g]);
  }
  return out;
}
