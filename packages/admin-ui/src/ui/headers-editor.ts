/**
 * The static headers of a webhook target (SPEC §13): rows of name and value, added and removed.
 *
 * The server never answers a header's value, only its last four characters (`…a1b2`), and a PATCH replaces
 * the whole object. So an edit form shows the saved names with their masked values as placeholders and
 * sends nothing about headers until the list is changed; once it is, every row needs its value typed
 * again, and a masked value is never sent back (it would become the header's new value).
 *
 * Values are credentials (a receiver's API key): they are kept out of the form's sessionStorage draft.
 */
import { h } from '../dom.js';
import { HEADERS_MAX, HEADER_VALUE_MAX_BYTES } from '../types.js';
import { button } from './form.js';

export interface HeadersEditor {
  element: HTMLElement;
  /** What a request should carry: undefined to leave the saved headers alone, null for none, else the object. */
  value(): Record<string, string> | null | undefined;
}

/** A header name as a JSON Pointer segment (RFC 6901), as the server's `errors[].path` `/headers/<name>` writes it. */
export const headerPath = (name: string): string => `/headers/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;

const REENTER = 'Re-enter this value: saving replaces every header, and the saved value is not shown.';

export function headersEditor(saved: Record<string, string> | null, editing: boolean): HeadersEditor {
  const savedEntries = Object.entries(saved ?? {});
  const rows = h('ol', { class: 'field-rows', testid: 'header-rows' });
  const add = button('+ Add header', { class: 'btn btn-small', testid: 'headers-add', id: 'webhook-headers-add' });
  const keep = button('Keep the saved headers', { class: 'btn btn-small btn-ghost', testid: 'headers-keep', hidden: true });
  // An edit form leaves the saved headers alone until the list is changed; a create form always sends what it shows.
  let touched = !editing;

  const rowValues = () => Array.from(rows.children).map((row) => ({
    name: row.querySelector<HTMLInputElement>('[data-part="name"]')!,
    value: row.querySelector<HTMLInputElement>('[data-part="value"]')!,
  }));

  // The browser's own messages (reportValidity) say what is missing, before anything is sent.
  const check = () => {
    const seen = new Set<string>();
    for (const { name, value } of rowValues()) {
      const key = name.value.trim().toLowerCase();
      const blank = key === '' && value.value === '';
      name.setCustomValidity(!blank && key === '' ? 'Name this header.' : key !== '' && seen.has(key) ? 'This header is listed twice.' : '');
      value.setCustomValidity(blank || value.value !== '' ? ''
        : touched && value.hasAttribute('data-masked') ? REENTER : touched ? 'Enter a value.' : '');
      if (key) seen.add(key);
      name.setAttribute('data-path', headerPath(name.value.trim()));
    }
    add.disabled = rows.children.length >= HEADERS_MAX;
    keep.hidden = !editing || !touched || savedEntries.length === 0;
  };

  const renumber = () => {
    Array.from(rows.children).forEach((row, i) => {
      for (const el of Array.from(row.querySelectorAll<HTMLElement>('[data-part]'))) {
        const part = el.getAttribute('data-part') ?? '';
        el.id = `webhook-header-${part}-${i}`;
        el.setAttribute('data-testid', `header-${part}-${i}`);
      }
      for (const label of Array.from(row.querySelectorAll<HTMLLabelElement>('label[data-for-part]'))) {
        label.htmlFor = `webhook-header-${label.getAttribute('data-for-part')}-${i}`;
      }
      row.querySelector('[data-part="remove"]')!.setAttribute('aria-label', `Remove header ${i + 1}`);
    });
    check();
  };

  const addRow = (name = '', masked: string | null = null) => {
    const nameInput = h('input', { type: 'text', 'data-part': 'name', 'data-no-draft': true, value: name, autocomplete: 'off', spellcheck: 'false', placeholder: 'X-Api-Key', maxlength: '256' });
    const valueInput = h('input', {
      type: 'text', 'data-part': 'value', 'data-no-draft': true, autocomplete: 'off', spellcheck: 'false', maxlength: String(HEADER_VALUE_MAX_BYTES),
      placeholder: masked ?? 'value', 'data-masked': masked !== null,
    });
    const remove = button('Remove', { 'data-part': 'remove', class: 'btn btn-small btn-ghost' });
    const row = h('li', { class: 'header-row' },
      h('div', { class: 'field' }, h('label', { 'data-for-part': 'name' }, 'Header name'), nameInput),
      h('div', { class: 'field' }, h('label', { 'data-for-part': 'value' }, masked === null ? 'Value' : `Value (saved: ${masked})`), valueInput),
      remove);
    remove.addEventListener('click', () => {
      touched = true;
      row.remove();
      renumber();
      rows.dispatchEvent(new Event('input', { bubbles: true }));
      (rows.querySelector('input') ?? add).focus();
    });
    rows.appendChild(row);
    return nameInput;
  };

  const reset = () => {
    rows.replaceChildren();
    for (const [name, masked] of savedEntries) addRow(name, masked);
    renumber();
  };

  rows.addEventListener('input', () => {
    touched = true;
    check();
  });
  add.addEventListener('click', () => {
    touched = true;
    const input = addRow();
    renumber();
    input.focus();
  });
  keep.addEventListener('click', () => {
    touched = false;
    reset();
    add.focus();
  });
  reset();

  const hint = editing && savedEntries.length > 0
    ? 'Saved values are not shown, only their last four characters. The saved headers stay as they are unless you change this list; a change replaces them all, so type again the value of every header you keep.'
    : `Sent with every attempt, e.g. a receiver's API key. Up to ${HEADERS_MAX}; values are stored encrypted and never shown again in full.`;
  const element = h('fieldset', { class: 'fieldset', id: 'webhook-headers', 'data-path': '/headers', testid: 'webhook-headers' },
    h('legend', null, 'Headers'),
    h('p', { class: 'hint fieldset-hint', testid: 'headers-hint' }, hint),
    rows,
    h('div', { class: 'actions actions-start' }, add, keep));

  return {
    element,
    value: () => {
      if (!touched) return undefined;
      const entries = rowValues()
        .map(({ name, value }) => [name.value.trim(), value.value] as const)
        .filter(([name, value]) => name !== '' || value !== '');
      if (entries.length === 0) return editing ? (savedEntries.length > 0 ? null : undefined) : undefined;
      return Object.fromEntries(entries);
    },
  };
}
