import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTracing, tracing, type Tracing } from '../../src/tracing/tracing.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { startOtlpCollector, type CollectedSpan, type OtlpCollector } from '../helpers/otlp-collector.js';
import { exited, spawnSvc } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §15's one trace from the write to the receiver: the write's context stored with its event (migration 019),
 * served in the feed, and every delivery attempt a client span of that trace whose own context the receiver gets.
 */

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

interface Written {
  recordId: string;
  event: { id: string; traceparent: string | null; tracestate: string | null };
}

async function write(rig: DeliveryRig, headers: Record<string, string>): Promise<Written> {
  const res = await rig.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: { ...rig.auth, ...headers }, payload: { data: { title: 'traced' } } });
  expect(res.statusCode).toBe(201);
  const recordId = (res.json() as { id: string }).id;
  const event = await rig.ctx.database.db.selectFrom('events').select(['id', 'traceparent', 'tracestate']).where('record_id', '=', recordId).executeTakeFirstOrThrow();
  return { recordId, event };
}

const delivered = (rig: DeliveryRig, count: number, timeoutMs?: number) =>
  waitFor(
    async () => {
      const res = await rig.admin('GET', '/admin/v1/deliveries?state=delivered');
      const items = (res.json() as { items: Array<{ id: string }> }).items;
      return items.length >= count ? items : null;
    },
    `${count} delivered jobs`,
    timeoutMs,
  );

describe.each(DIALECTS)('tracing of deliveries (%s)', (dialect) => {
  let collector: OtlpCollector;
  let tracer: Tracing;
  let rig: DeliveryRig;

  beforeEach(async () => {
    collector = await startOtlpCollector();
    tracer = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, pino({ level: 'silent' }));
  });

  afterEach(async () => {
    await rig?.close();
    await tracer.shutdown();
    await collector.close();
  });

  it('a traced write, both attempts of its retried delivery and what the receiver got share one trace', async () => {
    rig = await createDeliveryRig(dialect);
    let calls = 0;
    rig.receiver.setHandler((_req, res) => res.writeHead(++calls === 1 ? 503 : 204).end());
    const target = await rig.target(['record.created']);
    const { event } = await write(rig, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`, tracestate: 'vendor=1' });

    // Stored with the event (tracing-events.test.ts): the context of the write's transaction span.
    const stored = TRACEPARENT.exec(event.traceparent ?? '');
    expect(stored?.[1]).toBe(TRACE_ID);

    const [job] = await delivered(rig, 1);
    expect(rig.receiver.requests).toHaveLength(2);
    const sent = rig.receiver.requests.map((r) => TRACEPARENT.exec(String(r.headers.traceparent)));
    expect(sent.map((m) => m?.[1])).toEqual([TRACE_ID, TRACE_ID]);
    expect(rig.receiver.requests.map((r) => r.headers.tracestate)).toEqual(['vendor=1', 'vendor=1']);
    // Each attempt is a span of its own: two parent-ids.
    expect(sent[0]![2]).not.toBe(sent[1]![2]);

    await tracer.shutdown();
    const transaction = collector.spans.find((s) => s.name === 'svc.transaction' && s.traceId === TRACE_ID)!;
    expect(transaction.spanId).toBe(stored![2]);
    const attempts = collector.spans.filter((s) => s.kind === 3).sort((a, b) => Number(a.attributes['svc.attempt.number']) - Number(b.attributes['svc.attempt.number']));
    expect(attempts).toHaveLength(2);
    for (const [i, span] of attempts.entries()) {
      expect(span).toMatchObject({ name: 'POST', traceId: TRACE_ID, parentSpanId: transaction.spanId, spanId: sent[i]![2] });
      expect(span.attributes).toMatchObject({
        'server.address': '127.0.0.1',
        'http.request.method': 'POST',
        'svc.delivery.id': job.id,
        'svc.webhook.id': target.id,
        'svc.attempt.number': i + 1,
      });
    }
    expect(attempts[0]).toMatchObject({ statusCode: 2, attributes: { 'http.response.status_code': 503, 'error.type': '503' } });
    expect(attempts[1]).toMatchObject({ statusCode: 0, attributes: { 'http.response.status_code': 204 } });
    expect(attempts[1]!.attributes['error.type']).toBeUndefined();
  });

  it('a write without a caller starts its own trace; a failed connection is an error span of it', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_RETRY_SCHEDULE: '0s' });
    // Nothing listens on port 9 of loopback: the one attempt fails to connect and the job is dead.
    await rig.target(['record.created'], 'https://127.0.0.1:9/hook');
    const { event } = await write(rig, {});
    const ctx = TRACEPARENT.exec(event.traceparent ?? '');
    expect(ctx).not.toBeNull();
    await waitFor(async () => ((await rig.admin('GET', '/admin/v1/deliveries?state=dead')).json() as { items: unknown[] }).items.length > 0 || null, 'a dead job');
    await tracer.shutdown();
    const request = collector.spans.find((s) => s.kind === 2 && s.traceId === ctx![1]);
    expect(request).toMatchObject({ name: 'POST /api/v1/collections/:collection/records', parentSpanId: '' });
    const attempt = collector.spans.find((s) => s.kind === 3);
    expect(attempt).toMatchObject({ traceId: ctx![1], parentSpanId: ctx![2], statusCode: 2, attributes: { 'error.type': 'connection_failed', 'svc.attempt.number': 1 } });
    expect(attempt!.attributes['http.response.status_code']).toBeUndefined();
  });

  it('a manual retry of a dead job and a replay to a later target stay in the write\'s trace', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_RETRY_SCHEDULE: '0s' });
    let hookCalls = 0;
    rig.receiver.setHandler((req, res) => res.writeHead(req.url === '/hook' && ++hookCalls === 1 ? 500 : 204).end());
    const since = new Date(Date.now() - 60_000).toISOString();
    const first = await rig.target(['record.created']);
    await write(rig, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    const dead = await waitFor(async () => ((await rig.admin('GET', '/admin/v1/deliveries?state=dead')).json() as { items: Array<{ id: string }> }).items[0], 'a dead job');
    expect((await rig.admin('POST', `/admin/v1/deliveries/${dead.id}/retry`)).statusCode).toBe(200);
    await delivered(rig, 1);
    const late = await rig.target(['record.created'], `${rig.receiver.url}/late`);
    expect((await rig.admin('POST', `/admin/v1/webhooks/${late.id}/replay`, { since })).json().jobs).toBe(1);
    await delivered(rig, 2);

    expect(rig.receiver.requests.map((r) => TRACEPARENT.exec(String(r.headers.traceparent))?.[1])).toEqual([TRACE_ID, TRACE_ID, TRACE_ID]);
    await tracer.shutdown();
    const transaction = collector.spans.find((s) => s.name === 'svc.transaction' && s.traceId === TRACE_ID)!;
    const attempts = collector.spans.filter((s) => s.kind === 3);
    expect(attempts.map((s) => [s.traceId, s.parentSpanId, s.attributes['svc.webhook.id'], s.attributes['svc.attempt.number'], s.statusCode])).toEqual([
      [TRACE_ID, transaction.spanId, first.id, 1, 2],
      [TRACE_ID, transaction.spanId, first.id, 2, 0],
      [TRACE_ID, transaction.spanId, late.id, 1, 0],
    ]);
  });

  it.runIf(dialect === 'postgres')('an attempt made by a separate svc worker process is a span of the write\'s trace', async () => {
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    await rig.target(['record.created']);
    const { event } = await write(rig, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    const caFile = join(rig.database.dir, 'tracing-ca.pem');
    writeFileSync(caFile, rig.receiver.ca);
    const worker = spawnSvc(['worker'], {
      SVC_DATABASE_URL: rig.database.url,
      SVC_SECRET_KEY: rig.ctx.config.secretKey!,
      SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      SVC_WEBHOOK_CA_FILE: caFile,
      SVC_LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'svc-worker',
    });
    try {
      // A `svc worker` started through tsx: its start alone took over 10 s on a loaded two-core machine.
      await delivered(rig, 1, 90_000);
    } finally {
      // Its spans are exported at its shutdown (running.stop()), before it exits.
      worker.kill('SIGTERM');
      await exited(worker);
    }
    const header = TRACEPARENT.exec(String(rig.receiver.requests[0]?.headers.traceparent));
    expect(header?.[1]).toBe(TRACE_ID);
    const attempt = collector.spans.find((s: CollectedSpan) => s.kind === 3);
    expect(attempt).toMatchObject({ serviceName: 'svc-worker', traceId: TRACE_ID, parentSpanId: TRACEPARENT.exec(event.traceparent!)![2], spanId: header![2] });
  }, 120_000);
});

describe.each(DIALECTS)('deliveries without OTEL_* variables (%s)', (dialect) => {
  let rig: DeliveryRig;
  afterEach(async () => rig?.close());

  it('send no traceparent or tracestate to the receiver (the capabilities list tracing all the same: svc can)', async () => {
    expect(tracing()).toBeNull();
    rig = await createDeliveryRig(dialect);
    expect((await rig.app.inject({ method: 'GET', url: '/api/v1/capabilities' })).json().features).toContain('tracing');
    await rig.target(['record.created']);
    // Even a caller's traceparent is not passed on: without tracing svc takes no part in traces.
    await write(rig, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`, tracestate: 'vendor=1' });
    await delivered(rig, 1);
    expect(rig.receiver.requests).toHaveLength(1);
    expect(rig.receiver.requests[0]!.headers.traceparent).toBeUndefined();
    expect(rig.receiver.requests[0]!.headers.tracestate).toBeUndefined();
  });
});
