import { api } from '../api.js';
import { h } from '../dom.js';
import type { PageContext } from '../router.js';
import { dropDraft, keepDraft, restoreDraft } from '../ui/drafts.js';
import { applyFieldErrors, bannerSlot, errorBanner } from '../ui/feedback.js';
import { busy, field, textInput } from '../ui/form.js';
import { revealToken, scopeBoxes, tokenList } from '../ui/token-parts.js';
import { tokenScopes } from '../token-scopes.js';
import type { ApiToken, ApiTokenCreated } from '../types.js';
import { adminTokensSection } from './admin-tokens.js';
import { card, pageHeader } from './common.js';

const DRAFT = 'token-create';

export function tokensPage(ctx: PageContext): HTMLElement {
  const banner = bannerSlot();
  const reveal = h('div');
  const list = tokenList<ApiToken>({
    ctx, banner, path: '/tokens', prefix: 'token', caption: 'API tokens', empty: 'No API tokens yet.',
    columns: [{ header: 'Collections', cell: (t) => (t.collections === null ? h('span', { class: 'muted' }, 'all') : t.collections.join(', ')) }],
    remove: {
      label: 'Delete', testid: 'delete-token', ariaLabel: (t) => `Delete token ${t.name}`,
      title: 'Delete API token?', message: (name) => ['Clients using ', name, ' will be refused at once.'], confirmLabel: 'Delete token',
      done: (t) => `Token “${t.name}” deleted.`,
    },
  });

  return h('div', { class: 'page' },
    pageHeader('API tokens', { subtitle: 'Bearer tokens for the public API (/api/v1).' }),
    banner,
    reveal,
    card('All tokens', ...list.parts),
    createForm((token) => {
      revealToken(reveal, {
        title: `Token “${token.name}” created`,
        value: token.token,
        testid: 'token-value',
        copyTestid: 'copy-token',
        warning: 'Copy this token now. It is shown only once and cannot be shown again; if you lose it, delete it and create a new one.',
      });
      void list.load();
    }),
    adminTokensSection(ctx));
}

function createForm(onCreated: (token: ApiTokenCreated) => void): HTMLElement {
  const banner = bannerSlot();
  const name = textInput({ required: true, maxlength: '200', testid: 'token-name', placeholder: 'ci-pipeline' });
  const collections = textInput({ testid: 'token-collections', placeholder: 'issues, comments' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'token-submit', disabled: true }, 'Create token');
  // Filled from the server's own schema (token-scopes.ts); the form cannot be sent until they are there.
  const scopes = scopeBoxes({ scopes: tokenScopes(), prefix: 'token', checked: true, submit, banner, onReady: () => restoreDraft(form, DRAFT) });
  const form = h('form', { class: 'stack', id: 'token-form', testid: 'token-form', novalidate: true },
    banner,
    h('div', { class: 'grid-2' },
      field({ label: 'Name', id: 'token-name', path: '/name' }, name),
      field({ label: 'Collections', id: 'token-collections', path: '/collections', hint: 'Comma-separated names. Leave empty for all collections.' }, collections)),
    scopes.element,
    h('div', { class: 'actions' }, submit));
  restoreDraft(form, DRAFT);
  keepDraft(form, DRAFT);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    banner.show(null);
    const list = collections.value.split(',').map((c) => c.trim()).filter(Boolean);
    const body = { name: name.value.trim(), scopes: scopes.chosen(), collections: list.length ? list : null };
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
