import { ApiError, request } from '../api.js';
import { h } from '../dom.js';
import { applyFieldErrors, bannerSlot, errorBanner } from '../ui/feedback.js';
import { busy, field } from '../ui/form.js';
import type { SessionInfo } from '../types.js';
import { authLayout } from './login.js';

interface SetupOptions {
  token: string;
  onDone: (info: SessionInfo) => void;
}

export function setupPage(opts: SetupOptions): HTMLElement {
  const banner = bannerSlot();
  if (!opts.token) {
    banner.show(errorBanner(new Error('This setup link has no token. Use the full link printed in the server log.')));
  }
  const email = h('input', { type: 'email', autocomplete: 'username', required: true, testid: 'setup-email' });
  const password = h('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: '12', testid: 'setup-password' });
  const confirm = h('input', { type: 'password', autocomplete: 'new-password', required: true, testid: 'setup-password-confirm' });
  const form = h('form', { class: 'stack', id: 'setup-form', testid: 'setup-form', novalidate: true },
    field({ label: 'Email', id: 'setup-email', path: '/email' }, email),
    field({ label: 'Password', id: 'setup-password', path: '/password', hint: 'At least 12 characters.' }, password),
    field({ label: 'Repeat password', id: 'setup-password-confirm' }, confirm),
    h('button', { type: 'submit', class: 'btn btn-primary btn-block', testid: 'setup-submit' }, 'Create administrator'));
  confirm.addEventListener('input', () => confirm.setCustomValidity(''));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    confirm.setCustomValidity(confirm.value === password.value ? '' : 'The passwords differ.');
    if (!form.reportValidity()) return;
    banner.show(null);
    const body = { token: opts.token, email: email.value.trim(), password: password.value };
    try {
      await busy(form, () => request('POST', '/setup', { anonymous: true, body }));
    } catch (err) {
      const unclaimed = applyFieldErrors(form, err);
      banner.show(h('div', { class: 'stack' }, errorBanner(err, unclaimed),
        err instanceof ApiError && err.code === 'conflict'
          ? h('p', null, 'svc is already set up. ', h('a', { href: '/admin/#/login', testid: 'setup-login-link' }, 'Log in instead'), '.')
          : null));
      return;
    }
    try {
      const info = await busy(form, () => request<SessionInfo>('POST', '/session', {
        anonymous: true, body: { email: body.email, password: body.password },
      }));
      opts.onDone(info);
    } catch (err) {
      banner.show(h('div', null, errorBanner(err),
        h('p', null, 'The administrator was created. ', h('a', { href: '/admin/#/login' }, 'Go to the login page'), '.')));
    }
  });
  queueMicrotask(() => email.focus());
  return authLayout('Set up svc', 'Create the first administrator account. This link works once.', banner, form);
}
