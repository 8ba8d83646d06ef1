import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

// The security headers are a fixed set (src/http/security-headers.ts), no longer helmet's middleware: these pin the
// set and values on every kind of response, so a change to them is a deliberate one. Not database-specific.
const EXPECTED = {
  'content-security-policy':
    "default-src 'self';script-src 'self';style-src 'self';img-src 'self' data:;connect-src 'self';frame-ancestors 'none';base-uri 'none';form-action 'self';object-src 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};

describe.each([
  ['http', 'http://svc.example', undefined],
  ['https', 'https://svc.example', 'max-age=31536000; includeSubDomains'],
])('security headers behind an %s public URL', (_scheme, publicUrl, hsts) => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await createTestApp('sqlite', { SVC_PUBLIC_URL: publicUrl });
    await t.collection('issues', [{ name: 'title', type: 'text' }]);
    token = await t.token();
  });
  afterAll(async () => t.close());

  it.each([
    ['a record list', '/api/v1/collections/issues/records', true, 200],
    ['a 401', '/api/v1/collections/issues/records', false, 401],
    ['a 404', '/nope', false, 404],
    ['the admin UI', '/admin/', false, 200],
    ['readiness', '/readyz', false, 200],
  ])('%s', async (_name, url, withToken, status) => {
    const res = await t.app.inject({ method: 'GET', url, headers: withToken ? { authorization: `Bearer ${token}` } : {} });
    expect(res.statusCode).toBe(status);
    expect(res.headers).toMatchObject(EXPECTED);
    expect(res.headers['strict-transport-security']).toBe(hsts);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });
});
