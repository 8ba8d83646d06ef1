import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startTracing, tracing, type Tracing } from '../../src/tracing/tracing.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { startOtlpCollector, type OtlpCollector } from '../helpers/otlp-collector.js';

/**
 * SPEC §15's stored trace context (migration 019): an event keeps the context of the transaction that wrote it, and
 * the feed serves it as `"traceparent"`, absent (not null) when the write was not traced. The test app checks every
 * answer against its documented schema, the feed's Event with its optional traceparent included.
 */

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;
const FEED_MEMBERS = ['id', 'topic', 'collection', 'recordId', 'occurredAt', 'payload'];

async function setUp(t: TestApp): Promise<{ write: (headers: Record<string, string>) => Promise<string>; feed: () => Promise<Array<Record<string, unknown>>> }> {
  await t.collection('notes', [{ name: 'title', type: 'text', required: false }]);
  const writer = { authorization: `Bearer ${await t.token(['records:write'])}` };
  const reader = { authorization: `Bearer ${await t.token(['events:read'])}` };
  return {
    async write(headers) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/notes/records', headers: { ...writer, ...headers }, payload: { data: { title: 'x' } } });
      expect(res.statusCode).toBe(201);
      return (res.json() as { id: string }).id;
    },
    async feed() {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/events', headers: reader });
      expect(res.statusCode).toBe(200);
      return (res.json() as { items: Array<Record<string, unknown>> }).items;
    },
  };
}

const storedTrace = (t: TestApp, recordId: string) =>
  t.ctx.database.db.selectFrom('events').select(['id', 'traceparent', 'tracestate']).where('record_id', '=', recordId).executeTakeFirstOrThrow();

describe.each(DIALECTS)('stored trace context (%s)', (dialect) => {
  let collector: OtlpCollector | null = null;
  let tracer: Tracing | null = null;
  let t: TestApp | null = null;

  afterEach(async () => {
    await t?.close();
    await tracer?.shutdown();
    await collector?.close();
    t = tracer = collector = null;
  });

  it('a traced write stores its transaction span\'s context with the event, and the feed event carries it', async () => {
    collector = await startOtlpCollector();
    tracer = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, pino({ level: 'silent' }));
    t = await createTestApp(dialect);
    const api = await setUp(t);
    const continued = await api.write({ traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`, tracestate: 'vendor=1' });
    const own = await api.write({});
    const batch = await t.app.inject({
      method: 'POST',
      url: '/api/v1/batch',
      headers: { authorization: `Bearer ${await t.token(['records:write'])}` },
      payload: { operations: [{ method: 'POST', collection: 'notes', data: { title: 'a' } }, { method: 'POST', collection: 'notes', data: { title: 'b' } }] },
    });
    expect(batch.statusCode).toBe(200);
    const batchIds = (batch.json() as { results: Array<{ record: { id: string } }> }).results.map((r) => r.record.id);

    const first = await storedTrace(t, continued);
    expect(first.tracestate).toBe('vendor=1');
    const second = await storedTrace(t, own);
    expect(second.tracestate).toBeNull();
    // A batch is one transaction: its events share one context.
    const batched = await Promise.all(batchIds.map((id) => storedTrace(t!, id)));
    expect(batched[0]!.traceparent).not.toBeNull();
    expect(batched[1]!.traceparent).toBe(batched[0]!.traceparent);

    const items = await api.feed();
    expect(items).toHaveLength(4);
    for (const e of [first, second, ...batched]) {
      const item = items.find((i) => i.id === e.id)!;
      expect(Object.keys(item)).toEqual([...FEED_MEMBERS, 'traceparent']);
      expect(item.traceparent).toBe(e.traceparent);
    }
    // The admin UI's event page (GET /admin/v1/events/{id}) shows the event as the feed does, traceparent included.
    const detail = await t.app.inject({ method: 'GET', url: `/admin/v1/events/${first.id}`, headers: t.admin.headers });
    expect(detail.statusCode).toBe(200);
    expect(detail.json().traceparent).toBe(first.traceparent);

    await tracer.shutdown();
    // The stored parent-id is the write's transaction span: what its deliveries' spans will hang from.
    const transactions = collector.spans.filter((s) => s.name === 'svc.transaction');
    for (const [e, recordId] of [[first, continued], [second, own], [batched[0]!, batchIds]] as const) {
      const [, traceId, spanId] = TRACEPARENT.exec(e.traceparent ?? '')!;
      expect(transactions.find((s) => s.spanId === spanId)).toMatchObject({ traceId, attributes: { 'svc.record.id': recordId } });
    }
    expect(TRACEPARENT.exec(first.traceparent!)![1]).toBe(TRACE_ID);
  });

  it('concurrent writes, which a group commit may put in one transaction, each store their own request\'s trace', async () => {
    collector = await startOtlpCollector();
    tracer = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, pino({ level: 'silent' }));
    t = await createTestApp(dialect);
    const api = await setUp(t);
    // Spans are passed by hand (tracing/types.ts): nothing but the request itself tells a write whose it is.
    const traceIds = Array.from({ length: 24 }, (_, i) => (i + 1).toString(16).padStart(32, 'a'));
    const ids = await Promise.all(traceIds.map((traceId) => api.write({ traceparent: `00-${traceId}-${CALLER_SPAN}-01` })));
    const stored = await Promise.all(ids.map((id) => storedTrace(t!, id)));
    await tracer.shutdown();
    const byId = new Map(collector.spans.map((s) => [s.spanId, s]));
    for (const [i, e] of stored.entries()) {
      const [, traceId, spanId] = TRACEPARENT.exec(e.traceparent ?? '')!;
      expect(traceId).toBe(traceIds[i]);
      // The stored parent-id is that write's transaction span, under that request's server span.
      const transaction = byId.get(spanId!)!;
      expect(transaction).toMatchObject({ name: 'svc.transaction', traceId: traceIds[i], attributes: { 'svc.record.id': ids[i] } });
      expect(byId.get(transaction.parentSpanId)).toMatchObject({ traceId: traceIds[i], parentSpanId: CALLER_SPAN });
    }
  });

  it('without OTEL_* variables nothing is stored and the feed event has no traceparent member, not even a caller\'s', async () => {
    expect(tracing()).toBeNull();
    t = await createTestApp(dialect);
    const api = await setUp(t);
    const id = await api.write({ traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`, tracestate: 'vendor=1' });
    expect(await storedTrace(t, id)).toMatchObject({ traceparent: null, tracestate: null });
    const [item] = await api.feed();
    expect(Object.keys(item!)).toEqual(FEED_MEMBERS);
  });
});
