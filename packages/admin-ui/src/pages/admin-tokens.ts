/**
 * The tokens page's "Admin tokens" section (SPEC §16): tokens for automation on the admin API itself. Listed without
 * the token, created with scopes (the token shown once), revoked behind the confirmation <dialog>.
 */
import { api, seg } from '../api.js';
import { h, replace, time } from '../dom.js';
import type { PageContext } from '../router.js';
import { confirmDialog } from '../ui/dialog.js';
import { applyFieldErrors, bannerSlot, errorBanner, notice } from '../ui/feedback.js';
import { busy, button, field, textInput } from '../ui/form.js';
import { pager } from '../ui/pager.js';
import { oneTimeSecret } from '../ui/secret.js';
import { scopesFromDocument } from '../token-scopes.js';
import type { AdminToken, AdminTokenCreated, Page } from '../types.js';
import { badge, card, loading, table as commonTable } from './common.js';

/**
 * The scopes `POST /admin/v1/admin-tokens` accepts, from the admin OpenAPI document as the API tokens' form reads
 * theirs: the same reader, pointed at this route's request schema, so the UI never holds a copied list.
 */
async function adminTokenScopes(): Promise<string[]> {
  const doc = (await api.get<{ paths?: Record<string, unknown> }>('/openapi.json')) ?? {};
  return scopesFromDocument({ ...doc, paths: { '/admin/v1/tokens': doc.paths?.['/admin/v1/admin-tokens'] } });
}

const slug = (scope: string) => scope.replace(/[^a-z0-9]/gi, '-');

export function adminTokensSection(ctx: PageContext): HTMLElement {
  const banner = bannerSlot();
  const reveal = h('div');
  const list = h('div', null, loading());
  const paging = pager(() => void load(), 'admin-tokens-pager');

  const load = async () => {
    try {
      const page = await api.get<Page<AdminToken>>('/admin-tokens', { limit: 50, cursor: paging.cursor });
      if (!ctx.alive()) return;
      paging.loaded(page.nextCursor, page.items.length);
      replace(list, table(page.items));
    } catch (err) {
      if (ctx.alive()) banner.show(errorBanner(err));
    }
  };

  const table = (items: AdminToken[]) => {
    const rows = items.map((t) => {
      const revoke = button('Revoke', { class: 'btn btn-small btn-danger-ghost', testid: 'revoke-admin-token', 'aria-label': `Revoke admin token ${t.name}` });
      revoke.addEventListener('click', async () => {
        const ok = await confirmDialog({
          title: 'Revoke admin token?',
          message: h('p', null, 'Automation using ', h('strong', null, t.name), ' will be refused at once, by every svc process.'),
          confirmLabel: 'Revoke token', danger: true,
        });
        if (!ok) return;
        try {
          await api.del(`/admin-tokens/${seg(t.id)}`);
          banner.show(notice(`Admin token “${t.name}” revoked.`));
          await load();
        } catch (err) {
          banner.show(errorBanner(err));
        }
      });
      return h('tr', { testid: 'admin-token-row', 'data-id': t.id },
        h('td', { class: 'strong' }, t.name),
        h('td', null, h('span', { class: 'chips' }, t.scopes.map((s) => badge(s, 'neutral')))),
        h('td', null, time(t.createdAt)),
        h('td', null, t.lastUsedAt ? time(t.lastUsedAt) : h('span', { class: 'muted' }, 'never')),
        h('td', { class: 'cell-actions' }, revoke));
    });
    return tableOf(rows);
  };
  void load();

  const form = createForm((token) => {
    replace(reveal, oneTimeSecret({
      title: `Admin token “${token.name}” created`,
      value: token.token,
      testid: 'admin-token-value',
      copyTestid: 'copy-admin-token',
      warning: 'Copy this token now. It is shown only once; if you lose it, revoke it and create a new one. It opens the admin API as far as its scopes reach.',
    }));
    reveal.scrollIntoView({ block: 'nearest' });
    (reveal.querySelector('button') as HTMLButtonElement | null)?.focus();
    void load();
  });

  return h('section', { class: 'stack', testid: 'admin-tokens-section', 'aria-labelledby': 'admin-tokens-title' },
    h('h2', { id: 'admin-tokens-title' }, 'Admin tokens'),
    h('p', { class: 'muted' }, 'Bearer tokens (svcadm_…) for automation on the admin API (/admin/v1), without a session. They never reach sessions, admins or admin tokens.'),
    banner,
    reveal,
    card('All admin tokens', list, paging.element),
    form);
}

function tableOf(rows: HTMLTableRowElement[]): HTMLElement {
  return commonTable(['Name', 'Scopes', 'Created', 'Last used', ''], rows, { testid: 'admin-tokens-table', caption: 'Admin tokens', empty: 'No admin tokens yet.' });
}

function createForm(onCreated: (token: AdminTokenCreated) => void): HTMLElement {
  const banner = bannerSlot();
  const name = textInput({ required: true, maxlength: '200', testid: 'admin-token-name', placeholder: 'deploy-pipeline' });
  let scopes: HTMLInputElement[] = [];
  const scopeChecks = h('div', { class: 'inline-checks', testid: 'admin-token-scopes' }, loading('Loading scopes…'));
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'admin-token-submit', disabled: true }, 'Create admin token');
  const form = h('form', { class: 'stack', id: 'admin-token-form', testid: 'admin-token-form', novalidate: true },
    banner,
    field({ label: 'Name', id: 'admin-token-name', path: '/name' }, name),
    h('fieldset', { class: 'fieldset', 'data-path': '/scopes', id: 'admin-token-scopes' },
      h('legend', null, 'Scopes'),
      scopeChecks),
    h('div', { class: 'actions' }, submit));
  adminTokenScopes().then(
    (names) => {
      // None checked: an admin token's reach is chosen, never implied (the server refuses an empty list).
      scopes = names.map((s) => h('input', { type: 'checkbox', id: `admin-token-scope-${slug(s)}`, value: s, testid: `admin-token-scope-${slug(s)}` }));
      replace(scopeChecks, ...scopes.map((input) => h('div', { class: 'check' }, input, h('label', { for: input.id }, input.value))));
      submit.disabled = false;
    },
    (err: unknown) => {
      replace(scopeChecks);
      banner.show(errorBanner(err));
    },
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    banner.show(null);
    const body = { name: name.value.trim(), scopes: scopes.filter((s) => s.checked).map((s) => s.value) };
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
