/**
 * The editable list of collection fields (name, type, required, indexed) used to create a collection and to
 * add fields to one. Rows are renumbered on removal so ids and error paths (/fields/0/name) stay in step.
 */
import { h } from '../dom.js';
import { FIELD_TYPES, type Field } from '../types.js';
import { button } from './form.js';

export interface FieldList {
  element: HTMLElement;
  addRow(): void;
  values(): Field[];
  count(): number;
}

/** `prefix` keeps ids unique per form; `pathBase` is the index of the first new row in the request body. */
export function fieldList(prefix: string, opts: { pathBase?: () => number; initialRows?: number; legend?: string; hint?: string } = {}): FieldList {
  const rows = h('ol', { class: 'field-rows', testid: `${prefix}-rows` });
  const addBtn = button('+ Add field', { testid: `${prefix}-add-field`, id: `${prefix}-add-field`, class: 'btn btn-small' });

  const renumber = () => {
    const base = opts.pathBase?.() ?? 0;
    Array.from(rows.children).forEach((row, i) => {
      for (const el of Array.from(row.querySelectorAll<HTMLElement>('[data-part]'))) {
        const part = el.getAttribute('data-part') ?? '';
        el.id = `${prefix}-${part}-${i}`;
        el.setAttribute('data-testid', `${prefix}-${part}-${i}`);
        if (part !== 'remove') el.setAttribute('data-path', `/fields/${base + i}/${part}`);
      }
      for (const label of Array.from(row.querySelectorAll<HTMLLabelElement>('label[data-for-part]'))) {
        label.htmlFor = `${prefix}-${label.getAttribute('data-for-part')}-${i}`;
      }
      row.querySelector('.row-number')!.textContent = `Field ${i + 1}`;
    });
  };

  const addRow = () => {
    const name = h('input', { type: 'text', 'data-part': 'name', required: true, pattern: '[a-z][a-z0-9_]{0,62}', autocomplete: 'off', spellcheck: 'false', placeholder: 'title' });
    const type = h('select', { 'data-part': 'type' }, FIELD_TYPES.map((t) => h('option', { value: t }, t)));
    const required = h('input', { type: 'checkbox', 'data-part': 'required' });
    const indexed = h('input', { type: 'checkbox', 'data-part': 'indexed' });
    // A json field neither sorts nor compares, so it cannot be indexed.
    type.addEventListener('change', () => {
      indexed.disabled = type.value === 'json';
      if (indexed.disabled) indexed.checked = false;
    });
    const remove = button('Remove', { 'data-part': 'remove', class: 'btn btn-small btn-ghost' });
    const row = h('li', { class: 'field-row' },
      h('span', { class: 'row-number visually-hidden' }),
      h('div', { class: 'field' }, h('label', { 'data-for-part': 'name' }, 'Field name'), name),
      h('div', { class: 'field' }, h('label', { 'data-for-part': 'type' }, 'Type'), type),
      h('div', { class: 'check' }, required, h('label', { 'data-for-part': 'required' }, 'Required')),
      h('div', { class: 'check' }, indexed, h('label', { 'data-for-part': 'indexed' }, 'Indexed')),
      remove);
    remove.addEventListener('click', () => {
      row.remove();
      renumber();
      rows.dispatchEvent(new Event('input', { bubbles: true }));
    });
    rows.appendChild(row);
    renumber();
    const label = remove.closest('li')?.querySelector('.row-number')?.textContent ?? '';
    remove.setAttribute('aria-label', `Remove ${label.toLowerCase()}`);
  };

  addBtn.addEventListener('click', () => {
    addRow();
    (rows.lastElementChild?.querySelector('input') as HTMLInputElement | null)?.focus();
  });
  for (let i = 0; i < (opts.initialRows ?? 1); i += 1) addRow();

  return {
    element: h('fieldset', { class: 'fieldset' }, h('legend', null, opts.legend ?? 'Fields'),
      opts.hint ? h('p', { class: 'hint fieldset-hint' }, opts.hint) : null, rows, addBtn),
    addRow,
    count: () => rows.children.length,
    values: () => Array.from(rows.children).map((row) => ({
      name: (row.querySelector('[data-part="name"]') as HTMLInputElement).value.trim(),
      type: (row.querySelector('[data-part="type"]') as HTMLSelectElement).value as Field['type'],
      required: (row.querySelector('[data-part="required"]') as HTMLInputElement).checked,
      indexed: (row.querySelector('[data-part="indexed"]') as HTMLInputElement).checked,
    })),
  };
}

/** How many rows a saved draft had, from its ids (`<prefix>-name-<i>`). */
export function draftRowCount(draft: Record<string, unknown> | null, prefix: string): number {
  if (!draft) return 0;
  let max = -1;
  for (const key of Object.keys(draft)) {
    const m = new RegExp(`^${prefix}-name-(\\d+)$`).exec(key);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return max + 1;
}
