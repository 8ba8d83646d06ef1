import { ApiError, request } from '../api.js';
import { h } from '../dom.js';
import { applyFieldErrors, bannerSlot, errorBanner, notice } from '../ui/feedback.js';
import { busy, field } from '../ui/form.js';
import type { SessionInfo } from '../types.js';

interface LoginOptions {
  message: string | null;
  onLoggedIn: (info: SessionInfo) => void;
}

export function loginPage(opts: LoginOptions): HTMLElement {
  const banner = bannerSlot();
  if (opts.message) banner.show(notice(opts.message, 'login-message'));
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true, testid: 'login-email' });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true, testid: 'login-password' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block', testid: 'login-submit' }, 'Log in');
  const form = h('form', { class: 'stack', id: 'login-form', testid: 'login-form', novalidate: true },
    field({ label: 'Email', id: 'login-email', path: '/email' }, email),
    field({ label: 'Password', id: 'login-password', path: '/password' }, password),
    submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    banner.show(null);
    try {
      const info = await busy(form, () => request<SessionInfo>('POST', '/session', {
        anonymous: true, body: { email: email.value.trim(), password: password.value },
      }));
      password.value = '';
      opts.onLoggedIn(info);
    } catch (err) {
      const unclaimed = applyFieldErrors(form, err);
      banner.show(errorBanner(plainly(err), unclaimed));
      password.select();
    }
  });
  queueMicrotask(() => email.focus());
  return authLayout('Log in to svc', 'Administer collections, API tokens and webhooks.', banner, form);
}

/**
 * A refused login in the words of the one who typed it: the server's 401 is titled "Authentication required",
 * which reads as if logging in were the missing step. Which of the two was wrong is not said (nor does the server).
 */
function plainly(err: unknown): unknown {
  if (!(err instanceof ApiError)) return err;
  if (err.status === 401) {
    return new ApiError(401, { ...err.problem, title: 'Wrong email or password', detail: 'Check both and try again; after repeated failures, logins are refused for a while.' });
  }
  if (err.code === 'rate_limited') return new ApiError(err.status, { ...err.problem, title: 'Too many failed logins' });
  return err;
}

export function authLayout(title: string, subtitle: string, ...children: HTMLElement[]): HTMLElement {
  return h('main', { class: 'auth', id: 'main' },
    h('div', { class: 'auth-card' },
      h('div', { class: 'brand brand-large' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }, 's'), 'svc admin'),
      h('h1', { testid: 'page-title' }, title),
      h('p', { class: 'subtitle' }, subtitle),
      children));
}
