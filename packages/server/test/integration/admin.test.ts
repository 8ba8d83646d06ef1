import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bootstrapAdmin } from '../../src/auth/setup.js';
import { buildApp } from '../../src/app.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, cookieFrom, createTestApp, type TestApp } from '../helpers/app.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';

describe.each(DIALECTS)('admin API (%s)', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(dialect, { SVC_LOGIN_MAX_FAILURES: '3' });
  });
  afterEach(async () => t.close());
  const admin = (method: string, url: string, payload?: unknown) => t.app.inject({ method: method as 'GET', url, headers: t.admin.headers, payload: payload as object });

  it('login sets a strict HttpOnly cookie and returns the CSRF token; logout ends the session', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(res.statusCode).toBe(200);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^svc_admin=[^;]+;/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/admin');
    expect(cookie).not.toContain('Secure');
    const body = res.json();
    expect(body.admin.email).toBe(ADMIN_EMAIL);
    const again = await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: { cookie: cookieFrom(res) } });
    expect(again.json().csrfToken).toBe(body.csrfToken);
    const out = await t.app.inject({ method: 'DELETE', url: '/admin/v1/session', headers: { cookie: cookieFrom(res), 'x-svc-csrf': body.csrfToken } });
    expect(out.statusCode).toBe(204);
    const after = await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: { cookie: cookieFrom(res) } });
    expect(after.statusCode).toBe(401);
  });

  it('rate-limits failed logins per email with Retry-After', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: ADMIN_EMAIL, password: 'wrong password!' } });
      expect(res.statusCode).toBe(401);
    }
    const limited = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('a login form posted from another origin is refused before the password is tried', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/v1/session', headers: { origin: 'https://evil.example' }, payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('csrf_failed');
    const same = await t.app.inject({ method: 'POST', url: '/admin/v1/session', headers: { origin: t.ctx.config.publicUrl }, payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(same.statusCode).toBe(200);
  });

  it('collections: create, duplicate, get, patch, schema, delete with and without force', async () => {
    const created = await admin('POST', '/admin/v1/collections', { name: 'issues', fields: [{ name: 'title', type: 'text', required: true }] });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ name: 'issues', fields: [{ name: 'title', type: 'text', required: true }] });
    expect((await admin('POST', '/admin/v1/collections', { name: 'issues', fields: [] })).statusCode).toBe(409);
    const bad = await admin('POST', '/admin/v1/collections', { name: 'Bad-Name', fields: [{ name: 'x', type: 'blob' }] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors.map((e: { path: string }) => e.path).sort()).toEqual(['/fields/0/type']);
    const reserved = await admin('POST', '/admin/v1/collections', { name: '_test', fields: [] });
    expect(reserved.statusCode).toBe(422);

    const token = await t.token();
    const rec = await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: { authorization: `Bearer ${token}` }, payload: { data: { title: 'a' } } });
    expect(rec.statusCode).toBe(201);

    const added = await admin('PATCH', '/admin/v1/collections/issues', { fields: [{ name: 'title', type: 'text', required: true }, { name: 'points', type: 'integer', required: false }] });
    expect(added.statusCode).toBe(200);
    expect(added.json().fields).toHaveLength(2);
    const required = await admin('PATCH', '/admin/v1/collections/issues', { fields: [{ name: 'title', type: 'text', required: true }, { name: 'points', type: 'integer', required: true }] });
    expect(required.statusCode).toBe(409);
    const retype = await admin('PATCH', '/admin/v1/collections/issues', { fields: [{ name: 'title', type: 'integer', required: true }, { name: 'points', type: 'integer' }] });
    expect(retype.statusCode).toBe(422);

    const schema = await admin('GET', '/admin/v1/api/schema');
    expect(schema.statusCode).toBe(200);
    expect(schema.json().collections).toEqual([expect.objectContaining({ name: 'issues', fields: expect.any(Array) })]);
    expect(schema.body).not.toContain('"a"');
    expect(schema.body).not.toContain('svc_pat_');

    const browse = await admin('GET', '/admin/v1/collections/issues/records');
    expect(browse.json().items).toHaveLength(1);

    expect((await admin('DELETE', '/admin/v1/collections/issues')).statusCode).toBe(409);
    expect((await admin('DELETE', '/admin/v1/collections/issues?force=true')).statusCode).toBe(204);
    expect((await admin('GET', '/admin/v1/collections/issues')).statusCode).toBe(404);
  });

  it('tokens: shown once, listed without the secret, revoked at once', async () => {
    await t.collection('issues', [{ name: 'title', type: 'text' }]);
    const res = await admin('POST', '/admin/v1/tokens', { name: 'ci', scopes: ['records:read'], collections: ['issues'] });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created.token).toMatch(/^svc_pat_/);
    const list = await admin('GET', '/admin/v1/tokens');
    expect(list.body).not.toContain(created.token);
    expect(list.json().items.find((x: { id: string }) => x.id === created.id)).toMatchObject({ name: 'ci', scopes: ['records:read'], collections: ['issues'], lastUsedAt: null });
    const use = await t.app.inject({ method: 'GET', url: '/api/v1/collections/issues/records', headers: { authorization: `Bearer ${created.token}` } });
    expect(use.statusCode).toBe(200);
    const listed = await admin('GET', '/admin/v1/tokens');
    expect(listed.json().items.find((x: { id: string }) => x.id === created.id).lastUsedAt).not.toBeNull();
    expect((await admin('DELETE', `/admin/v1/tokens/${created.id}`)).statusCode).toBe(204);
    const after = await t.app.inject({ method: 'GET', url: '/api/v1/collections/issues/records', headers: { authorization: `Bearer ${created.token}` } });
    expect(after.statusCode).toBe(401);
    const stored = await t.ctx.database.db.selectFrom('api_tokens').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(created.token);
  });
});

describe.each(DIALECTS)('first-run setup (%s)', (dialect) => {
  it('prints a one-time link whose token creates the first admin once', async () => {
    const base = await createTestContext(dialect);
    const app = await buildApp(base.ctx);
    try {
      const link = await bootstrapAdmin(base.ctx);
      expect(link).toMatch(/\/admin\/setup\?token=/);
      const token = new URL(link!).searchParams.get('token')!;
      const wrong = await app.inject({ method: 'POST', url: '/admin/v1/setup', payload: { token: 'nope', email: 'a@b.example', password: 'long enough password' } });
      expect(wrong.statusCode).toBe(401);
      const weak = await app.inject({ method: 'POST', url: '/admin/v1/setup', payload: { token, email: 'a@b.example', password: 'short' } });
      expect(weak.statusCode).toBe(422);
      const ok = await app.inject({ method: 'POST', url: '/admin/v1/setup', payload: { token, email: 'first@example.com', password: 'long enough password' } });
      expect(ok.statusCode).toBe(201);
      const again = await app.inject({ method: 'POST', url: '/admin/v1/setup', payload: { token, email: 'second@example.com', password: 'long enough password' } });
      expect(again.statusCode).toBe(409);
      expect(again.json().code).toBe('conflict');
      const login = await app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: 'first@example.com', password: 'long enough password' } });
      expect(login.statusCode).toBe(200);
      expect(await bootstrapAdmin(base.ctx)).toBeNull();
    } finally {
      await app.close();
      await base.close();
    }
  });

  /** A fresh database with no admin, and the app on it; every start is a call of bootstrapAdmin. */
  async function withoutAdmin(test: (ctx: TestContext['ctx'], app: FastifyInstance) => Promise<void>): Promise<void> {
    const base = await createTestContext(dialect);
    const app = await buildApp(base.ctx);
    try {
      await test(base.ctx, app);
    } finally {
      await app.close();
      await base.close();
    }
  }
  const tokenOf = (link: string | null) => new URL(link!).searchParams.get('token')!;

  it('a second start issues a new link and the old one no longer works', () =>
    withoutAdmin(async (ctx, app) => {
      const old = tokenOf(await bootstrapAdmin(ctx));
      const current = tokenOf(await bootstrapAdmin(ctx));
      expect(current).not.toBe(old);
      const stale = await app.inject({ method: 'POST', url: '/admin/v1/setup', payload: { token: old, email: 'old@example.com', password: 'long enough password' } });
      expect(stale.statusCode).toBe(401);
      expect(stale.json().code).toBe('unauthorized');
      const ok = await app.inject({ method: 'POST', url: '/admin/v1/setup', payload: { token: current, email: 'new@example.com', password: 'long enough password' } });
      expect(ok.statusCode).toBe(201);
    }));

  it('concurrent redemptions create exactly one admin, with one link or with the links of two starts', () =>
    withoutAdmin(async (ctx, app) => {
      const redeem = (token: string, i: number) =>
        app.inject({ method: 'POST', url: '/admin/v1/setup', payload: { token, email: `admin${i}@example.com`, password: 'long enough password' } });
      const first = tokenOf(await bootstrapAdmin(ctx));
      const second = tokenOf(await bootstrapAdmin(ctx));
      const answers = await Promise.all([redeem(first, 1), redeem(second, 2), redeem(second, 3), redeem(first, 4), redeem(second, 5)]);
      expect(answers.map((a) => a.statusCode).filter((s) => s === 201)).toHaveLength(1);
      for (const a of answers.filter((x) => x.statusCode !== 201)) expect(['unauthorized', 'conflict']).toContain(a.json().code);
      expect(await ctx.database.db.selectFrom('admins').select('email').execute()).toHaveLength(1);
    }));

  it('SVC_ADMIN_EMAIL and SVC_ADMIN_PASSWORD create the admin at start', async () => {
    const base = await createTestContext(dialect, { SVC_ADMIN_EMAIL: 'ops@example.com', SVC_ADMIN_PASSWORD: 'a very long password' });
    const app = await buildApp(base.ctx);
    try {
      expect(await bootstrapAdmin(base.ctx)).toBeNull();
      const login = await app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: 'ops@example.com', password: 'a very long password' } });
      expect(login.statusCode).toBe(200);
    } finally {
      await app.close();
      await base.close();
    }
  });
});
