import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ADMIN_SCOPES, adminScopeFor, type AdminScope } from '../../src/auth/admin-scopes.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';
import { openApiDocuments, operationsOf } from '../helpers/openapi.js';

/** SPEC §16 admin tokens: create, list, revoke; what each scope opens; the login limit; the OpenAPI document. */

const MAX = 5;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A placeholder for each path parameter that passes its pattern, so the answer shows the auth decision. */
const PARAM_VALUES: Record<string, string> = {
  webhooks: 'wh_00000000000000000000000000',
  deliveries: 'del_00000000000000000000000000',
  events: 'evt_00000000000000000000000000',
  tokens: 'tok_00000000000000000000000000',
  'admin-tokens': 'adt_00000000000000000000000000',
  admins: 'adm_00000000000000000000000000',
  records: 'rec_00000000000000000000000000',
};
function concretePath(path: string): string {
  const parts = path.split('/');
  return parts.map((p, i) => (p === '{name}' ? 'no_such' : p === '{id}' ? PARAM_VALUES[parts[i - 1]!]! : p)).join('/');
}

describe.each(DIALECTS)('admin tokens (%s)', (dialect) => {
  let t: TestApp;
  // A second app on the same database stands for a second process.
  let second: { base: TestContext; app: FastifyInstance };
  const create = async (scopes: AdminScope[], name = 'automation') => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/v1/admin-tokens', headers: t.admin.headers, payload: { name, scopes } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; token: string; scopes: string[]; createdBy: string; lastUsedAt: string | null };
  };

  beforeAll(async () => {
    const env = { SVC_LOGIN_MAX_FAILURES: String(MAX) };
    t = await createTestApp(dialect, env);
    const base = await createTestContext(dialect, { ...env, SVC_SECRET_KEY: t.ctx.config.secretKey! }, { database: t.database });
    second = { base, app: await buildApp(base.ctx) };
  });
  afterAll(async () => {
    await second?.app.close();
    await second?.base.ctx.database.close();
    await t?.close();
  });

  it('creates (shown once, svcadm_), lists without the token, revokes at once in every process', async () => {
    const made = await create(['admin:read'], 'ci');
    expect(made.token).toMatch(/^svcadm_[A-Za-z0-9_-]{43}$/);
    expect(made.createdBy).toMatch(/^adm_/);
    const list = await t.app.inject({ method: 'GET', url: '/admin/v1/admin-tokens', headers: t.admin.headers });
    expect(list.statusCode).toBe(200);
    const row = (list.json() as { items: Array<Record<string, unknown>> }).items.find((i) => i.id === made.id)!;
    expect(row).toMatchObject({ name: 'ci', scopes: ['admin:read'], createdBy: made.createdBy });
    expect(list.body).not.toContain(made.token);
    // Stored as its hash: the plaintext is nowhere in the table.
    const stored = await t.ctx.database.db.selectFrom('admin_tokens').selectAll().where('id', '=', made.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(made.token.slice('svcadm_'.length));

    for (const app of [t.app, second.app]) {
      expect((await app.inject({ method: 'GET', url: '/admin/v1/webhooks', headers: bearer(made.token) })).statusCode).toBe(200);
    }
    const used = await t.app.inject({ method: 'GET', url: '/admin/v1/admin-tokens', headers: t.admin.headers });
    expect((used.json() as { items: Array<{ id: string; lastUsedAt: string | null }> }).items.find((i) => i.id === made.id)!.lastUsedAt).not.toBeNull();

    expect((await t.app.inject({ method: 'DELETE', url: `/admin/v1/admin-tokens/${made.id}`, headers: t.admin.headers })).statusCode).toBe(204);
    // The other process never saw the revocation, and still refuses the token on its very next request.
    for (const app of [second.app, t.app]) {
      const res = await app.inject({ method: 'GET', url: '/admin/v1/webhooks', headers: bearer(made.token) });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toContain('invalid_token');
    }
    expect((await t.app.inject({ method: 'DELETE', url: `/admin/v1/admin-tokens/${made.id}`, headers: t.admin.headers })).statusCode).toBe(404);
  });

  it('refuses unknown scopes, and needs the session and its CSRF token to create', async () => {
    const bad = await t.app.inject({ method: 'POST', url: '/admin/v1/admin-tokens', headers: t.admin.headers, payload: { name: 'x', scopes: ['records:read'] } });
    expect(bad.statusCode).toBe(422);
    const noCsrf = await t.app.inject({ method: 'POST', url: '/admin/v1/admin-tokens', headers: { cookie: t.admin.cookie }, payload: { name: 'x', scopes: ['admin:read'] } });
    expect(noCsrf.statusCode).toBe(403);
    expect((noCsrf.json() as { code: string }).code).toBe('csrf_failed');
  });

  it('each scope opens exactly the routes the policy gives it, on every operation of the admin document', async () => {
    const { admin } = await openApiDocuments(t);
    const tokens = new Map<string, string>();
    for (const scope of ADMIN_SCOPES) tokens.set(scope, (await create([scope])).token);
    const all = (await create([...ADMIN_SCOPES])).token;
    let allowed = 0;
    let refused = 0;
    for (const { name, operation } of operationsOf(admin)) {
      const [method, path] = name.split(' ') as [string, string];
      // Login and setup take no credentials at all (security: []): nothing for a token to open.
      if (operation.security?.length === 0) continue;
      const need = adminScopeFor(method, path.replace(/\{(\w+)\}/g, ':$1'));
      for (const [label, token] of [...tokens, ['all', all] as const]) {
        const body = method === 'GET' || method === 'DELETE' ? undefined : {};
        const res: LightMyRequestResponse = await t.app.inject({ method: method as 'GET', url: concretePath(path), headers: bearer(token), ...(body ? { payload: body } : {}) });
        const may = need !== null && (label === 'all' || label === need);
        if (may) {
          allowed++;
          expect([401, 403], `${name} with ${label}: ${res.statusCode} ${res.body}`).not.toContain(res.statusCode);
        } else {
          refused++;
          expect(res.statusCode, `${name} with ${label}: ${res.body}`).toBe(403);
          expect((res.json() as { code: string }).code).toBe('forbidden');
        }
      }
    }
    // Sizes today: a drop would mean routes went missing from the walk.
    expect(allowed).toBeGreaterThan(30);
    expect(refused).toBeGreaterThan(100);
  });

  it('is never usable on session, admin-token or admin-account routes, whatever its scopes', async () => {
    const all = (await create([...ADMIN_SCOPES])).token;
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/admin/v1/session'],
      ['DELETE', '/admin/v1/session'],
      ['POST', '/admin/v1/session/password', { currentPassword: 'x', newPassword: 'y'.repeat(12) }],
      ['GET', '/admin/v1/admin-tokens'],
      ['POST', '/admin/v1/admin-tokens', { name: 'child', scopes: ['admin:read'] }],
      ['GET', '/admin/v1/admins'],
      ['POST', '/admin/v1/admins', { email: 'b@example.com', password: 'a long enough password' }],
    ];
    for (const [method, url, payload] of routes) {
      const res = await t.app.inject({ method: method as 'GET', url, headers: bearer(all), ...(payload ? { payload: payload as object } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
    }
    const count = await t.ctx.database.db.selectFrom('admin_tokens').select((eb) => eb.fn.countAll<number>().as('n')).where('name', '=', 'child').executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });

  it('writes with a token need no cookie or CSRF; the cookie path is unchanged; other Authorization is refused', async () => {
    const { token } = await create(['admin:collections']);
    const made = await t.app.inject({ method: 'POST', url: '/admin/v1/collections', headers: bearer(token), payload: { name: 'from_ci', fields: [{ name: 'title', type: 'text', required: false }] } });
    expect(made.statusCode, made.body).toBe(201);
    // The seed's session path: the cookie alone is refused on a write, cookie + CSRF is enough.
    const cookieOnly = await t.app.inject({ method: 'DELETE', url: '/admin/v1/collections/from_ci', headers: { cookie: t.admin.cookie } });
    expect((cookieOnly.json() as { code: string }).code).toBe('csrf_failed');
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/collections/from_ci', headers: t.admin.headers })).statusCode).toBe(200);
    // An Authorization header that is not an admin token never falls through to the cookie sent beside it.
    const apiToken = await t.token(['records:read']);
    for (const authorization of ['Basic YTpi', `Bearer ${apiToken}`, 'Bearer svcadm_not-a-token', 'Bearer']) {
      const res = await t.app.inject({ method: 'GET', url: '/admin/v1/collections', headers: { ...t.admin.headers, authorization }, remoteAddress: '198.51.100.77' });
      expect(res.statusCode, authorization).toBe(401);
    }
    expect((await t.app.inject({ method: 'DELETE', url: '/admin/v1/collections/from_ci', headers: t.admin.headers })).statusCode).toBe(204);
  });

  it('wrong tokens count as failed logins per address: at most the limit answered 401 across processes, then 429', async () => {
    const ip = '198.51.100.9';
    const { token } = await create(['admin:read']);
    const apps = [t.app, second.app];
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        apps[i % 2]!.inject({ method: 'GET', url: '/admin/v1/webhooks', headers: bearer(`svcadm_wrong${i}`), remoteAddress: ip }),
      ),
    );
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(MAX);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    for (const a of answers.filter((r) => r.statusCode === 429)) expect(Number(a.headers['retry-after'])).toBeGreaterThan(0);
    let judged = statuses.filter((s) => s === 401).length;
    while ((await t.app.inject({ method: 'GET', url: '/admin/v1/webhooks', headers: bearer('svcadm_one_more'), remoteAddress: ip })).statusCode === 401) judged++;
    expect(judged).toBe(MAX);
    // Past the limit the address is refused, a valid token included, and so is a login: one budget.
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/webhooks', headers: bearer(token), remoteAddress: ip })).statusCode).toBe(429);
    const login = await t.app.inject({ method: 'POST', url: '/admin/v1/session', remoteAddress: ip, payload: { email: 'admin@example.com', password: 'correct horse battery staple' } });
    expect(login.statusCode).toBe(429);
    // Another address keeps its own budget, and valid tokens never spend it.
    for (let i = 0; i < MAX + 3; i++) {
      expect((await t.app.inject({ method: 'GET', url: '/admin/v1/webhooks', headers: bearer(token), remoteAddress: '198.51.100.10' })).statusCode).toBe(200);
    }
  });

  it('the admin OpenAPI document lists adminToken with its scope on every covered operation, and only there', async () => {
    const { admin } = await openApiDocuments(t);
    expect(admin.components.securitySchemes?.adminToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    let covered = 0;
    for (const { name, operation } of operationsOf(admin)) {
      const [method, path] = name.split(' ') as [string, string];
      const scope = adminScopeFor(method, path.replace(/\{(\w+)\}/g, ':$1'));
      const listed = (operation.security ?? []).filter((r) => 'adminToken' in r);
      if (scope === null) {
        expect(listed, name).toEqual([]);
      } else {
        covered++;
        expect(listed, name).toEqual([{ adminToken: [scope] }]);
        expect(operation.security, name).toContainEqual({ adminSession: [], csrfToken: [] });
        expect(Object.keys(operation.responses as object), name).toContain('429');
      }
    }
    expect(covered).toBeGreaterThan(20);
    for (const path of ['/admin/v1/admin-tokens', '/admin/v1/session', '/admin/v1/admins']) {
      for (const op of Object.values(admin.paths[path] ?? {})) expect(op.security?.some((r) => 'adminToken' in r)).toBe(false);
    }
    // The body's scope enum is the policy's list.
    const body = JSON.stringify(admin.paths['/admin/v1/admin-tokens']!.post);
    for (const s of ADMIN_SCOPES) expect(body).toContain(`"${s}"`);
  });

  it('reads the admin event feed with admin:read; capabilities name the feature', async () => {
    const { token } = await create(['admin:read']);
    const page = await t.app.inject({ method: 'GET', url: '/admin/v1/events?after=now', headers: bearer(token) });
    expect(page.statusCode, page.body).toBe(200);
    const caps = await t.app.inject({ method: 'GET', url: '/api/v1/capabilities' });
    expect((caps.json() as { features: string[] }).features).toContain('admin.tokens');
  });
});
