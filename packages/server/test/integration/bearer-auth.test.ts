import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';

// The bearer check reads the token and the requested collection in one statement; these pin down that it still
// tells the cases apart, and that nothing about a token or a collection outlives the row it came from.
describe.each(DIALECTS)('bearer auth with the collection in the same lookup (%s)', (dialect) => {
  let t: TestApp;
  // A second app with its own connection to the same database, standing in for another process.
  let other: { app: FastifyInstance; ctx: TestContext['ctx'] };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.collection('issues', [{ name: 'title', type: 'text' }]);
    await t.collection('secret', [{ name: 'title', type: 'text' }]);
    const { ctx } = await createTestContext(dialect, { SVC_SECRET_KEY: t.ctx.config.secretKey! }, { database: t.database });
    other = { app: await buildApp(ctx), ctx };
  });
  afterAll(async () => {
    await other.app.close();
    await other.ctx.database.close();
    await t.close();
  });

  const list = (app: FastifyInstance, collection: string, token: string) =>
    app.inject({ method: 'GET', url: `/api/v1/collections/${collection}/records`, headers: { authorization: `Bearer ${token}` } });

  it('a missing collection and a collection the token may not use get the same answer', async () => {
    const restricted = await t.token(['records:read'], ['issues']);
    const all = await t.token(['records:read'], null);
    const forbidden = await list(t.app, 'secret', restricted);
    expect(forbidden.statusCode).toBe(403);
    const { requestId: _a, ...forbiddenBody } = forbidden.json();
    for (const [token, name] of [[all, 'nosuch'], [restricted, 'nosuch']] as const) {
      const res = await list(t.app, name, token);
      expect(res.statusCode).toBe(403);
      const { requestId: _b, ...body } = res.json();
      expect(body).toEqual(forbiddenBody);
    }
  });

  it('an unknown token is 401 whether or not the collection exists', async () => {
    for (const name of ['issues', 'nosuch']) {
      const res = await list(t.app, name, 'svc_pat_unknown');
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="svc", error="invalid_token"');
    }
  });

  it('a scope check comes before the collection check', async () => {
    const writeOnly = await t.token(['records:write'], null);
    const res = await list(t.app, 'nosuch', writeOnly);
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toBe('This token lacks the records:read scope.');
  });

  it('hands the route the collection row: the page lists that collection', async () => {
    const token = await t.token();
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: { authorization: `Bearer ${token}` }, payload: { data: { title: 'a' } } });
    expect(created.statusCode).toBe(201);
    const res = await list(other.app, 'issues', token);
    expect(res.statusCode).toBe(200);
    expect(res.json().items.map((r: { id: string }) => r.id)).toContain(created.json().id);
  });

  it('a revoked token stops working at once, in every app on the database', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: t.admin.headers, payload: { name: 'revoked', scopes: ['records:read'], collections: null } });
    const { id, token } = created.json() as { id: string; token: string };
    expect((await list(t.app, 'issues', token)).statusCode).toBe(200);
    expect((await list(other.app, 'issues', token)).statusCode).toBe(200);
    const revoked = await t.app.inject({ method: 'DELETE', url: `/admin/v1/tokens/${id}`, headers: t.admin.headers });
    expect(revoked.statusCode).toBe(204);
    expect((await list(t.app, 'issues', token)).statusCode).toBe(401);
    expect((await list(other.app, 'issues', token)).statusCode).toBe(401);
  });

  it('a deleted collection is refused at once, and a new one is usable at once', async () => {
    const token = await t.token(['records:read'], null);
    await t.collection('fleeting', [{ name: 'title', type: 'text' }]);
    expect((await list(other.app, 'fleeting', token)).statusCode).toBe(200);
    const del = await t.app.inject({ method: 'DELETE', url: '/admin/v1/collections/fleeting', headers: t.admin.headers });
    expect(del.statusCode).toBe(204);
    expect((await list(other.app, 'fleeting', token)).statusCode).toBe(403);
    expect((await list(t.app, 'fleeting', token)).statusCode).toBe(403);
  });
});
