/**
 * Admins and the own password (issue 24 item 6, SPEC §17) in a real browser: the list, adding an admin (the
 * repetition checked here, the password rule by the server, each error at its field), deleting one behind a
 * dialog, the last admin's delete refused with the server's own words, and changing one's password (a wrong
 * current password said at its field without losing the session; the admin's other sessions end).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EMAIL, PASSWORD, hasChromium, useUi } from './harness.js';
import { expectClean, provoked } from './ui-checks.js';

describe.skipIf(!hasChromium)('admin UI: admins and password (issue 24 item 6)', () => {
  const ui = useUi();

  const unique = (name: string) => `${name}-${randomBytes(4).toString('hex')}@example.com`;
  /** The browser's own session as this admin, through the login page (the harness keeps its own session). */
  const loginAs = async (email: string, password: string) => {
    await ui.context.clearCookies();
    await ui.page.goto(ui.url('/admin/#/login'));
    await ui.byTestId('login-email').fill(email);
    await ui.byTestId('login-password').fill(password);
    await ui.byTestId('login-submit').click();
    await ui.byTestId('account-email').waitFor();
    // The session check before the login form.
    provoked(ui, 401);
  };
  const addAdmin = async (email: string, password: string): Promise<string> => {
    const res = await ui.admin('POST', '/admin/v1/admins', { email, password });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    return res.json.id;
  };
  const session = (email: string, password: string) =>
    fetch(ui.url('/admin/v1/session'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });

  it('lists the admins and adds one: the repetition checked at once, the password rule at its field', async () => {
    await loginAs(EMAIL, PASSWORD);
    await ui.byTestId('nav-admins').click();
    const self = ui.byTestId('admin-row').filter({ hasText: EMAIL });
    await self.waitFor();
    expect(await self.getByTestId('admin-self').textContent()).toBe('you');

    const email = unique('second');
    let posted = 0;
    ui.page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/admin/v1/admins')) posted += 1;
    });
    await ui.byTestId('admin-email').fill(email);
    await ui.byTestId('admin-password').fill('a long enough password');
    await ui.byTestId('admin-repeat-password').fill('a different password');
    await ui.byTestId('admin-submit').click();
    await expect.poll(() => ui.byTestId('error-repeatPassword').textContent()).toBe('differs from the new password');
    expect(posted).toBe(0);

    await ui.byTestId('admin-password').fill('short');
    await ui.byTestId('admin-repeat-password').fill('short');
    await ui.byTestId('admin-submit').click();
    await expect.poll(() => ui.byTestId('error-password').textContent()).toBe('at least 12 characters');
    expect(await ui.byTestId('error-repeatPassword').count()).toBe(0);
    expect(posted).toBe(1);
    expect(provoked(ui, 422)).toBe(1);
    await ui.screenshots('admins-add-error');
    await expectClean(ui);

    await ui.byTestId('admin-password').fill('a long enough password');
    await ui.byTestId('admin-repeat-password').fill('a long enough password');
    await ui.byTestId('admin-submit').click();
    await expect.poll(() => ui.byTestId('admin-added').textContent()).toContain(email);
    await expect.poll(() => ui.byTestId('admin-row').filter({ hasText: email }).count()).toBe(1);
    expect((await session(email, 'a long enough password')).status).toBe(200);
    await ui.screenshots('admins');
    await expectClean(ui);
    expect(ui.problems).toEqual([]);
  });

  it("deletes an admin through a dialog; the last admin's delete shows the server's conflict", async () => {
    await loginAs(EMAIL, PASSWORD);
    // Alone first: whatever other tests added goes.
    const all = await ui.admin('GET', '/admin/v1/admins?limit=500');
    const selfId = all.json.items.find((a: { email: string }) => a.email === EMAIL).id as string;
    for (const a of all.json.items) if (a.id !== selfId) expect((await ui.admin('DELETE', `/admin/v1/admins/${a.id}`)).status).toBe(204);
    const other = unique('other');
    await addAdmin(other, 'another long password');
    await ui.goto('#/admins');
    await expect.poll(() => ui.byTestId('admin-row').count()).toBe(2);

    const otherRow = ui.byTestId('admin-row').filter({ hasText: other });
    await otherRow.getByTestId('delete-admin').click();
    await ui.byTestId('confirm-dialog').waitFor();
    expect(await ui.byTestId('confirm-message').textContent()).toContain(other);
    await ui.byTestId('confirm-cancel').click();
    expect(await ui.byTestId('admin-row').count()).toBe(2);
    await otherRow.getByTestId('delete-admin').click();
    await ui.byTestId('confirm-ok').click();
    await expect.poll(() => ui.byTestId('admin-deleted').textContent()).toBe(`Admin ${other} deleted.`);
    await expect.poll(() => ui.byTestId('admin-row').count()).toBe(1);
    expect((await session(other, 'another long password')).status).toBe(401);

    // The last one: the server refuses, and says why; this session goes on.
    await ui.byTestId('delete-admin').click();
    expect(await ui.byTestId('confirm-message').textContent()).toContain('This is you');
    await ui.byTestId('confirm-ok').click();
    const banner = ui.byTestId('error-banner');
    await banner.waitFor();
    const refused = await ui.admin('DELETE', `/admin/v1/admins/${selfId}`);
    expect(refused).toMatchObject({ status: 409, json: { code: 'conflict' } });
    expect(await ui.byTestId('error-detail').textContent()).toBe(refused.json.detail);
    expect(provoked(ui, 409)).toBe(1);
    expect(await ui.byTestId('admin-row').count()).toBe(1);
    await ui.screenshots('admins-last-conflict');
    await expectClean(ui);
    expect(ui.page.url()).toContain('#/admins');
    expect(ui.problems).toEqual([]);
  });

  it('changes the password: a wrong current one is said at its field and keeps the session; other sessions end', async () => {
    const email = unique('pw');
    const first = 'the first long password';
    const second = 'the second long password';
    await addAdmin(email, first);
    const elsewhere = await session(email, first);
    const elsewhereCookie = elsewhere.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    await loginAs(email, first);
    await ui.byTestId('account-email').click();
    await ui.byTestId('password-form').waitFor();
    expect(await ui.byTestId('account-page-email').textContent()).toBe(email);

    await ui.byTestId('account-current-password').fill('not my password at all');
    await ui.byTestId('account-new-password').fill(second);
    await ui.byTestId('account-repeat-password').fill(second);
    await ui.byTestId('password-submit').click();
    await expect.poll(() => ui.byTestId('error-currentPassword').textContent()).toBe('is not your current password');
    expect(await ui.byTestId('error-banner').locator('.banner-title').textContent()).toBe('Wrong current password');
    expect(ui.page.url()).toContain('#/account');
    expect(provoked(ui, 401)).toBe(1);
    await ui.screenshots('account-wrong-password');
    await expectClean(ui);

    await ui.byTestId('account-current-password').fill(first);
    await ui.byTestId('account-repeat-password').fill('not the same');
    await ui.byTestId('password-submit').click();
    await expect.poll(() => ui.byTestId('error-repeatPassword').textContent()).toBe('differs from the new password');
    await ui.byTestId('account-new-password').fill('short');
    await ui.byTestId('account-repeat-password').fill('short');
    await ui.byTestId('password-submit').click();
    await expect.poll(() => ui.byTestId('error-newPassword').textContent()).toBe('at least 12 characters');
    expect(provoked(ui, 422)).toBe(1);

    await ui.byTestId('account-new-password').fill(second);
    await ui.byTestId('account-repeat-password').fill(second);
    await ui.byTestId('password-submit').click();
    await ui.byTestId('password-changed').waitFor();
    expect(await ui.byTestId('account-current-password').inputValue()).toBe('');
    expect((await session(email, first)).status).toBe(401);
    expect((await session(email, second)).status).toBe(200);
    expect((await fetch(ui.url('/admin/v1/session'), { headers: { cookie: elsewhereCookie } })).status).toBe(401);
    // This session goes on.
    await ui.page.reload();
    await ui.byTestId('password-form').waitFor();
    expect(ui.page.url()).toContain('#/account');
    await ui.screenshots('account');
    expect(ui.problems).toEqual([]);
  });
});
