import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/** Whatever a client sends: never a 5xx, always problem+json with X-Request-ID when it is an error. */
describe.each(DIALECTS)('fuzzing the public API (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.collection('issues', [
      { name: 'title', type: 'text', required: true },
      { name: 'n', type: 'integer' },
      { name: 'when', type: 'datetime' },
      { name: 'blob', type: 'json' },
    ]);
    auth = { authorization: `Bearer ${await t.token()}` };
  });
  afterAll(async () => t.close());

  const check = (res: { statusCode: number; headers: Record<string, unknown>; body: string }) => {
    expect(res.statusCode).toBeLessThan(500);
    expect(res.headers['x-request-id']).toBeTruthy();
    if (res.statusCode >= 400) {
      expect(String(res.headers['content-type'])).toContain('application/problem+json');
      const body = JSON.parse(res.body);
      expect(typeof body.code).toBe('string');
      expect(body.requestId).toBe(res.headers['x-request-id']);
    }
  };

  it('record bodies', async () => {
    const value = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 4 }));
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.dictionary(fc.constantFrom('title', 'n', 'when', 'blob', '__proto__', 'constructor', 'x'), value), fc.jsonValue({ maxDepth: 5 })), async (data) => {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: auth, payload: { data } as object });
        check(res);
      }),
      { numRuns: 150 },
    );
  });

  it('raw bodies and content types', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 300 }), fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'application/merge-patch+json', ''), async (body, type) => {
        const headers: Record<string, string> = { ...auth };
        if (type) headers['content-type'] = type;
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers, payload: body });
        check(res);
      }),
      { numRuns: 150 },
    );
  });

  it('query strings', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom('limit', 'cursor', 'foo', 'limit[]'), fc.oneof(fc.string(), fc.integer().map(String), fc.base64String())), async (query) => {
        const qs = new URLSearchParams(query).toString();
        const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/issues/records?${qs}`, headers: auth });
        check(res);
      }),
      { numRuns: 150 },
    );
  });

  it('headers and paths', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 80 }),
        fc.string({ maxLength: 80 }),
        fc.string({ maxLength: 40 }),
        fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT'),
        async (authHeader, ifMatch, id, method) => {
          const safe = (s: string) => s.replace(/[^\x20-\x7e]/g, '');
          const res = await t.app.inject({
            method: method as 'GET',
            url: `/api/v1/collections/issues/records/${encodeURIComponent(id)}`,
            headers: { authorization: Math.random() < 0.5 ? auth.authorization! : safe(authHeader), 'if-match': safe(ifMatch), 'idempotency-key': safe(ifMatch) },
            payload: method === 'GET' || method === 'DELETE' ? undefined : { data: { title: id } },
          });
          check(res);
        },
      ),
      { numRuns: 150 },
    );
  });
});
