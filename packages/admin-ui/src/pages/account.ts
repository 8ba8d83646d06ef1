/**
 * The signed-in admin's own page: change the password (`POST /admin/v1/session/password`, SPEC §17). The server
 * checks the current password (a wrong one counts as a failed login) and ends every other session of this admin.
 */
import { api, ApiError, request, session } from '../api.js';
import { h } from '../dom.js';
import { applyFieldErrors, bannerSlot, clearFieldErrors, errorBanner, notice } from '../ui/feedback.js';
import { busy, field } from '../ui/form.js';
import type { PageContext } from '../router.js';
import { card, pageHeader } from './common.js';

/** The server's rule (packages/server/src/auth/passwords.ts MIN_PASSWORD_LENGTH); it checks, the hint only says so. */
export const PASSWORD_MIN = 12;

/**
 * Clears the form's previous faults; then, when a new password and its repetition differ, says so at the repetition
 * (its `data-path` is /repeatPassword) and answers true: the form is not sent.
 */
export function refusedRepeat(form: HTMLElement, banner: ReturnType<typeof bannerSlot>, password: string, repeat: string): boolean {
  banner.show(null);
  clearFieldErrors(form);
  if (password === repeat) return false;
  const differs = new ApiError(422, {
    type: 'about:blank', title: 'The passwords differ', status: 422, code: 'validation_failed', requestId: '',
    detail: 'Type the same new password twice.', errors: [{ path: '/repeatPassword', message: 'differs from the new password' }],
  });
  banner.show(errorBanner(differs, applyFieldErrors(form, differs)));
  return true;
}

export function passwordInput(testid: string, autocomplete: 'current-password' | 'new-password'): HTMLInputElement {
  return h('input', { type: 'password', autocomplete, required: true, testid, spellcheck: 'false' });
}

export function accountPage(ctx: PageContext): HTMLElement {
  const banner = bannerSlot();
  const current = passwordInput('account-current-password', 'current-password');
  const next = passwordInput('account-new-password', 'new-password');
  const repeat = passwordInput('account-repeat-password', 'new-password');
  const form = h('form', { class: 'stack narrow-form', id: 'password-form', testid: 'password-form', novalidate: true },
    // A hidden username lets password managers file the new password under the right account.
    h('input', { type: 'email', autocomplete: 'username', value: session.email ?? '', hidden: true, readonly: true, tabindex: '-1', 'aria-hidden': 'true' }),
    field({ label: 'Current password', id: 'account-current-password', path: '/currentPassword' }, current),
    field({ label: 'New password', id: 'account-new-password', path: '/newPassword', hint: `At least ${PASSWORD_MIN} characters.` }, next),
    field({ label: 'Repeat the new password', id: 'account-repeat-password', path: '/repeatPassword' }, repeat),
    h('div', { class: 'actions actions-start' }, h('button', { type: 'submit', class: 'btn btn-primary', testid: 'password-submit' }, 'Change password')));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (refusedRepeat(form, banner, next.value, repeat.value)) return;
    try {
      await busy(form, () => request<void>('POST', '/session/password',
        { body: { currentPassword: current.value, newPassword: next.value }, passwordCheck: true }));
      form.reset();
      banner.show(notice('Password changed. Your other sessions have ended; this one goes on.', 'password-changed'));
    } catch (err) {
      if (!ctx.alive()) return;
      if (err instanceof ApiError && err.status === 401 && await sessionAlive()) {
        // The session is fine, so the 401 was the current password.
        const wrong = new ApiError(401, { ...err.problem, title: 'Wrong current password', errors: [{ path: '/currentPassword', message: 'is not your current password' }] });
        banner.show(errorBanner(wrong, applyFieldErrors(form, wrong)));
        current.select();
        return;
      }
      banner.show(errorBanner(err, applyFieldErrors(form, err)));
    }
  });

  return h('div', { class: 'page' },
    pageHeader('Your account', { subtitle: h('span', null, 'Signed in as ', h('strong', { testid: 'account-page-email' }, session.email ?? '')) }),
    banner,
    card('Change password', form));
}

/** Whether this tab's session still lives; a dead one sends the page to the login screen (api.ts), as any 401 does. */
async function sessionAlive(): Promise<boolean> {
  try {
    await api.get('/session');
    return true;
  } catch {
    return false;
  }
}
