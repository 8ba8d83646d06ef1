import { validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('OpenAPI documents', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t.close());

  it('/api/v1/openapi.json is a valid OpenAPI 3.1.0 document of the public routes, without credentials', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v1/batch',
      '/api/v1/capabilities',
      '/api/v1/collections/{collection}/records',
      '/api/v1/collections/{collection}/records/{id}',
      '/api/v1/events',
      '/api/v1/events/stream',
      '/api/v1/openapi.json',
    ]);
    expect(doc.components.securitySchemes).toMatchObject({
      bearerAuth: { type: 'http', scheme: 'bearer' },
      adminSession: { type: 'apiKey', in: 'cookie', name: 'svc_admin' },
      csrfToken: { type: 'apiKey', in: 'header', name: 'X-Svc-CSRF' },
    });
    const list = doc.paths['/api/v1/collections/{collection}/records'].get;
    expect(list.security).toEqual([{ bearerAuth: [] }]);
    expect(list.parameters.find((p: { name: string }) => p.name === 'limit').schema).toMatchObject({ minimum: 1, maximum: 500, default: 50 });
  });

  it('/admin/v1/openapi.json documents the admin routes and needs a session', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/openapi.json' })).statusCode).toBe(401);
    const res = await t.app.inject({ method: 'GET', url: '/admin/v1/openapi.json', headers: t.admin.headers });
    const doc = res.json();
    const result = await validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/admin/v1/webhooks', '/admin/v1/deliveries/{id}/retry', '/admin/v1/api/schema', '/admin/v1/session']));
    expect(Object.keys(doc.paths).every((p) => p.startsWith('/admin/v1/'))).toBe(true);
    // The session and its CSRF token, or an admin token with the scope the route needs (SPEC §16).
    expect(doc.paths['/admin/v1/webhooks'].post.security).toEqual([{ adminSession: [], csrfToken: [] }, { adminToken: ['admin:webhooks'] }]);
    expect(doc.paths['/admin/v1/admin-tokens'].post.security).toEqual([{ adminSession: [], csrfToken: [] }]);
  });

  it('capabilities publish the limits in force', async () => {
    const other = await createTestApp('sqlite', { SVC_BODY_MAX_BYTES: '4096', SVC_WEBHOOK_RETRY_SCHEDULE: '0s,1m,1h', SVC_WEBHOOK_TIMEOUT_MS: '2500', SVC_RETENTION_EVENTS_DAYS: '0.0001', SVC_STREAMS_PER_TOKEN: '3' });
    try {
      const res = await other.app.inject({ method: 'GET', url: '/api/v1/capabilities' });
      expect(res.statusCode).toBe(200);
      const caps = res.json();
      expect(caps.apiVersion).toBe('1');
      expect(caps.topics).toEqual(['record.created', 'record.updated', 'record.deleted', 'webhook.test', 'webhook.disabled', 'delivery.dead', 'collection.deleted']);
      expect(caps.features).toEqual(expect.arrayContaining(['records', 'webhooks']));
      // Part II's identifiers, each as SPEC names it.
      expect(caps.features).toEqual(expect.arrayContaining([
        'events.feed', 'events.stream', 'records.filter', 'records.sort', 'records.batch', 'webhooks.subscriptions', 'webhooks.ordering',
        'webhooks.auto-disable', 'webhooks.operational-events', 'webhooks.recover', 'webhooks.replay', 'retention',
      ]));
      expect(caps.limits).toMatchObject({
        streamsPerToken: 3,
        eventsListMaxLimit: 1000,
        eventsWaitMaxSeconds: 30,
        filterMaxLength: 2048,
        filterMaxComparisons: 50,
        sortMaxKeys: 3,
        indexedFieldsMax: 16,
        recordsListDefaultLimit: 50,
        recordsListMaxLimit: 500,
        requestBodyMaxBytes: 4096,
        webhookMaxAttempts: 3,
        webhookTimeoutMs: 2500,
        webhookSignatureToleranceSeconds: 300,
        webhookDiagnosticsMaxBytes: 1024,
        retentionDeliveredDays: 30,
        retentionDeadDays: 90,
        retentionEventsDays: 0.0001,
      });
      const tooBig = await other.app.inject({ method: 'POST', url: '/admin/v1/collections', headers: { ...other.admin.headers, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x', fields: [], pad: 'p'.repeat(4096) }) });
      expect(tooBig.statusCode).toBe(413);
    } finally {
      await other.close();
    }
  });
});
