/**
 * Confirmation and small prompt dialogs on a real <dialog> element (not window.confirm), so they are
 * styled, keyboard-usable (Esc cancels, focus is trapped by showModal) and drivable by browser tests.
 */
import { h, type Child } from '../dom.js';

interface ConfirmOptions {
  title: string;
  message: Child;
  confirmLabel: string;
  danger?: boolean;
  /** Extra controls (e.g. a number input) shown above the buttons; read them before the promise resolves. */
  body?: HTMLElement;
}

export function confirmDialog(opts: ConfirmOptions): Promise<boolean> {
  return new Promise((resolve) => {
    const ok = h('button', { type: 'submit', value: 'ok', class: `btn ${opts.danger ? 'btn-danger' : 'btn-primary'}`, testid: 'confirm-ok' }, opts.confirmLabel);
    const cancel = h('button', { type: 'button', class: 'btn', testid: 'confirm-cancel' }, 'Cancel');
    const form = h('form', { method: 'dialog', class: 'dialog-form' },
      h('h2', { id: 'confirm-dialog-title' }, opts.title),
      h('div', { class: 'dialog-message', testid: 'confirm-message' }, opts.message),
      opts.body ?? null,
      h('div', { class: 'actions' }, cancel, ok));
    const dialog = h('dialog', { id: 'confirm-dialog', class: 'dialog', testid: 'confirm-dialog', 'aria-labelledby': 'confirm-dialog-title' }, form);
    let answered = false;
    const finish = (value: boolean) => {
      if (answered) return;
      answered = true;
      if (dialog.open) dialog.close();
      dialog.remove();
      resolve(value);
    };
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (opts.body && !form.reportValidity()) return;
      finish(true);
    });
    cancel.addEventListener('click', () => finish(false));
    dialog.addEventListener('close', () => finish(false));
    document.body.appendChild(dialog);
    dialog.showModal();
    (opts.danger ? cancel : ok).focus();
  });
}
