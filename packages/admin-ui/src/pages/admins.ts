/**
 * Administrators (SPEC §17): the list, a new admin with email and password, and deletion behind a confirmation.
 * The server refuses to delete the last admin (409 conflict), and that answer is shown as it comes; deleting an
 * admin ends its sessions, so deleting oneself ends this one too.
 */
import { api, ApiError, seg, session } from '../api.js';
import { h, replace, time } from '../dom.js';
import { navigate, type PageContext } from '../router.js';
import { confirmDialog } from '../ui/dialog.js';
import { applyFieldErrors, bannerSlot, errorBanner, notice } from '../ui/feedback.js';
import { busy, button, field } from '../ui/form.js';
import { pager } from '../ui/pager.js';
import type { AdminUser, Page } from '../types.js';
import { PASSWORD_MIN, passwordInput, refusedRepeat } from './account.js';
import { badge, card, loading, pageHeader, table } from './common.js';

export function adminsPage(ctx: PageContext): HTMLElement {
  const banner = bannerSlot();
  const list = h('div', null, loading());
  const paging = pager(() => void load(), 'admins-pager');

  const load = async () => {
    try {
      const page = await api.get<Page<AdminUser>>('/admins', { limit: 50, cursor: paging.cursor });
      if (!ctx.alive()) return;
      paging.loaded(page.nextCursor, page.items.length);
      replace(list, table(['Email', 'Created', 'Last login', ''], page.items.map((a) => row(a)),
        { testid: 'admins-table', caption: 'Administrators', empty: 'No administrators.' }));
    } catch (err) {
      if (ctx.alive()) banner.show(errorBanner(err));
    }
  };

  const row = (a: AdminUser): HTMLTableRowElement => {
    const self = a.email === session.email;
    const del = button('Delete', { class: 'btn btn-small btn-danger-ghost', testid: 'delete-admin', 'aria-label': `Delete admin ${a.email}` });
    del.addEventListener('click', async () => {
      const ok = await confirmDialog({
        title: 'Delete administrator?',
        message: h('p', null, 'Delete ', h('strong', null, a.email), '? Their sessions end at once.',
          self ? ' This is you: you will be logged out.' : ''),
        confirmLabel: 'Delete admin', danger: true,
      });
      if (!ok) return;
      try {
        await api.del(`/admins/${seg(a.id)}`);
      } catch (err) {
        // The last admin: titled plainly, and the server's own words (a 409 conflict) say why it stays.
        const last = err instanceof ApiError && err.code === 'conflict';
        banner.show(errorBanner(last ? new ApiError(err.status, { ...err.problem, title: 'The last admin cannot be deleted' }) : err));
        if (last) del.focus();
        return;
      }
      if (self) {
        session.csrfToken = null;
        navigate('/login');
        return;
      }
      banner.show(notice(`Admin ${a.email} deleted.`, 'admin-deleted'));
      await load();
    });
    return h('tr', { testid: 'admin-row', 'data-id': a.id },
      h('td', { class: 'strong' }, a.email, self ? [' ', badge('you', 'info', 'admin-self')] : null),
      h('td', null, time(a.createdAt)),
      h('td', null, a.lastLoginAt ? time(a.lastLoginAt) : h('span', { class: 'muted' }, 'never')),
      h('td', { class: 'cell-actions' }, del));
  };
  void load();

  return h('div', { class: 'page' },
    pageHeader('Admins', {
      subtitle: 'Who can log in to this admin UI.',
      actions: [h('a', { href: '#/account', class: 'btn btn-ghost', testid: 'change-password-link' }, 'Change your password')],
    }),
    banner,
    card('All admins', list, paging.element),
    addForm(() => void load()));
}

function addForm(onAdded: () => void): HTMLElement {
  const banner = bannerSlot();
  const email = h('input', { type: 'email', autocomplete: 'off', required: true, testid: 'admin-email', spellcheck: 'false' });
  const password = passwordInput('admin-password', 'new-password');
  const repeat = passwordInput('admin-repeat-password', 'new-password');
  const form = h('form', { class: 'stack', id: 'admin-form', testid: 'admin-form', novalidate: true },
    banner,
    field({ label: 'Email', id: 'admin-email', path: '/email' }, email),
    h('div', { class: 'grid-2' },
      field({ label: 'Password', id: 'admin-password', path: '/password', hint: `At least ${PASSWORD_MIN} characters.` }, password),
      field({ label: 'Repeat the password', id: 'admin-repeat-password', path: '/repeatPassword' }, repeat)),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn btn-primary', testid: 'admin-submit' }, 'Add admin')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (refusedRepeat(form, banner, password.value, repeat.value)) return;
    try {
      const added = await busy(form, () => api.post<AdminUser>('/admins', { email: email.value.trim(), password: password.value }));
      form.reset();
      banner.show(notice(`Admin ${added.email} added. They log in with the password you chose.`, 'admin-added'));
      onAdded();
    } catch (err) {
      banner.show(errorBanner(err, applyFieldErrors(form, err)));
    }
  });
  return card('Add an admin', form);
}
