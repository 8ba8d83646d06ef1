/**
 * The "indexed" switch of one collection field. It saves at once (PATCH of the collection), and the
 * server answers only when the index is usable, so the switch stays busy while the index builds.
 */
import { h } from '../dom.js';
import type { Field } from '../types.js';

/** capabilities.limits.indexedFieldsMax; the server enforces it, the UI only mentions it. */
export const MAX_INDEXED = 16;

export function indexedToggle(field: Field, index: number, save: (indexed: boolean) => Promise<void>,
  onError: (err: unknown) => void): HTMLElement {
  const id = `field-indexed-${index}`;
  const isJson = field.type === 'json';
  const input = h('input', {
    type: 'checkbox', id, role: 'switch', testid: `field-indexed-${index}`, 'data-field': field.name, 'data-path': `/fields/${index}/indexed`,
    checked: field.indexed === true, disabled: isJson,
    title: isJson ? 'json fields neither sort nor compare, so they cannot be indexed' : undefined,
  });
  const status = h('span', { class: 'index-status muted small', testid: `field-indexed-status-${index}`, role: 'status' });
  const showState = (indexed: boolean) => {
    status.textContent = isJson ? 'not indexable' : indexed ? 'indexed' : 'not indexed';
  };
  showState(field.indexed === true);
  input.addEventListener('change', async () => {
    const wanted = input.checked;
    input.disabled = true;
    status.textContent = wanted ? 'building index…' : 'dropping index…';
    try {
      await save(wanted);
      showState(wanted);
    } catch (err) {
      input.checked = !wanted;
      showState(!wanted);
      onError(err);
    } finally {
      input.disabled = false;
    }
  });
  return h('div', { class: 'check index-toggle' }, input,
    h('label', { for: id, class: 'visually-hidden' }, `Index ${field.name}`), status);
}
