import { api, seg } from '../api.js';
import { h, replace, time } from '../dom.js';
import type { PageContext } from '../router.js';
import { confirmDialog } from '../ui/dialog.js';
import { dropDraft, keepDraft, restoreDraft } from '../ui/drafts.js';
import { applyFieldErrors, bannerSlot, errorBanner, notice } from '../ui/feedback.js';
import { busy, button, field, textInput } from '../ui/form.js';
import { pager } from '../ui/pager.js';
import { oneTimeSecret } from '../ui/secret.js';
import { tokenScopes } from '../token-scopes.js';
import type { ApiToken, ApiTokenCreated, Page } from '../types.js';
import { adminTokensSection } from './admin-tokens.js';
import { badge, card, loading, pageHeader, table } from './common.js';

const DRAFT = 'token-create';

export function tokensPage(ctx: PageContext): HTMLElement {
  const banner = bannerSlot();
  const reveal = h('div');
  const list = h('div', null, loading());
  const paging = pager(() => void load(), 'tokens-pager');

  const load = async () => {
    try {
      const page = await api.get<Page<ApiToken>>('/tokens', { limit: 50, cursor: paging.cursor });
      if (!ctx.alive()) return;
      paging.loaded(page.nextCursor, page.items.length);
      replace(list, table(['Name', 'Scopes', 'Collections', 'Created', 'Last used', ''], page.items.map((t) => {
        const del = button('Delete', { class: 'btn btn-small btn-danger-ghost', testid: 'delete-token', 'aria-label': `Delete token ${t.name}` });
        del.addEventListener('click', async () => {
          const ok = await confirmDialog({
            title: 'Delete API token?',
            message: h('p', null, 'Clients using ', h('strong', null, t.name), ' will be refused at once.'),
            confirmLabel: 'Delete token', danger: true,
          });
          if (!ok) return;
          try {
            await api.del(`/tokens/${seg(t.id)}`);
            banner.show(notice(`Token “${t.name}” deleted.`));
            await load();
          } catch (err) {
            banner.show(errorBanner(err));
          }
        });
        return h('tr', { testid: 'token-row', 'data-id': t.id },
          h('td', { class: 'strong' }, t.name),
          h('td', null, h('span', { class: 'chips' }, t.scopes.map((s) => badge(s, 'neutral')))),
          h('td', null, t.collections === null ? h('span', { class: 'muted' }, 'all') : t.collections.join(', ')),
          h('td', null, time(t.createdAt)),
          h('td', null, t.lastUsedAt ? time(t.lastUsedAt) : h('span', { class: 'muted' }, 'never')),
          h('td', { class: 'cell-actions' }, del));
      }), { testid: 'tokens-table', caption: 'API tokens', empty: 'No API tokens yet.' }));
    } catch (err) {
      if (ctx.alive()) banner.show(errorBanner(err));
    }
  };
  void load();

  return h('div', { class: 'page' },
    pageHeader('API tokens', { subtitle: 'Bearer tokens for the public API (/api/v1).' }),
    banner,
    reveal,
    card('All tokens', list, paging.element),
    createForm((token) => {
      replace(reveal, oneTimeSecret({
        title: `Token “${token.name}” created`,
        value: token.token,
        testid: 'token-value',
        copyTestid: 'copy-token',
        warning: 'Copy this token now. It is shown only once and cannot be shown again; if you lose it, delete it and create a new one.',
      }));
      reveal.scrollIntoView({ block: 'nearest' });
      (reveal.querySelector('button') as HTMLButtonElement | null)?.focus();
      void load();
    }),
    adminTokensSection(ctx));
}

function createForm(onCreated: (token: ApiTokenCreated) => void): HTMLElement {
  const banner = bannerSlot();
  const name = textInput({ required: true, maxlength: '200', testid: 'token-name', placeholder: 'ci-pipeline' });
  // Filled from the server's own schema (token-scopes.ts); the form cannot be sent until they are there.
  let scopes: HTMLInputElement[] = [];
  const scopeChecks = h('div', { class: 'inline-checks', testid: 'token-scopes' }, loading('Loading scopes…'));
  const collections = textInput({ testid: 'token-collections', placeholder: 'issues, comments' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'token-submit', disabled: true }, 'Create token');
  const form = h('form', { class: 'stack', id: 'token-form', testid: 'token-form', novalidate: true },
    banner,
    h('div', { class: 'grid-2' },
      field({ label: 'Name', id: 'token-name', path: '/name' }, name),
      field({ label: 'Collections', id: 'token-collections', path: '/collections', hint: 'Comma-separated names. Leave empty for all collections.' }, collections)),
    h('fieldset', { class: 'fieldset', 'data-path': '/scopes', id: 'token-scopes' },
      h('legend', null, 'Scopes'),
      scopeChecks),
    h('div', { class: 'actions' }, submit));
  restoreDraft(form, DRAFT);
  keepDraft(form, DRAFT);
  tokenScopes().then(
    (names) => {
      // Ids by name, not position: a draft keeps each scope's box whatever order the server lists them in.
      scopes = names.map((s) => h('input', { type: 'checkbox', id: `token-scope-${s.replace(/[^a-z0-9]/gi, '-')}`, value: s, checked: true, testid: `token-scope-${s.replace(':', '-')}` }));
      replace(scopeChecks, ...scopes.map((input) => h('div', { class: 'check' }, input, h('label', { for: input.id }, input.value))));
      restoreDraft(form, DRAFT);
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
    const list = collections.value.split(',').map((c) => c.trim()).filter(Boolean);
    const body = { name: name.value.trim(), scopes: scopes.filter((s) => s.checked).map((s) => s.value), collections: list.length ? list : null };
    try {
      const created = await busy(form, () => api.post<ApiTokenCreated>('/tokens', body));
      dropDraft(DRAFT);
      form.reset();
      onCreated(created);
    } catch (err) {
      banner.show(errorBanner(err, applyFieldErrors(form, err)));
    }
  });
  return card('New token', form);
}
