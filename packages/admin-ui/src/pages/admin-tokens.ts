/**
 * The tokens page's "Admin tokens" section (SPEC §16): tokens for automation on the admin API itself. Listed without
 * the token, created with scopes (the token shown once), revoked behind the confirmation <dialog>. The list, the scope
 * boxes and the reveal are the API tokens' own (ui/token-parts.ts).
 */
import { api } from '../api.js';
import { h } from '../dom.js';
import type { PageContext } from '../router.js';
import { applyFieldErrors, bannerSlot, errorBanner } from '../ui/feedback.js';
import { busy, field, textInput } from '../ui/form.js';
import { revealToken, scopeBoxes, tokenList } from '../ui/token-parts.js';
import { tokenScopes } from '../token-scopes.js';
import type { AdminToken, AdminTokenCreated } from '../types.js';
import { card } from './common.js';

export function adminTokensSection(ctx: PageContext): HTMLElement {
  const banner = bannerSlot();
  const reveal = h('div');
  const list = tokenList<AdminToken>({
    ctx, banner, path: '/admin-tokens', prefix: 'admin-token', caption: 'Admin tokens', empty: 'No admin tokens yet.',
    remove: {
      label: 'Revoke', testid: 'revoke-admin-token', ariaLabel: (t) => `Revoke admin token ${t.name}`,
      title: 'Revoke admin token?', message: (name) => ['Automation using ', name, ' will be refused at once, by every svc process.'],
      confirmLabel: 'Revoke token', done: (t) => `Admin token “${t.name}” revoked.`,
    },
  });

  const form = createForm((token) => {
    revealToken(reveal, {
      title: `Admin token “${token.name}” created`,
      value: token.token,
      testid: 'admin-token-value',
      copyTestid: 'copy-admin-token',
      warning: 'Copy this token now. It is shown only once; if you lose it, revoke it and create a new one. It opens the admin API as far as its scopes reach.',
    });
    void list.load();
  });

  return h('section', { class: 'stack', testid: 'admin-tokens-section', 'aria-labelledby': 'admin-tokens-title' },
    h('h2', { id: 'admin-tokens-title' }, 'Admin tokens'),
    h('p', { class: 'muted' }, 'Bearer tokens (svcadm_…) for automation on the admin API (/admin/v1), without a session. They never reach sessions, admins or admin tokens.'),
    banner,
    reveal,
    card('All admin tokens', ...list.parts),
    form);
}

function createForm(onCreated: (token: AdminTokenCreated) => void): HTMLElement {
  const banner = bannerSlot();
  const name = textInput({ required: true, maxlength: '200', testid: 'admin-token-name', placeholder: 'deploy-pipeline' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'admin-token-submit', disabled: true }, 'Create admin token');
  // None checked: an admin token's reach is chosen, never implied (the server refuses an empty list).
  const scopes = scopeBoxes({ scopes: tokenScopes('/admin/v1/admin-tokens'), prefix: 'admin-token', checked: false, submit, banner });
  const form = h('form', { class: 'stack', id: 'admin-token-form', testid: 'admin-token-form', novalidate: true },
    banner,
    field({ label: 'Name', id: 'admin-token-name', path: '/name' }, name),
    scopes.element,
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    banner.show(null);
    const body = { name: name.value.trim(), scopes: scopes.chosen() };
    try {
      const created = await busy(form, () => api.post<AdminTokenCreated>('/admin-tokens', body));
      form.reset();
      onCreated(created);
    } catch (err) {
      banner.show(errorBanner(err, applyFieldErrors(form, err)));
    }
  });
  return card('New admin token', form);
}
