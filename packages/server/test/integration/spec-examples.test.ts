import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** The seed's and SPEC's example requests, over real HTTP against a listening server, as curl would send them. */
describe.each(DIALECTS)('SPEC examples over HTTP (%s)', (dialect) => {
  let s: TestServer;
  let cookie = '';
  let csrf = '';
  let token = '';
  beforeAll(async () => {
    s = await startTestServer({ dialect, worker: false });
  });
  afterAll(async () => s.close());

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${s.baseUrl}${path}`, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    expect(res.headers.get('x-request-id')).toBeTruthy();
    return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null };
  };
  const admin = () => ({ cookie, 'x-svc-csrf': csrf });

  it('discovery needs no credentials', async () => {
    const openapi = await call('GET', '/api/v1/openapi.json');
    expect(openapi.status).toBe(200);
    expect(openapi.json.openapi).toBe('3.1.0');
    const caps = await call('GET', '/api/v1/capabilities');
    expect(caps.status).toBe(200);
    expect(caps.json.apiVersion).toBe('1');
    expect((await call('GET', '/healthz')).status).toBe(200);
    expect((await call('GET', '/readyz')).status).toBe(200);
    const metrics = await fetch(`${s.baseUrl}/metrics`);
    expect(await metrics.text()).toContain('svc_http_requests_total');
  });

  it('first admin through the setup link, then a session', async () => {
    expect(s.setupToken).toBeTruthy();
    const setup = await call('POST', '/admin/v1/setup', { token: s.setupToken, email: 'owner@example.com', password: 'a long enough password' });
    expect(setup.status).toBe(201);
    const login = await call('POST', '/admin/v1/session', { email: 'owner@example.com', password: 'a long enough password' });
    expect(login.status).toBe(200);
    cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    csrf = login.json.csrfToken;
    expect(cookie.startsWith('svc_admin=')).toBe(true);
  });

  it('collection, schema, token, records', async () => {
    const c = await call('POST', '/admin/v1/collections', { name: 'issues', fields: [{ name: 'title', type: 'text', required: true }] }, admin());
    expect(c.status).toBe(201);
    const schema = await call('GET', '/admin/v1/api/schema', undefined, admin());
    expect(schema.json.collections[0]).toMatchObject({ name: 'issues', fields: [{ name: 'title', type: 'text', required: true }] });
    const tok = await call('POST', '/admin/v1/tokens', { name: 'app', scopes: ['records:read', 'records:write'], collections: ['issues'] }, admin());
    expect(tok.status).toBe(201);
    token = tok.json.token;
    const created = await call('POST', '/api/v1/collections/issues/records', { data: { title: 'Hello' } }, { authorization: `Bearer ${token}` });
    expect(created.status).toBe(201);
    expect(created.json.id).toMatch(/^rec_/);
    const list = await call('GET', '/api/v1/collections/issues/records?limit=10', undefined, { authorization: `Bearer ${token}` });
    expect(list.status).toBe(200);
    expect(list.json.items).toHaveLength(1);
    expect(list.json.nextCursor).toBeNull();
  });

  it('POST /admin/v1/webhooks refuses loopback and accepts a disabled target without DNS', async () => {
    const refused = await call('POST', '/admin/v1/webhooks', { name: 'local', url: 'https://127.0.0.1/hook', topics: ['record.created'] }, admin());
    expect(refused.status).toBe(422);
    expect(refused.json.code).toBe('destination_refused');
    expect(refused.json.errors[0].path).toBe('/url');
    const disabled = await call('POST', '/admin/v1/webhooks', { name: 'later', url: 'https://hooks.invalid/svc', topics: ['record.created', 'record.updated'], enabled: false }, admin());
    expect(disabled.status).toBe(201);
    expect(disabled.json).toMatchObject({ enabled: false, topics: ['record.created', 'record.updated'] });
    expect(disabled.json.id).toMatch(/^wh_/);
    expect(disabled.json.secret).toMatch(/^whsec_/);
    const got = await call('GET', `/admin/v1/webhooks/${disabled.json.id}`, undefined, admin());
    expect(got.json).not.toHaveProperty('secret');
    const http = await call('POST', '/admin/v1/webhooks', { name: 'plain', url: 'http://example.com/hook', topics: ['record.created'] }, admin());
    expect(http.status).toBe(422);
    expect(http.json.code).toBe('validation_failed');
    const topic = await call('POST', '/admin/v1/webhooks', { name: 't', url: 'https://example.com/hook', topics: ['record.exploded'], enabled: false }, admin());
    expect(topic.status).toBe(422);
  });
});
