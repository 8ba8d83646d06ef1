import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

const REC = 'rec_01J0000000000000000000000A';
const PUBLIC_ROUTES: Array<[string, string, 'records:read' | 'records:write']> = [
  ['GET', '/api/v1/collections/issues/records', 'records:read'],
  ['POST', '/api/v1/collections/issues/records', 'records:write'],
  ['GET', `/api/v1/collections/issues/records/${REC}`, 'records:read'],
  ['PATCH', `/api/v1/collections/issues/records/${REC}`, 'records:write'],
  ['DELETE', `/api/v1/collections/issues/records/${REC}`, 'records:write'],
];
const ADMIN_ROUTES: Array<[string, string]> = [
  ['GET', '/admin/v1/api/schema'],
  ['GET', '/admin/v1/openapi.json'],
  ['DELETE', '/admin/v1/session'],
  ['GET', '/admin/v1/collections'],
  ['POST', '/admin/v1/collections'],
  ['GET', '/admin/v1/collections/issues'],
  ['PATCH', '/admin/v1/collections/issues'],
  ['DELETE', '/admin/v1/collections/issues'],
  ['GET', '/admin/v1/collections/issues/records'],
  ['GET', '/admin/v1/tokens'],
  ['POST', '/admin/v1/tokens'],
  ['DELETE', '/admin/v1/tokens/tok_01J0000000000000000000000A'],
  ['GET', '/admin/v1/webhooks'],
  ['POST', '/admin/v1/webhooks'],
  ['GET', '/admin/v1/webhooks/wh_01J0000000000000000000000A'],
  ['PATCH', '/admin/v1/webhooks/wh_01J0000000000000000000000A'],
  ['DELETE', '/admin/v1/webhooks/wh_01J0000000000000000000000A'],
  ['POST', '/admin/v1/webhooks/wh_01J0000000000000000000000A/rotate-secret'],
  ['POST', '/admin/v1/webhooks/wh_01J0000000000000000000000A/test'],
  ['GET', '/admin/v1/webhooks/wh_01J0000000000000000000000A/stats'],
  ['GET', '/admin/v1/webhooks/stats'],
  ['POST', '/admin/v1/webhooks/wh_01J0000000000000000000000A/recover'],
  ['POST', '/admin/v1/webhooks/wh_01J0000000000000000000000A/replay'],
  ['GET', '/admin/v1/deliveries'],
  ['GET', '/admin/v1/deliveries/del_01J0000000000000000000000A'],
  ['POST', '/admin/v1/deliveries/del_01J0000000000000000000000A/retry'],
];
// A body that would fail validation: an unauthenticated caller must still see 401, never a body error.
const BAD_BODY = '{"unexpected": [1, 2, 3], "data": 5}';

describe.each(DIALECTS)('auth matrix (%s)', (dialect) => {
  let t: TestApp;
  const clock = new ManualClock(Date.now());
  let tokens: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp(dialect, {}, { clock });
    await t.collection('issues', [{ name: 'title', type: 'text' }]);
    await t.collection('other', [{ name: 'title', type: 'text' }]);
    tokens = {
      readOnly: await t.token(['records:read'], null),
      writeOnly: await t.token(['records:write'], null),
      otherCollection: await t.token(['records:read', 'records:write'], ['other']),
      all: await t.token(),
    };
  });
  afterAll(async () => t.close());

  const call = (method: string, url: string, headers: Record<string, string>) =>
    t.app.inject({ method: method as 'GET', url, headers: { 'content-type': 'application/json', ...headers }, payload: method === 'GET' || method === 'DELETE' ? undefined : BAD_BODY });

  describe.each(PUBLIC_ROUTES)('%s %s', (method, url, scope) => {
    it('no credentials: 401 with a Bearer challenge', async () => {
      const res = await call(method, url, {});
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="svc"');
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().code).toBe('unauthorized');
    });
    it('unknown token: 401 invalid_token', async () => {
      const res = await call(method, url, { authorization: 'Bearer svc_pat_nope' });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="svc", error="invalid_token"');
    });
    it('token without the scope: 403', async () => {
      const res = await call(method, url, { authorization: `Bearer ${scope === 'records:read' ? tokens.writeOnly : tokens.readOnly}` });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('forbidden');
    });
    it('token without the collection: 403', async () => {
      const res = await call(method, url, { authorization: `Bearer ${tokens.otherCollection}` });
      expect(res.statusCode).toBe(403);
    });
    it('a collection that does not exist: 403, like one the token may not see', async () => {
      const res = await call(method, url.replace('/issues/', '/nosuch/'), { authorization: `Bearer ${tokens.all}` });
      expect(res.statusCode).toBe(403);
    });
    it('admin cookie on a public route: 401', async () => {
      const res = await call(method, url, t.admin.headers);
      expect(res.statusCode).toBe(401);
    });
  });

  describe.each(ADMIN_ROUTES)('%s %s', (method, url) => {
    it('no session: 401', async () => {
      const res = await call(method, url, {});
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('unauthorized');
    });
    it('cookie without CSRF: 403 csrf_failed', async () => {
      const res = await call(method, url, { cookie: t.admin.cookie });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('csrf_failed');
    });
    it('CSRF token of another session: 403 csrf_failed', async () => {
      const other = await t.login();
      const res = await call(method, url, { cookie: t.admin.cookie, 'x-svc-csrf': other.csrf });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('csrf_failed');
    });
    it('bearer token on an admin route: 401', async () => {
      const res = await call(method, url, { authorization: `Bearer ${tokens.all}` });
      expect(res.statusCode).toBe(401);
    });
    it('cross-origin browser request: 403 csrf_failed even with a valid session', async () => {
      const res = await call(method, url, { ...t.admin.headers, origin: 'https://evil.example' });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('csrf_failed');
      const site = await call(method, url, { ...t.admin.headers, 'sec-fetch-site': 'cross-site' });
      expect(site.json().code).toBe('csrf_failed');
    });
  });

  it('an expired session is 401 (idle and absolute expiry)', async () => {
    const s = await t.login();
    const ok = await t.app.inject({ method: 'GET', url: '/admin/v1/tokens', headers: s.headers });
    expect(ok.statusCode).toBe(200);
    clock.advance(31 * 60_000);
    const idle = await t.app.inject({ method: 'GET', url: '/admin/v1/tokens', headers: s.headers });
    expect(idle.statusCode).toBe(401);

    const s2 = await t.login();
    for (let i = 0; i < 25; i++) {
      clock.advance(29 * 60_000);
      const res = await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: { cookie: s2.cookie } });
      if (res.statusCode !== 200) {
        expect(res.statusCode).toBe(401);
        expect(i * 29).toBeGreaterThanOrEqual(11 * 60);
        return;
      }
    }
    throw new Error('the session outlived SVC_SESSION_MAX_HOURS');
  });
});
