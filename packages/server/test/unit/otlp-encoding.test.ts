import { createTraceState, diag, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { protobufEncoding, type OtlpEncoding, type SpanGroup } from '../../src/tracing/otlp-encoding.js';
import { jsonEncoding } from '../../src/tracing/otlp-json.js';
import { EncodingSpanProcessor, type BatchExporter, type EncodedBatch } from '../../src/tracing/span-batches.js';
import { decodeTraceRequest } from '../helpers/otlp-collector.js';

/**
 * svc encodes each span when it ends (tracing/otlp-encoding.ts); the SDK's own serializers are the reference: the same
 * spans must give the same protobuf bytes and the same JSON value.
 */

const resource = resourceFromAttributes({ 'service.name': 'svc-test', 'host.arch': 'amd64', 'process.pid': 4242 });

function endedSpans(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer('svc', '1.2.3');
  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: 1,
    isRemote: true,
    traceState: createTraceState('vendor=a1b2,other=x'),
  });
  const values: Attributes = {
    'server.address': '127.0.0.1',
    'svc.attempt.number': 3,
    negative: -17,
    big: 2 ** 40,
    ratio: 0.25,
    yes: true,
    'unicode.text': 'größe — 日本語 🚀',
    'long.text': 'x'.repeat(300),
    'huge.text': 'y'.repeat(20_000),
    names: ['a', 'b', 'ç'],
    numbers: [1, 2.5, -3],
    flags: [true, false],
  };
  const kinds = [SpanKind.INTERNAL, SpanKind.SERVER, SpanKind.CLIENT, SpanKind.PRODUCER, SpanKind.CONSUMER];
  for (let i = 0; i < 140; i++) {
    const span = tracer.startSpan(i % 2 === 0 ? 'POST' : 'send wh.{collection}', { kind: kinds[i % kinds.length], attributes: i % 3 === 0 ? values : { 'svc.delivery.id': `del_${i}` } }, i % 4 === 0 ? ROOT_CONTEXT : remote);
    if (i % 5 === 0) span.recordException(Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' }));
    if (i % 7 === 0) span.addLink({ context: { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1, isRemote: true, traceState: createTraceState('k=v') }, attributes: { why: 'replay' } });
    if (i % 6 === 0) span.setStatus({ code: SpanStatusCode.ERROR, message: 'timeout' });
    else if (i % 6 === 1) span.setStatus({ code: SpanStatusCode.OK });
    span.end();
  }
  return memory.getFinishedSpans();
}

function encode<T>(encoding: OtlpEncoding<T>, spans: ReadableSpan[]): Uint8Array {
  let encoded = encoding.empty();
  for (const s of spans) encoded = encoding.append(encoded, s);
  const group: SpanGroup<T> = { resource: spans[0]!.resource, scope: spans[0]!.instrumentationScope, spans: encoded };
  return encoding.request([group]);
}

describe('OTLP encoding, a span at a time', () => {
  const spans = endedSpans();

  it('protobuf: the same bytes as the SDK serializer (140 spans: every kind, events, links, statuses, long and non-ASCII strings)', () => {
    const ours = Buffer.from(encode(protobufEncoding, spans));
    const theirs = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);
    expect(ours.length).toBeGreaterThan(30_000);
    expect(ours.equals(theirs)).toBe(true);
  });

  it('protobuf: one span alone, and the decoder of the test collector reads it back', () => {
    const ours = Buffer.from(encode(protobufEncoding, [spans[3]!]));
    expect(ours.equals(Buffer.from(ProtobufTraceSerializer.serializeRequest([spans[3]!])!))).toBe(true);
    const [decoded] = decodeTraceRequest(ours);
    expect(decoded).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', parentSpanId: '00f067aa0ba902b7', name: 'send wh.{collection}', serviceName: 'svc-test' });
    expect(decoded!.attributes).toMatchObject({ 'svc.attempt.number': 3, negative: -17, big: 2 ** 40, ratio: 0.25, yes: true, 'unicode.text': 'größe — 日本語 🚀', names: ['a', 'b', 'ç'] });
    // A request cut short fails the collector's decoding instead of passing as fewer spans.
    expect(() => decodeTraceRequest(ours.subarray(0, ours.length - 3))).toThrow(/truncated/);
  });

  it('JSON: the same value as the SDK serializer', () => {
    const ours = JSON.parse(Buffer.from(encode(jsonEncoding, spans)).toString('utf8')) as unknown;
    const theirs = JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString('utf8')) as unknown;
    expect(ours).toEqual(theirs);
  });

  it('spans of two resources and two scopes: grouped as the SDK groups them', () => {
    const other = resourceFromAttributes({ 'service.name': 'other' });
    const mixed: ReadableSpan[] = [spans[0]!, Object.create(spans[1]!, { resource: { value: other } }), Object.create(spans[2]!, { instrumentationScope: { value: { name: 'second' } } })];
    const groups = [
      { resource: mixed[0]!.resource, scope: mixed[0]!.instrumentationScope, spans: protobufEncoding.append(protobufEncoding.empty(), mixed[0]!) },
      { resource: other, scope: mixed[1]!.instrumentationScope, spans: protobufEncoding.append(protobufEncoding.empty(), mixed[1]!) },
      { resource: mixed[2]!.resource, scope: mixed[2]!.instrumentationScope, spans: protobufEncoding.append(protobufEncoding.empty(), mixed[2]!) },
    ];
    const ours = Buffer.from(protobufEncoding.request(groups));
    expect(ours.equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(mixed)!))).toBe(true);
  });
});

/** An exporter that keeps what it is given and answers when the test says so. */
function heldExporter() {
  const calls: Array<{ batch: EncodedBatch<string[]>; done: (r: ExportResult) => void }> = [];
  const exporter: BatchExporter<string[]> = {
    export: (batch, done) => void calls.push({ batch, done }),
    shutdown: vi.fn(async () => {}),
  };
  const answer = (i: number, code = ExportResultCode.SUCCESS) => calls[i]!.done({ code });
  return { calls, exporter, answer };
}

describe('EncodingSpanProcessor', () => {
  const spans = endedSpans();
  const limits = { maxBatch: 10, maxQueued: 25, delayMs: 5000, exportTimeoutMs: 30_000 };
  const spanIds = (b: EncodedBatch<string[]>) => b.groups.flatMap((g) => g.spans.map((s) => (JSON.parse(s) as { spanId: string }).spanId));
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('a full batch goes at once, one export at a time, each span in the order it ended', async () => {
    const { calls, exporter, answer } = heldExporter();
    const p = new EncodingSpanProcessor(jsonEncoding, exporter, limits);
    for (const s of spans.slice(0, 23)) p.onEnd(s);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.batch.count).toBe(10);
    answer(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(2);
    answer(1);
    await vi.advanceTimersByTimeAsync(0);
    // Three left: they wait for the delay.
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(3);
    expect(calls.map((c) => c.batch.count)).toEqual([10, 10, 3]);
    expect(calls.flatMap((c) => spanIds(c.batch))).toEqual(spans.slice(0, 23).map((s) => s.spanContext().spanId));
  });

  it('past the queue limit spans are dropped until an export frees room (a batch being exported is out of the queue)', async () => {
    const { calls, exporter, answer } = heldExporter();
    const warn = vi.spyOn(diag, 'warn');
    const p = new EncodingSpanProcessor(jsonEncoding, exporter, limits);
    for (const s of spans.slice(0, 40)) p.onEnd(s);
    // The first ten went to the exporter; 25 more wait (10, 10 and 5), the last 5 were dropped.
    expect(calls).toHaveLength(1);
    for (let i = 0; i < 3; i++) {
      answer(i);
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(calls.map((c) => c.batch.count)).toEqual([10, 10, 10]);
    for (const s of spans.slice(40, 42)) p.onEnd(s);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^Dropped 5 spans/));
    await vi.advanceTimersByTimeAsync(5000);
    expect(calls.map((c) => c.batch.count)).toEqual([10, 10, 10, 7]);
    expect(spanIds(calls[3]!.batch)).toEqual([...spans.slice(30, 35), ...spans.slice(40, 42)].map((s) => s.spanContext().spanId));
    warn.mockRestore();
  });

  it('spans that were not sampled are not exported', async () => {
    const { calls, exporter } = heldExporter();
    const p = new EncodingSpanProcessor(jsonEncoding, exporter, limits);
    const unsampled: ReadableSpan = Object.create(spans[0]!, { spanContext: { value: () => ({ ...spans[0]!.spanContext(), traceFlags: 0 }) } });
    p.onEnd(unsampled);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toHaveLength(0);
  });

  it('forceFlush exports every waiting span; shutdown flushes, shuts the exporter and takes no more', async () => {
    const { calls, exporter, answer } = heldExporter();
    const p = new EncodingSpanProcessor(jsonEncoding, exporter, limits);
    for (const s of spans.slice(0, 14)) p.onEnd(s);
    const flushed = p.forceFlush();
    answer(0);
    await vi.advanceTimersByTimeAsync(0);
    answer(1);
    await flushed;
    expect(calls.map((c) => c.batch.count)).toEqual([10, 4]);
    p.onEnd(spans[20]!);
    const stopped = p.shutdown();
    await vi.advanceTimersByTimeAsync(0);
    answer(2);
    await stopped;
    expect(exporter.shutdown).toHaveBeenCalledOnce();
    p.onEnd(spans[21]!);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toHaveLength(3);
  });

  it('a failed, timed-out or throwing export is given up and the next batch still goes', async () => {
    const { calls, exporter, answer } = heldExporter();
    const p = new EncodingSpanProcessor(jsonEncoding, exporter, { ...limits, exportTimeoutMs: 1000 });
    for (const s of spans.slice(0, 30)) p.onEnd(s);
    answer(0, ExportResultCode.FAILED);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(2);
    // The second export never answers: after its timeout the third goes.
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.map((c) => c.batch.count)).toEqual([10, 10, 10]);
    answer(2);
    // An exporter that throws: the batch is given up at once, no timer left behind.
    const throwing = new EncodingSpanProcessor(jsonEncoding, { export: () => { throw new Error('boom'); }, shutdown: async () => {} }, limits);
    for (const s of spans.slice(0, 10)) throwing.onEnd(s);
    await vi.advanceTimersByTimeAsync(0);
    await throwing.shutdown();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('forceFlush under a steady flow of spans waits only for the spans that had ended when it was called', async () => {
    const { calls, exporter, answer } = heldExporter();
    const p = new EncodingSpanProcessor(jsonEncoding, exporter, limits);
    for (const s of spans.slice(0, 25)) p.onEnd(s);
    let flushed = false;
    void p.forceFlush().then(() => (flushed = true));
    // Everything waiting went at once: the batch under way, then 10 and 5 together.
    expect(calls.map((c) => c.batch.count)).toEqual([10, 10, 5]);
    for (const s of spans.slice(25, 60)) p.onEnd(s);
    for (const i of [0, 1, 2]) answer(i);
    await vi.advanceTimersByTimeAsync(0);
    expect(flushed).toBe(true);
  });

  it('a shutdown while exports hang takes one export timeout, not one per batch', async () => {
    const { calls, exporter } = heldExporter();
    const p = new EncodingSpanProcessor(jsonEncoding, exporter, { ...limits, maxQueued: 100, exportTimeoutMs: 1000 });
    for (const s of spans.slice(0, 45)) p.onEnd(s);
    let stopped = false;
    void p.shutdown().then(() => (stopped = true));
    expect(calls).toHaveLength(5);
    await vi.advanceTimersByTimeAsync(1000);
    expect(stopped).toBe(true);
    expect(exporter.shutdown).toHaveBeenCalledOnce();
  });
});
