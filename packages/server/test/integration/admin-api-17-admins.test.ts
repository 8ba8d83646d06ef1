import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, cookieFrom, createTestApp, type AdminSession, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

const T = Date.UTC(2026, 5, 1, 12);
const OTHER = { email: 'Second@Example.com', password: 'another long password' };

/** SPEC §17, the admins: list, add, delete (never the last), and a password change that ends the other sessions. */
describe.each(DIALECTS)('admin API: admins and passwords (SPEC §17) (%s)', (dialect) => {
  let t: TestApp;
  let clock: ManualClock;
  beforeEach(async () => {
    clock = new ManualClock(T);
    t = await createTestApp(dialect, { SVC_LOGIN_MAX_FAILURES: '3' }, { clock });
  });
  afterEach(async () => t.close());

  const as = (session: AdminSession, method: string, url: string, payload?: unknown) =>
    t.app.inject({ method: method as 'GET', url, headers: session.headers, payload: payload as object });
  const alive = async (session: AdminSession) => (await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: { cookie: session.cookie } })).statusCode === 200;
  const admins = async () => (await as(t.admin, 'GET', '/admin/v1/admins')).json().items as Array<{ id: string; email: string; createdAt: string; lastLoginAt: string | null }>;
  const addOther = async () => {
    const res = await as(t.admin, 'POST', '/admin/v1/admins', OTHER);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; email: string };
  };

  it('lists admins in creation order with their last login; a new one has none until it logs in', async () => {
    clock.advance(5000);
    const created = await as(t.admin, 'POST', '/admin/v1/admins', OTHER);
    expect(created.statusCode).toBe(201);
    const other = created.json();
    expect(other).toEqual({ id: expect.stringMatching(/^adm_/), email: 'second@example.com', createdAt: new Date(T + 5000).toISOString(), lastLoginAt: null });
    const [first, second] = await admins();
    expect(first).toEqual({ id: expect.stringMatching(/^adm_/), email: ADMIN_EMAIL, createdAt: new Date(T).toISOString(), lastLoginAt: new Date(T).toISOString() });
    expect(second).toEqual(other);
    clock.advance(60_000);
    await t.login(OTHER.email, OTHER.password);
    expect((await admins())[1]!.lastLoginAt).toBe(new Date(T + 65_000).toISOString());
    // A failed login is not a login.
    clock.advance(1000);
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: OTHER.email, password: 'not the password' } })).statusCode).toBe(401);
    expect((await admins())[1]!.lastLoginAt).toBe(new Date(T + 65_000).toISOString());
    // Paged like every list, and never a password or its hash.
    const page = (await as(t.admin, 'GET', '/admin/v1/admins?limit=1')).json();
    expect(page.items).toEqual([first]);
    expect((await as(t.admin, 'GET', `/admin/v1/admins?limit=1&cursor=${page.nextCursor}`)).json()).toEqual({ items: [(await admins())[1]], nextCursor: null });
    expect(JSON.stringify(await admins())).not.toMatch(/argon|password/i);
  });

  it('adds an admin by the rules of setup: at least 12 characters, one per email, known fields only, a session required', async () => {
    const short = await as(t.admin, 'POST', '/admin/v1/admins', { email: 'x@example.com', password: '11 chars ok' });
    expect(short.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/password' }] });
    await addOther();
    const again = await as(t.admin, 'POST', '/admin/v1/admins', { email: 'SECOND@example.COM', password: 'yet another password' });
    expect(again.json().code).toBe('conflict');
    expect((await as(t.admin, 'POST', '/admin/v1/admins', { ...OTHER, email: 'third@example.com', role: 'owner' })).json().code).toBe('validation_failed');
    expect((await as(t.admin, 'POST', '/admin/v1/admins', { email: 'not an email', password: 'long enough password' })).statusCode).toBe(422);
    const anonymous = await t.app.inject({ method: 'POST', url: '/admin/v1/admins', payload: { email: 'third@example.com', password: 'long enough password' } });
    expect(anonymous.statusCode).toBe(401);
    const noCsrf = await t.app.inject({ method: 'POST', url: '/admin/v1/admins', headers: { cookie: t.admin.cookie }, payload: { email: 'third@example.com', password: 'long enough password' } });
    expect(noCsrf.json().code).toBe('csrf_failed');
    expect((await admins()).map((a) => a.email)).toEqual([ADMIN_EMAIL, 'second@example.com']);
    // The new admin can log in with what was set.
    expect(await alive(await t.login(OTHER.email, OTHER.password))).toBe(true);
  });

  it('deletes an admin and ends every session of it; an unknown one is not_found; the last one stays (conflict)', async () => {
    const other = await addOther();
    const [s1, s2] = [await t.login(OTHER.email, OTHER.password), await t.login(OTHER.email, OTHER.password)];
    expect((await as(t.admin, 'DELETE', `/admin/v1/admins/${other.id}`)).statusCode).toBe(204);
    expect([await alive(s1), await alive(s2), await alive(t.admin)]).toEqual([false, false, true]);
    expect((await as(s1, 'GET', '/admin/v1/admins')).statusCode).toBe(401);
    expect((await admins()).map((a) => a.id)).not.toContain(other.id);
    expect((await as(t.admin, 'DELETE', `/admin/v1/admins/${other.id}`)).json().code).toBe('not_found');
    expect((await as(t.admin, 'DELETE', '/admin/v1/admins/adm_nope')).statusCode).toBe(404);
    const [self] = await admins();
    const last = await as(t.admin, 'DELETE', `/admin/v1/admins/${self!.id}`);
    expect(last.statusCode).toBe(409);
    expect(last.json().code).toBe('conflict');
    expect(await alive(t.admin)).toBe(true);
  });

  it('an admin may delete itself while another remains: its session and cookie end', async () => {
    await addOther();
    const [self] = await admins();
    const res = await as(t.admin, 'DELETE', `/admin/v1/admins/${self!.id}`);
    expect(res.statusCode).toBe(204);
    expect(String(res.headers['set-cookie'])).toMatch(/^svc_admin=;.*Max-Age=0/);
    expect(await alive(t.admin)).toBe(false);
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).statusCode).toBe(401);
  });

  it('two admins deleting each other at once leave one of them', async () => {
    const other = await addOther();
    const otherSession = await t.login(OTHER.email, OTHER.password);
    const [self] = await admins();
    const results = await Promise.all([as(t.admin, 'DELETE', `/admin/v1/admins/${other.id}`), as(otherSession, 'DELETE', `/admin/v1/admins/${self!.id}`)]);
    // One deletion commits; the other then finds its target is the last admin, or that its own session went first.
    expect(results.map((r) => r.statusCode).filter((s) => s === 204)).toHaveLength(1);
    expect(results.map((r) => r.statusCode).filter((s) => s === 409 || s === 401)).toHaveLength(1);
    expect(await t.ctx.database.db.selectFrom('admins').select('id').execute()).toHaveLength(1);
  });

  it('changes the password: the new one works, the old one not; every other session of the admin ends, this one stays', async () => {
    const other = await addOther();
    const otherSession = await t.login(OTHER.email, OTHER.password);
    const second = await t.login();
    const res = await as(t.admin, 'POST', '/admin/v1/session/password', { currentPassword: ADMIN_PASSWORD, newPassword: 'a brand new passphrase' });
    expect(res.statusCode).toBe(204);
    expect([await alive(t.admin), await alive(second), await alive(otherSession)]).toEqual([true, false, true]);
    const login = (password: string) => t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: ADMIN_EMAIL, password } });
    expect((await login(ADMIN_PASSWORD)).statusCode).toBe(401);
    expect((await login('a brand new passphrase')).statusCode).toBe(200);
    expect(other.email).toBe('second@example.com');
  });

  it('a wrong current password is unauthorized and counts as a failed login; a short new one is validation_failed and does not', async () => {
    const change = (currentPassword: string, newPassword = 'a brand new passphrase') =>
      as(t.admin, 'POST', '/admin/v1/session/password', { currentPassword, newPassword });
    const short = await change('wrong guess number 0', 'too short');
    expect(short.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/newPassword' }] });
    for (let i = 1; i <= 3; i++) {
      const wrong = await change(`wrong guess number ${i}`);
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json().code).toBe('unauthorized');
    }
    // SVC_LOGIN_MAX_FAILURES is 3: the fourth guess is not even judged, and neither is a login of that email.
    const limited = await change(ADMIN_PASSWORD);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const login = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(login.json().code).toBe('rate_limited');
    // The session that guessed is still the admin's own; nothing changed.
    expect(await alive(t.admin)).toBe(true);
    clock.advance(15 * 60_000 + 1000);
    expect((await change(ADMIN_PASSWORD)).statusCode).toBe(204);
    const fresh = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: ADMIN_EMAIL, password: 'a brand new passphrase' } });
    expect(fresh.statusCode).toBe(200);
    expect(cookieFrom(fresh)).toMatch(/^svc_admin=/);
  });

  it('the password change needs the session and its CSRF token, and known fields only', async () => {
    const body = { currentPassword: ADMIN_PASSWORD, newPassword: 'a brand new passphrase' };
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/session/password', payload: body })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/session/password', headers: { cookie: t.admin.cookie }, payload: body })).json().code).toBe('csrf_failed');
    expect((await as(t.admin, 'POST', '/admin/v1/session/password', { ...body, email: ADMIN_EMAIL })).statusCode).toBe(422);
    expect((await as(t.admin, 'POST', '/admin/v1/session/password', { newPassword: body.newPassword })).statusCode).toBe(422);
  });
});
