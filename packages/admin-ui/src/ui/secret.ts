/**
 * A credential shown exactly once (API token, webhook signing secret, an ed25519 target's new public key), with a
 * copy button and a warning; and the copyable value alone, for a public key that every answer shows.
 */
import { h } from '../dom.js';
import { copyToClipboard } from './clipboard.js';

export interface SecretOptions {
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
  const copy = copyableValue({ id: valueId, value: opts.value, label: opts.title, testid: opts.testid, copyTestid: opts.copyTestid });
  return h('section', { class: 'secret-panel', testid: `${opts.testid}-panel`, 'aria-labelledby': `${valueId}-title` },
    h('h2', { id: `${valueId}-title` }, opts.title),
    h('p', { class: 'secret-warning', testid: 'secret-warning' }, opts.warning),
    copy.row,
    copy.status);
}

interface CopyableOptions {
  id: string;
  value: string;
  /** The accessible name of the value. */
  label: string;
  testid: string;
  copyTestid: string;
  /** data-testid of the "Copied" line; give another one where two copy buttons can share a page. */
  statusTestid?: string;
}

/** A read-only value beside its Copy button, and the line that says whether the copy worked. */
export function copyableValue(opts: CopyableOptions): { row: HTMLElement; status: HTMLElement } {
  const output = h('input', {
    type: 'text', id: opts.id, class: 'secret-value mono', readonly: true, value: opts.value,
    testid: opts.testid, 'aria-label': opts.label, spellcheck: 'false', autocomplete: 'off',
  });
  const status = h('span', { class: 'copy-status', role: 'status', testid: opts.statusTestid ?? 'copy-status' });
  const copy = h('button', {
    type: 'button', class: 'btn btn-primary', testid: opts.copyTestid,
    'aria-controls': opts.id,
    on: {
      click: async () => {
        status.textContent = (await copyToClipboard(output.value, output)) ? 'Copied' : 'Select the value and copy it by hand';
      },
    },
  }, 'Copy');
  output.addEventListener('focus', () => output.select());
  return { row: h('div', { class: 'secret-row' }, output, copy), status };
}
