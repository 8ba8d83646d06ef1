import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/errors.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toContain('application/problem+json');
  const body = res.json();
  expect(body).toMatchObject({ status, code, title: ERRORS[code as keyof typeof ERRORS].title });
  expect(typeof body.detail).toBe('string');
  expect(body.requestId).toBe(res.headers['x-request-id']);
  return body;
}

describe.each(DIALECTS)('error answers (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp(dialect, { SVC_BODY_MAX_BYTES: '2048', SVC_JSON_MAX_DEPTH: '5' });
    await t.collection('issues', [{ name: 'title', type: 'text' }, { name: 'meta', type: 'json' }]);
    auth = { authorization: `Bearer ${await t.token()}` };
  });
  afterAll(async () => t.close());
  const url = '/api/v1/collections/issues/records';

  it('every response carries X-Request-ID; a sane caller value is echoed, an unsafe one replaced', async () => {
    const ok = await t.app.inject({ method: 'GET', url: '/api/v1/capabilities' });
    expect(ok.headers['x-request-id']).toMatch(/^req_/);
    const mine = await t.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'trace-42:abc.DEF_1' } });
    expect(mine.headers['x-request-id']).toBe('trace-42:abc.DEF_1');
    expect(mine.json().requestId).toBe('trace-42:abc.DEF_1');
    const evil = await t.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'a b<script>' } });
    expect(evil.headers['x-request-id']).toMatch(/^req_/);
    const long = await t.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'x'.repeat(129) } });
    expect(long.headers['x-request-id']).toMatch(/^req_/);
  });

  it('404 not_found and 405 method_not_allowed', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/api/v1/nothing' }), 404, 'not_found');
    const res = await t.app.inject({ method: 'PUT', url: '/api/v1/capabilities' });
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toContain('GET');
    // A POST-only admin route: GET (which the admin UI's wildcard also matches) is a 405 like any other method, and
    // Allow names only what the route takes; an admin API path no route has is a 404 for every method.
    for (const method of ['GET', 'HEAD', 'PUT', 'DELETE'] as const) {
      const other = await t.app.inject({ method, url: '/admin/v1/webhooks/wh_01M8GWH6A1RXSW3KJMTXT81QKC/rotate-secret', headers: t.admin.headers });
      expect(other.statusCode).toBe(405);
      expect(other.headers.allow).toBe('POST');
      if (method !== 'HEAD') expect(other.json().code).toBe('method_not_allowed');
    }
    for (const method of ['GET', 'PUT'] as const) {
      expectProblem(await t.app.inject({ method, url: '/admin/v1/nothing-here', headers: t.admin.headers }), 404, 'not_found');
    }
  });

  it('413 payload_too_large, 415 unsupported_media_type, 400 invalid_json, depth limit', async () => {
    expectProblem(await t.app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ data: { title: 'x'.repeat(5000) } }) }), 413, 'payload_too_large');
    expectProblem(await t.app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'text/plain' }, payload: 'hello' }), 415, 'unsupported_media_type');
    expectProblem(await t.app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/json' }, payload: '{"data": {' }), 400, 'invalid_json');
    const deep = { data: { meta: { a: { b: { c: { d: { e: 1 } } } } } } };
    expectProblem(await t.app.inject({ method: 'POST', url, headers: auth, payload: deep }), 422, 'validation_failed');
    const count = await t.ctx.database.db.selectFrom('records').select('id').execute();
    expect(count).toHaveLength(0);
  });

  it('authentication is decided before the body is read', async () => {
    const res = await t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '{not json' });
    expectProblem(res, 401, 'unauthorized');
    const big = await t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ x: 'y'.repeat(10_000) }) });
    expectProblem(big, 401, 'unauthorized');
  });

  it('a 500 leaks nothing internal', async () => {
    // Break the database under the app: the error must not carry SQL, table names or a stack.
    const { sql } = await import('kysely');
    await sql`drop table idempotency_keys`.execute(t.ctx.database.db);
    const res = await t.app.inject({ method: 'POST', url, headers: { ...auth, 'idempotency-key': 'k' }, payload: { data: { title: 'a' } } });
    const body = expectProblem(res, 500, 'internal');
    expect(res.body).not.toMatch(/idempotency_keys|select|insert|at .*\.ts|Error:/i);
    expect(Object.keys(body).sort()).toEqual(['code', 'detail', 'requestId', 'status', 'title', 'type']);
  });
});

describe('errors raised by Node\'s HTTP parser', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(async () => t.close());

  const raw = (request: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request));
      let data = '';
      socket.on('data', (d) => (data += d.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });

  it('a malformed request line gets a 400 problem with a request id', async () => {
    const res = await raw('GARBAGE\r\n\r\n');
    expect(res).toMatch(/^HTTP\/1\.1 400/);
    expect(res).toMatch(/X-Request-ID: req_/i);
    expect(res).toContain('"code":"bad_request"');
  });

  it('oversized headers get a 431 problem with a request id', async () => {
    const res = await raw(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res).toMatch(/^HTTP\/1\.1 431/);
    expect(res).toMatch(/X-Request-ID: req_/i);
    expect(res).toContain('application/problem+json');
  });
});
