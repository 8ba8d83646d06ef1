import type { AttributeValue, Attributes, HrTime } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { byResource, spanFlags, type OtlpEncoding } from './otlp-encoding.js';

// The JSON encoding (OTLP/JSON): ids as hex, times as decimal strings, enums as numbers.
const jsonTime = (t: HrTime): string => (BigInt(Math.trunc(t[0])) * 1_000_000_000n + BigInt(Math.trunc(t[1]))).toString();

function jsonValue(value: unknown): object {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (value instanceof Uint8Array) return { bytesValue: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(jsonValue) } };
  if (typeof value === 'object' && value !== null) return { kvlistValue: { values: Object.entries(value).map(([key, v]) => ({ key, value: jsonValue(v) })) } };
  return {};
}

const jsonAttributes = (attributes: Attributes | undefined) => Object.keys(attributes ?? {}).map((key) => ({ key, value: jsonValue((attributes as Record<string, AttributeValue | undefined>)[key]) }));

function jsonSpan(span: ReadableSpan): string {
  const ctx = span.spanContext();
  const parent = span.parentSpanContext;
  return JSON.stringify({
    traceId: ctx.traceId,
    spanId: ctx.spanId,
    parentSpanId: parent?.spanId ? parent.spanId : undefined,
    traceState: ctx.traceState?.serialize(),
    name: span.name,
    kind: span.kind == null ? 0 : span.kind + 1,
    startTimeUnixNano: jsonTime(span.startTime),
    endTimeUnixNano: jsonTime(span.endTime),
    attributes: jsonAttributes(span.attributes),
    droppedAttributesCount: span.droppedAttributesCount,
    events: span.events.map((e) => ({ attributes: jsonAttributes(e.attributes), name: e.name, timeUnixNano: jsonTime(e.time), droppedAttributesCount: e.droppedAttributesCount ?? 0 })),
    droppedEventsCount: span.droppedEventsCount,
    status: { code: span.status.code, message: span.status.message },
    links: span.links.map((l) => ({
      attributes: jsonAttributes(l.attributes),
      spanId: l.context.spanId,
      traceId: l.context.traceId,
      traceState: l.context.traceState?.serialize(),
      droppedAttributesCount: l.droppedAttributesCount ?? 0,
      flags: spanFlags(l.context.traceFlags, l.context.isRemote),
    })),
    droppedLinksCount: span.droppedLinksCount,
    flags: spanFlags(ctx.traceFlags, parent?.isRemote),
  });
}

function jsonScope(scope: InstrumentationScope & { attributes?: Attributes; droppedAttributesCount?: number }): object {
  const hasAttributes = scope.attributes !== undefined && Object.keys(scope.attributes).length > 0;
  return { name: scope.name, version: scope.version, ...(hasAttributes ? { attributes: jsonAttributes(scope.attributes), droppedAttributesCount: scope.droppedAttributesCount ?? 0 } : {}) };
}

export const jsonEncoding: OtlpEncoding<string[]> = {
  contentType: 'application/json',
  empty: () => [],
  append(spans, span) {
    spans.push(jsonSpan(span));
    return spans;
  },
  request(groups) {
    const resourceSpans: string[] = [];
    for (const [resource, scopes] of byResource(groups)) {
      const scopeSpans = scopes.map(({ scope, spans }) => {
        const head = JSON.stringify({ scope: jsonScope(scope) }).slice(0, -1);
        const tail = scope.schemaUrl === undefined ? '' : `,"schemaUrl":${JSON.stringify(scope.schemaUrl)}`;
        return `${head},"spans":[${spans.join(',')}]${tail}}`;
      });
      const head = JSON.stringify({ resource: { attributes: jsonAttributes(resource.attributes), droppedAttributesCount: 0, ...(resource.schemaUrl ? { schemaUrl: resource.schemaUrl } : {}) } }).slice(0, -1);
      const tail = resource.schemaUrl ? `,"schemaUrl":${JSON.stringify(resource.schemaUrl)}` : '';
      resourceSpans.push(`${head},"scopeSpans":[${scopeSpans.join(',')}]${tail}}`);
    }
    return Buffer.from(`{"resourceSpans":[${resourceSpans.join(',')}]}`, 'utf8');
  },
};
