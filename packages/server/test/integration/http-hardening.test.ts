import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/errors.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

type Res = { statusCode: number; headers: Record<string, unknown>; body: string; json(): any };

function expectProblem(res: Res, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toContain('application/problem+json');
  const body = res.json();
  expect(body).toMatchObject({ status, code, title: ERRORS[code as keyof typeof ERRORS].title });
  expect(body.requestId).toBe(res.headers['x-request-id']);
  return body;
}

const publicResolver = async () => [{ address: '93.184.216.34', family: 4 }];

describe.each(DIALECTS)('HTTP hardening (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp(dialect, {}, { resolver: publicResolver as never });
    await t.collection('issues', [{ name: 'title', type: 'text' }, { name: 'meta', type: 'json' }]);
    auth = { authorization: `Bearer ${await t.token()}` };
  });
  afterAll(async () => t.close());
  const records = '/api/v1/collections/issues/records';

  describe('errors the framework raises itself are problem+json with X-Request-ID', () => {
    it.each(['/api/v1/%ff', '/api/v1/collections/%E0%A4%A/records', '/admin/v1/collections/%zz'])('bad percent-encoding %s: 400 bad_request', async (url) => {
      expectProblem(await t.app.inject({ method: 'GET', url, headers: auth }), 400, 'bad_request');
    });
    it.each([`${'/api/v1/collections/issues/records'}?filter=title%20~%20'%ZZ'`, '/api/v1/collections/issues/records?sort=title%', '/api/v1/events?topic=%C3', '/admin/v1/deliveries?webhookId=%E0%A4%A'])(
      'bad percent-encoding in the query string %s: 400 bad_request',
      async (url) => {
        expectProblem(await t.app.inject({ method: 'GET', url, headers: url.startsWith('/admin') ? t.admin.headers : auth }), 400, 'bad_request');
      },
    );
    it('a repeatable query parameter is named by its name in errors[].path', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/events?topic=record.created&topic=bogus', headers: { authorization: `Bearer ${await t.token(['events:read'])}` } });
      expect(expectProblem(res, 400, 'invalid_query').errors).toEqual([expect.objectContaining({ path: 'topic' })]);
    });
    it('an over-long path parameter: 414 uri_too_long', async () => {
      expectProblem(await t.app.inject({ method: 'GET', url: `/api/v1/collections/${'a'.repeat(300)}/records`, headers: auth }), 414, 'uri_too_long');
      expectProblem(await t.app.inject({ method: 'GET', url: `/admin/v1/webhooks/${'w'.repeat(5000)}`, headers: t.admin.headers }), 414, 'uri_too_long');
    });
  });

  describe('NUL and malformed identifiers never reach the database', () => {
    it('a NUL collection name is a collection the token cannot see (403), never a 500', async () => {
      for (const method of ['HEAD', 'GET', 'POST'] as const) {
        const res = await t.app.inject({ method, url: '/api/v1/collections/%00/records', headers: auth, payload: method === 'POST' ? { data: {} } : undefined });
        expect(res.statusCode, `${method} ${res.body}`).toBe(403);
      }
    });
    it('a malformed record id is not_found', async () => {
      for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
        const res = await t.app.inject({ method, url: `${records}/%00`, headers: auth, payload: method === 'PATCH' ? { data: { title: 'x' } } : undefined });
        expectProblem(res, 404, 'not_found');
      }
      expectProblem(await t.app.inject({ method: 'GET', url: `${records}/rec_${'%C3%A9'.repeat(26)}`, headers: auth }), 404, 'not_found');
    });
    it('admin path parameters with NUL are not_found', async () => {
      for (const url of ['/admin/v1/collections/%00', '/admin/v1/collections/a%00b/records', '/admin/v1/webhooks/wh_%00', '/admin/v1/deliveries/%00']) {
        expectProblem(await t.app.inject({ method: 'GET', url, headers: t.admin.headers }), 404, 'not_found');
      }
      expectProblem(await t.app.inject({ method: 'DELETE', url: '/admin/v1/tokens/%00', headers: t.admin.headers }), 404, 'not_found');
    });
    it('a NUL in a query parameter is invalid_query', async () => {
      expectProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/deliveries?webhookId=%00', headers: t.admin.headers }), 400, 'invalid_query');
    });
    it('a NUL in any text of a JSON body is validation_failed at its path', async () => {
      const text = await t.app.inject({ method: 'POST', url: records, headers: auth, payload: { data: { title: 'a\u0000b' } } });
      expect(expectProblem(text, 422, 'validation_failed').errors).toEqual([{ path: '/data/title', message: expect.stringContaining('NUL') }]);
      const json = await t.app.inject({ method: 'POST', url: records, headers: auth, payload: { data: { meta: { 'k\u0000': ['\u0000'] } } } });
      expectProblem(json, 422, 'validation_failed');
      const name = await t.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: t.admin.headers, payload: { name: '\u0000', scopes: ['records:read'], collections: null } });
      expectProblem(name, 422, 'validation_failed');
      // Escaped in the raw JSON text, as a client's serializer writes it.
      const raw = await t.app.inject({ method: 'POST', url: records, headers: { ...auth, 'content-type': 'application/json' }, payload: '{"data":{"title":"\\u0000"}}' });
      expectProblem(raw, 422, 'validation_failed');
      // A lone surrogate cannot be read back by PostgreSQL's JSON functions either; a pair is one character.
      for (const text of ['\\ud800', 'a\\udfffb', '\\ude00\\ud83d']) {
        const lone = await t.app.inject({ method: 'POST', url: records, headers: { ...auth, 'content-type': 'application/json' }, payload: `{"data":{"meta":{"k":"${text}"}}}` });
        expect(expectProblem(lone, 422, 'validation_failed').errors).toEqual([{ path: '/data/meta/k', message: expect.stringContaining('surrogate') }]);
      }
      const pair = await t.app.inject({ method: 'POST', url: records, headers: { ...auth, 'content-type': 'application/json' }, payload: '{"data":{"title":"\\ud83d\\ude00"}}' });
      expect(pair.statusCode).toBe(201);
      expect(pair.json().data.title).toBe('\u{1F600}');
      // Nothing was stored, and a text without NUL still works on both databases.
      expect((await t.app.inject({ method: 'POST', url: records, headers: auth, payload: { data: { title: '\\u0000 is six characters', meta: { s: '\u0001\uffff' } } } })).statusCode).toBe(201);
    });
  });

  describe('a number JSON cannot carry is refused, never stored as null', () => {
    it('a literal past the double range (1e309, -1e400, 400 digits) is validation_failed at its path', async () => {
      // JSON.parse makes these ±Infinity, which JSON.stringify writes as null: a json field read back null.
      for (const [literal, path] of [
        ['{"data":{"meta":1e309}}', '/data/meta'],
        ['{"data":{"meta":{"k":[1,-1e400]}}}', '/data/meta/k/1'],
        [`{"data":{"meta":{"big":${'9'.repeat(400)}}}}`, '/data/meta/big'],
        ['{"data":{"title":"x","meta":{"a~b/c":1E+999}}}', '/data/meta/a~0b~1c'],
      ] as const) {
        const res = await t.app.inject({ method: 'POST', url: records, headers: { ...auth, 'content-type': 'application/json' }, payload: literal });
        expect(expectProblem(res, 422, 'validation_failed').errors, literal).toEqual([{ path, message: expect.stringContaining('out of range') }]);
      }
      const made = await t.app.inject({ method: 'POST', url: records, headers: auth, payload: { data: { meta: { n: 1 } } } });
      expect(made.statusCode).toBe(201);
      const patch = await t.app.inject({ method: 'PATCH', url: `${records}/${made.json().id}`, headers: { ...auth, 'content-type': 'application/json' }, payload: '{"data":{"meta":{"n":1e999}}}' });
      expectProblem(patch, 422, 'validation_failed');
      expect((await t.app.inject({ method: 'GET', url: `${records}/${made.json().id}`, headers: auth })).json().data.meta).toEqual({ n: 1 });
      // The largest and smallest doubles, underflow to 0 and text that only looks like a big number are data.
      const edge = await t.app.inject({
        method: 'POST',
        url: records,
        headers: { ...auth, 'content-type': 'application/json' },
        payload: '{"data":{"title":"1e999","meta":[1.7976931348623157e308,-1.7976931348623157e308,5e-324,1e-400]}}',
      });
      expect(edge.statusCode, edge.body).toBe(201);
      expect(edge.json().data).toEqual({ title: '1e999', meta: [1.7976931348623157e308, -1.7976931348623157e308, 5e-324, 0] });
    });
  });

  describe('a body the schema makes optional may be omitted', () => {
    let webhookId: string;
    beforeAll(async () => {
      const res = await t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers, payload: { name: 'w', url: 'https://receiver.example/hook', topics: ['record.created'] } });
      expect(res.statusCode, res.body).toBe(201);
      webhookId = res.json().id;
    });
    it.each([
      ['without a Content-Type', {}],
      ['with a Content-Type', { 'content-type': 'application/json' }],
      ['with the Content-Type fetch adds to an empty body', { 'content-type': 'text/plain;charset=UTF-8' }],
    ])('rotate-secret %s uses the default overlap', async (_name, headers) => {
      const res = await t.app.inject({ method: 'POST', url: `/admin/v1/webhooks/${webhookId}/rotate-secret`, headers: { ...t.admin.headers, ...headers } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().secret).toMatch(/^whsec_/);
    });
    it('the admin OpenAPI document says so', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/admin/v1/openapi.json', headers: t.admin.headers })).json();
      expect(doc.paths['/admin/v1/webhooks/{id}/rotate-secret'].post.requestBody.required).toBe(false);
      expect(doc.paths['/admin/v1/webhooks'].post.requestBody.required).toBe(true);
    });
    it('rotate-secret still validates a body that is sent', async () => {
      const res = await t.app.inject({ method: 'POST', url: `/admin/v1/webhooks/${webhookId}/rotate-secret`, headers: t.admin.headers, payload: { overlapSeconds: -1 } });
      expectProblem(res, 422, 'validation_failed');
      const text = await t.app.inject({ method: 'POST', url: `/admin/v1/webhooks/${webhookId}/rotate-secret`, headers: { ...t.admin.headers, 'content-type': 'text/plain' }, payload: 'x' });
      expectProblem(text, 415, 'unsupported_media_type');
    });
    it('body-less routes take an empty body with a Content-Type', async () => {
      const headers = { ...t.admin.headers, 'content-type': 'application/json' };
      expect((await t.app.inject({ method: 'POST', url: `/admin/v1/webhooks/${webhookId}/test`, headers })).statusCode).toBe(202);
      expectProblem(await t.app.inject({ method: 'POST', url: '/admin/v1/deliveries/del_01J0000000000000000000000A/retry', headers }), 404, 'not_found');
      expect((await t.app.inject({ method: 'DELETE', url: '/admin/v1/session', headers: { ...(await t.login()).headers, 'content-type': 'application/json' } })).statusCode).toBe(204);
      expect((await t.app.inject({ method: 'DELETE', url: `/admin/v1/webhooks/${webhookId}`, headers })).statusCode).toBe(204);
    });
  });

  it('answers that carry a secret, a token or a CSRF token are not stored by caches', async () => {
    const admin = t.admin.headers;
    const session = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: 'admin@example.com', password: 'correct horse battery staple' } });
    const answers = [
      session,
      await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: { cookie: admin.cookie! } }),
      await t.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: admin, payload: { name: 'n', scopes: ['records:read'], collections: null } }),
      await t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: admin, payload: { name: 'w', url: 'https://receiver.example/x', topics: ['record.created'], enabled: false } }),
    ];
    const wh = answers[3]!.json().id as string;
    answers.push(await t.app.inject({ method: 'POST', url: `/admin/v1/webhooks/${wh}/rotate-secret`, headers: admin, payload: { overlapSeconds: 0 } }));
    for (const res of answers) {
      expect(res.statusCode, res.body).toBeLessThan(300);
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });
});

describe('CORS for the public API (SVC_CORS_ORIGINS)', () => {
  let t: TestApp;
  let auth: Record<string, string>;
  const allowed = 'https://app.example';
  beforeAll(async () => {
    t = await createTestApp('sqlite', { SVC_CORS_ORIGINS: `${allowed},https://other.example:8443` });
    await t.collection('issues', [{ name: 'title', type: 'text' }]);
    auth = { authorization: `Bearer ${await t.token()}` };
  });
  afterAll(async () => t.close());
  const preflight = (url: string, origin: string) =>
    t.app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, content-type, if-match' } });

  it('a preflight from an allowed origin is answered 204, credentials never allowed', async () => {
    const res = await preflight('/api/v1/collections/issues/records/rec_01J0000000000000000000000A', allowed);
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(allowed);
    expect(String(res.headers['access-control-allow-methods'])).toContain('PATCH');
    const headers = String(res.headers['access-control-allow-headers']).toLowerCase();
    for (const h of ['authorization', 'content-type', 'if-match', 'idempotency-key', 'last-event-id']) expect(headers).toContain(h);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(String(res.headers.vary)).toMatch(/origin/i);
  });

  it('an actual request from an allowed origin exposes X-Request-ID and ETag, errors included', async () => {
    const ok = await t.app.inject({ method: 'GET', url: '/api/v1/collections/issues/records', headers: { ...auth, origin: allowed } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(allowed);
    expect(String(ok.headers['access-control-expose-headers']).toLowerCase()).toMatch(/x-request-id.*etag|etag.*x-request-id/);
    const denied = await t.app.inject({ method: 'GET', url: '/api/v1/collections/issues/records', headers: { origin: allowed } });
    expect(denied.statusCode).toBe(401);
    expect(denied.headers['access-control-allow-origin']).toBe(allowed);
  });

  it('a disallowed origin gets no CORS headers, and the admin API never answers CORS', async () => {
    for (const [url, origin] of [['/api/v1/collections/issues/records', 'https://evil.example'], ['/admin/v1/collections', allowed]] as const) {
      const res = await preflight(url, origin);
      expect(res.statusCode).not.toBe(204);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['access-control-allow-methods']).toBeUndefined();
    }
    const get = await t.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: { origin: 'https://evil.example' } });
    expect(get.statusCode).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('without SVC_CORS_ORIGINS nothing is allowed', async () => {
    const plain = await createTestApp('sqlite');
    try {
      const res = await plain.app.inject({ method: 'OPTIONS', url: '/api/v1/capabilities', headers: { origin: allowed, 'access-control-request-method': 'GET' } });
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});

describe('/metrics behind SVC_METRICS_TOKEN', () => {
  let t: TestApp;
  const token = 'metrics-token-0123456789';
  beforeAll(async () => {
    t = await createTestApp('sqlite', { SVC_METRICS_TOKEN: token });
  });
  afterAll(async () => t.close());

  it('needs Authorization: Bearer <token>', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/metrics' }), 401, 'unauthorized');
    expectProblem(await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}x` } }), 401, 'unauthorized');
    expectProblem(await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: token } }), 401, 'unauthorized');
    const ok = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('svc_http_requests_total');
  });
});

describe('slow requests time out (SVC_REQUEST_TIMEOUT_MS)', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp('sqlite', { SVC_REQUEST_TIMEOUT_MS: '1000' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(async () => t.close());

  /** Sends `head`, then `dribble` one byte at a time every `everyMs`, and collects what comes back until close. */
  const slow = (head: string, dribble: string, everyMs: number) =>
    new Promise<{ text: string; ms: number }>((resolve, reject) => {
      const started = Date.now();
      const socket = connect(port, '127.0.0.1', () => socket.write(head));
      let data = '';
      let i = 0;
      const timer = setInterval(() => {
        if (i < dribble.length && !socket.destroyed) socket.write(dribble[i++]!);
      }, everyMs);
      const give_up = setTimeout(() => socket.destroy(new Error(`no answer after 8 s; got ${JSON.stringify(data)}`)), 8000);
      socket.on('data', (d) => (data += d.toString()));
      socket.on('close', () => {
        clearInterval(timer);
        clearTimeout(give_up);
        resolve({ text: data, ms: Date.now() - started });
      });
      socket.on('error', (err) => {
        clearInterval(timer);
        clearTimeout(give_up);
        reject(err);
      });
    });

  it.each([
    ['stops after the headers', 0],
    ['arrives a byte every 200 ms', 200],
  ])('a body that %s is answered 408 request_timeout and closed', async (_name, everyMs) => {
    const body = JSON.stringify({ email: 'admin@example.com', password: 'x'.repeat(80) });
    const head = `POST /admin/v1/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const res = await slow(head, everyMs === 0 ? '' : body, everyMs || 1000);
    expect(res.text).toMatch(/^HTTP\/1\.1 408/);
    expect(res.text).toMatch(/x-request-id: req_/i);
    expect(res.text).toContain('"code":"request_timeout"');
    expect(res.ms).toBeLessThan(5000);
  });
});

describe('while the process drains', () => {
  it('a request arriving on an open connection is answered 503 unavailable as a problem', async () => {
    const t = await createTestApp('sqlite');
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (t.app.server.address() as { port: number }).port;
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    // The first request is in progress (its body not yet sent) when the close begins; the second is pipelined after it.
    socket.write('POST /admin/v1/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closing = t.app.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.write('{}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await closed;
    await closing;
    await t.close().catch(() => {});
    const second = text.slice(text.indexOf('HTTP/1.1', 10));
    expect(second).toMatch(/^HTTP\/1\.1 503/);
    expect(second).toMatch(/x-request-id: req_/i);
    expect(second).toContain('"code":"unavailable"');
  });
});
