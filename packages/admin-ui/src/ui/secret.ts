/** A credential shown exactly once (API token, webhook signing secret), with a copy button and a warning. */
import { h } from '../dom.js';

interface SecretOptions {
  title: string;
  value: string;
  /** data-testid of the value itself, e.g. "webhook-secret" or "token-value". */
  testid: string;
  /** data-testid of the copy button. */
  copyTestid: string;
  warning: string;
}

export function oneTimeSecret(opts: SecretOptions): HTMLElement {
  const valueId = `${opts.testid}-value`;
  const output = h('input', {
    type: 'text', id: valueId, class: 'secret-value mono', readonly: true, value: opts.value,
    testid: opts.testid, 'aria-label': opts.title, spellcheck: 'false', autocomplete: 'off',
  });
  const status = h('span', { class: 'copy-status', role: 'status', testid: 'copy-status' });
  const copy = h('button', {
    type: 'button', class: 'btn btn-primary', testid: opts.copyTestid,
    'aria-controls': valueId,
    on: {
      click: async () => {
        status.textContent = (await copyText(output)) ? 'Copied' : 'Select the value and copy it by hand';
      },
    },
  }, 'Copy');
  output.addEventListener('focus', () => output.select());
  return h('section', { class: 'secret-panel', testid: `${opts.testid}-panel`, 'aria-labelledby': `${valueId}-title` },
    h('h2', { id: `${valueId}-title` }, opts.title),
    h('p', { class: 'secret-warning', testid: 'secret-warning' }, opts.warning),
    h('div', { class: 'secret-row' }, output, copy),
    status);
}

async function copyText(input: HTMLInputElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(input.value);
    return true;
  } catch {
    // No clipboard permission (plain http, a locked-down browser): fall back to the selection.
    input.focus();
    input.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
}
