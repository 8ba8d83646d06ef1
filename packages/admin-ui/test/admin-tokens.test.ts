/**
 * The tokens page's "Admin tokens" section (SPEC §16) in a real browser: creating one with scopes (shown once, then
 * working on the admin API as far as its scopes reach), the list without the token, revoking behind the <dialog>
 * (refused at once afterwards), axe clean and within a 390 px phone.
 */
import { describe, expect, it } from 'vitest';
import { hasChromium, useUi } from './harness.js';
import { expectClean } from './ui-checks.js';

describe.skipIf(!hasChromium)('admin UI: admin tokens (SPEC §16)', () => {
  const ui = useUi();
  const withToken = (token: string, method: string, path: string, body?: unknown) =>
    fetch(ui.url(path), { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });

  it('creates an admin token with the scopes chosen, shows it once, and revokes it behind a dialog', async () => {
    await ui.goto('#/tokens');
    const section = ui.byTestId('admin-tokens-section');
    await section.waitFor();
    // The scopes come from the server's own schema; none is ticked for the admin.
    await ui.byTestId('admin-token-scope-admin-webhooks').waitFor();
    for (const s of ['admin-read', 'admin-webhooks', 'admin-collections', 'admin-tokens']) expect(await ui.byTestId(`admin-token-scope-${s}`).isChecked()).toBe(false);

    await ui.byTestId('admin-token-name').fill('deploy');
    await ui.byTestId('admin-token-scope-admin-read').check();
    await ui.byTestId('admin-token-scope-admin-webhooks').check();
    await ui.byTestId('admin-token-submit').click();
    const value = ui.byTestId('admin-token-value');
    await value.waitFor();
    const token = await value.inputValue();
    expect(token).toMatch(/^svcadm_/);
    const row = ui.byTestId('admin-token-row').filter({ hasText: 'deploy' });
    await row.waitFor();
    expect(await row.textContent()).toContain('admin:webhooks');
    // Listed, never with the token itself.
    expect(await ui.byTestId('admin-tokens-table').textContent()).not.toContain(token);
    await ui.screenshots('admin-tokens');
    await expectClean(ui);

    expect((await withToken(token, 'GET', '/admin/v1/webhooks')).status).toBe(200);
    expect((await withToken(token, 'POST', '/admin/v1/collections', { name: 'nope', fields: [] })).status).toBe(403);

    await row.getByTestId('revoke-admin-token').click();
    await ui.byTestId('confirm-dialog').waitFor();
    expect(await ui.byTestId('confirm-message').textContent()).toContain('deploy');
    await ui.byTestId('confirm-cancel').click();
    expect((await withToken(token, 'GET', '/admin/v1/webhooks')).status).toBe(200);

    await row.getByTestId('revoke-admin-token').click();
    await ui.byTestId('confirm-ok').click();
    await expect.poll(() => ui.byTestId('admin-token-row').filter({ hasText: 'deploy' }).count(), { timeout: 10_000 }).toBe(0);
    expect((await withToken(token, 'GET', '/admin/v1/webhooks')).status).toBe(401);
    await expectClean(ui);
    expect(ui.problems).toEqual([]);
  });
});
