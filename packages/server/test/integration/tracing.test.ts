import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createAdmin } from '../../src/auth/setup.js';
import { startTracing, tracing, type Tracing } from '../../src/tracing/tracing.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, cookieFrom } from '../helpers/app.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';
import { startOtlpCollector, type OtlpCollector } from '../helpers/otlp-collector.js';
import { metric } from '../helpers/outage-client.js';
import { waitFor } from '../helpers/wait.js';
import { createApiToken } from '../../src/auth/api-tokens.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe.each(DIALECTS)('tracing of a write (%s)', (dialect) => {
  let collector: OtlpCollector;
  let tracer: Tracing;
  let base: TestContext;
  const lines: Array<Record<string, unknown>> = [];

  beforeEach(async () => {
    collector = await startOtlpCollector();
    lines.length = 0;
    const logStream = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: 'info' }, logStream);
    tracer = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'svc-test' }, logger);
    base = await createTestContext(dialect);
    base.ctx = { ...base.ctx, logger };
  });

  afterEach(async () => {
    await tracer.shutdown();
    await base.close();
    await collector.close();
  });

  it('continues an incoming trace: the request span and the transaction span share its trace id, and the log lines name them', async () => {
    expect(tracer.enabled).toBe(true);
    let recordId = '';
    let batchIds: string[] = [];
    const app = await buildApp(base.ctx);
    try {
      await createAdmin(base.ctx, ADMIN_EMAIL, ADMIN_PASSWORD);
      const login = await app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
      const admin = { cookie: cookieFrom(login), 'x-svc-csrf': (login.json() as { csrfToken: string }).csrfToken };
      expect((await app.inject({ method: 'POST', url: '/admin/v1/collections', headers: admin, payload: { name: 'notes', fields: [{ name: 'title', type: 'text', required: false }] } })).statusCode).toBe(201);
      const tokenRes = await app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: admin, payload: { name: 't', scopes: ['records:write'], collections: null } });
      const token = (tokenRes.json() as { token: string }).token;

      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/collections/notes/records',
        headers: { authorization: `Bearer ${token}`, traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`, tracestate: 'vendor=1' },
        payload: { data: { title: 'traced' } },
      });
      expect(res.statusCode).toBe(201);
      recordId = (res.json() as { id: string }).id;
      const batch = await app.inject({
        method: 'POST',
        url: '/api/v1/batch',
        headers: { authorization: `Bearer ${token}` },
        payload: { operations: [{ method: 'POST', collection: 'notes', data: { title: 'a' } }, { method: 'POST', collection: 'notes', data: { title: 'b' } }] },
      });
      expect(batch.statusCode).toBe(200);
      batchIds = (batch.json() as { results: Array<{ record: { id: string } }> }).results.map((r) => r.record.id);
    } finally {
      await app.close();
    }
    // Shutdown exports what the batch processor still holds: nothing was sent before it (5 s schedule).
    await tracer.shutdown();
    expect(tracing()).toBeNull();
    expect(collector.jsonRequests).toBeGreaterThan(0);
    expect(collector.protobufRequests).toBe(0);
    expect(collector.paths.every((p) => p === '/v1/traces')).toBe(true);

    const request = collector.spans.find((s) => s.traceId === TRACE_ID && s.kind === 2);
    expect(request).toMatchObject({
      name: 'POST /api/v1/collections/:collection/records',
      parentSpanId: CALLER_SPAN,
      serviceName: 'svc-test',
      statusCode: 0,
      attributes: { 'http.request.method': 'POST', 'http.route': '/api/v1/collections/:collection/records', 'http.response.status_code': 201, 'url.scheme': 'http' },
    });
    const transaction = collector.spans.find((s) => s.name === 'svc.transaction' && s.traceId === TRACE_ID);
    expect(transaction).toBeDefined();
    expect(transaction!.parentSpanId).toBe(request!.spanId);
    expect(transaction!.kind).toBe(1);
    expect(transaction!.attributes['svc.collection']).toBe('notes');
    expect(transaction!.attributes['svc.record.id']).toBe(recordId);
    // A batch is one transaction: one span naming every record it wrote, under the batch's request span.
    const batchSpan = collector.spans.find((s) => s.name === 'POST /api/v1/batch')!;
    const batchTransaction = collector.spans.find((s) => s.name === 'svc.transaction' && s.parentSpanId === batchSpan.spanId);
    expect(batchTransaction?.traceId).toBe(batchSpan.traceId);
    expect(batchTransaction?.attributes).toMatchObject({ 'svc.collection': 'notes', 'svc.record.id': batchIds });

    // The admin requests before it started traces of their own: no incoming traceparent.
    const others = collector.spans.filter((s) => s.kind === 2 && s.traceId !== TRACE_ID);
    expect(others.map((s) => s.name)).toEqual(expect.arrayContaining(['POST /admin/v1/session', 'POST /admin/v1/collections', 'POST /admin/v1/tokens']));

    const line = lines.find((l) => l.msg === 'request' && l.url === '/api/v1/collections/notes/records');
    expect(line).toMatchObject({ traceId: TRACE_ID, spanId: request!.spanId, status: 201 });
  });

  it('a 404 without a route is named by its method alone, with no route and no error status', async () => {
    const app = await buildApp(base.ctx);
    try {
      expect((await app.inject({ method: 'GET', url: '/no/such/path' })).statusCode).toBe(404);
    } finally {
      await app.close();
    }
    await tracer.shutdown();
    const span = collector.spans.find((s) => s.kind === 2 && s.attributes['http.response.status_code'] === 404);
    expect(span).toMatchObject({ name: 'GET', statusCode: 0 });
    expect(span!.attributes['http.route']).toBeUndefined();
    expect(span!.parentSpanId).toBe('');
  });

  it('a request its client leaves before the answer still ends its span, marked aborted, with no error status', async () => {
    const app = await buildApp(base.ctx);
    try {
      const origin = await app.listen({ host: '127.0.0.1', port: 0 });
      const { token } = await createApiToken(base.ctx, { name: 'feed', scopes: ['events:read'], collections: null });
      const leave = new AbortController();
      const poll = fetch(`${origin}/api/v1/events?after=now&wait=20`, { headers: { authorization: `Bearer ${token}` }, signal: leave.signal }).catch(() => null);
      // Waiting (it holds a place): then the client goes.
      await waitFor(async () => (await metric(origin, 'svc_feed_long_polls_waiting')) === 1, 'the long-poll waiting');
      leave.abort();
      await poll;
      // The place frees when svc has seen the client leave: the abort hook has run by then.
      await waitFor(async () => (await metric(origin, 'svc_feed_long_polls_waiting')) === 0, 'the place freed');
    } finally {
      await app.close();
    }
    await tracer.shutdown();
    const span = collector.spans.find((s) => s.kind === 2 && s.name === 'GET /api/v1/events');
    expect(span, 'the aborted request was exported').toBeDefined();
    expect(span!.attributes['error.type']).toBe('aborted');
    expect(span!.attributes['http.response.status_code']).toBeUndefined();
    expect(span!.statusCode).toBe(0);
  });
});
