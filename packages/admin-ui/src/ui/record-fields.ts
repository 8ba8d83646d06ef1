/**
 * One input per collection field, fitted to its type (the server's six: text, number, integer, boolean,
 * datetime, json; packages/server/src/records/fields.ts). Each control carries `data-path="/data/<name>"`, the
 * pointer the server's validation errors name, so applyFieldErrors puts every fault beside its input.
 *
 * Values travel as the server stores them. A control left as it was drawn gives back the stored value exactly
 * (a datetime written with an offset, json formatted another way, an empty text), so a save sends only what the
 * admin really changed: a PATCH sets the named fields, and one naming nothing changes nothing.
 */
import { h, uid } from '../dom.js';
import type { Field } from '../types.js';
import { badge } from '../pages/common.js';

/** What a control holds now: a value to send, nothing (leave the field out / clear it), or a fault the browser already sees. */
export type Reading = { kind: 'value'; value: unknown } | { kind: 'empty' } | { kind: 'invalid'; message: string };

export interface FieldInput {
  field: Field;
  element: HTMLElement;
  control: HTMLElement;
  read(): Reading;
}

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

const pointer = (name: string): string => `/data/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** The input of one field, showing `value` (undefined: the record has no such field, or a new record). */
export function fieldInput(field: Field, value: unknown): FieldInput {
  const id = uid(`record-field-${field.name}`);
  const { control, hint, read } = controlFor(field, value);
  control.id = id;
  control.setAttribute('data-path', pointer(field.name));
  control.setAttribute('data-testid', `record-field-${field.name}`);
  control.setAttribute('data-type', field.type);
  if (field.required) control.setAttribute('aria-required', 'true');
  const hintId = `${id}-hint`;
  control.setAttribute('aria-describedby', hintId);
  const drawn = snapshot(control);
  const label = h('label', { for: id, class: 'record-label' },
    h('span', { class: 'record-name' }, field.name), ' ', badge(field.type, 'neutral'),
    field.required ? h('span', { class: 'record-required' }, ' required') : null);
  const element = h('div', { class: `field record-field record-field-${field.type}` },
    field.type === 'boolean' && field.required ? null : label,
    field.type === 'boolean' && field.required ? h('div', { class: 'check' }, control, label) : control,
    h('p', { class: 'hint', id: hintId }, hint));
  return {
    field, element, control,
    read: () => (snapshot(control) === drawn && value !== undefined ? { kind: 'value', value } : read()),
  };
}

const snapshot = (control: Control): string => (control instanceof HTMLInputElement && control.type === 'checkbox' ? String(control.checked) : control.value);

function controlFor(field: Field, value: unknown): { control: Control; hint: string; read(): Reading } {
  const optional = field.required ? '' : ' Empty: not set.';
  switch (field.type) {
    case 'text': {
      const control = h('textarea', { rows: '2', spellcheck: 'false', class: 'record-text' });
      control.value = typeof value === 'string' ? value : '';
      // An optional empty text is "not set"; a required one is the empty string, which the server accepts.
      return { control, hint: `Text.${optional}`, read: () => (control.value === '' && !field.required ? { kind: 'empty' } : { kind: 'value', value: control.value }) };
    }
    case 'number':
    case 'integer': {
      const integer = field.type === 'integer';
      const control = h('input', { type: 'number', step: integer ? '1' : 'any', inputmode: integer ? 'numeric' : 'decimal' });
      control.value = typeof value === 'number' ? String(value) : '';
      return {
        control, hint: `${integer ? 'A whole number' : 'A number'}.${optional}`,
        read: () => {
          if (control.validity.badInput) return { kind: 'invalid', message: 'must be a number' };
          if (control.value === '') return { kind: 'empty' };
          return { kind: 'value', value: Number(control.value) };
        },
      };
    }
    case 'boolean': {
      if (field.required) {
        const control = h('input', { type: 'checkbox', checked: value === true });
        return { control, hint: 'Checked: true; unchecked: false.', read: () => ({ kind: 'value', value: control.checked }) };
      }
      // Three states: an optional boolean may also be absent, which a checkbox cannot say.
      const control = h('select', null, h('option', { value: '' }, '— not set'), h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
      control.value = typeof value === 'boolean' ? String(value) : '';
      return { control, hint: 'true, false, or not set.', read: () => (control.value === '' ? { kind: 'empty' } : { kind: 'value', value: control.value === 'true' }) };
    }
    case 'datetime': {
      const control = h('input', { type: 'datetime-local', step: '1' });
      const shown = typeof value === 'string' ? utcLocal(value) : null;
      if (shown?.includes('.')) control.step = '0.001';
      control.value = shown ?? '';
      return {
        control, hint: `In UTC, to the second; stored as RFC 3339 (…Z).${optional}`,
        read: () => {
          if (control.validity.badInput) return { kind: 'invalid', message: 'is not a complete date and time' };
          if (control.value === '') return { kind: 'empty' };
          // valueAsNumber reads a local date-time as if it were UTC: exactly the instant the label promises.
          return { kind: 'value', value: new Date(control.valueAsNumber).toISOString().replace('.000Z', 'Z') };
        },
      };
    }
    case 'json': {
      const control = h('textarea', { rows: '4', spellcheck: 'false', class: 'record-json mono' });
      control.value = value === undefined || value === null ? '' : JSON.stringify(value, null, 2);
      return {
        control, hint: `Any JSON value: an object, an array, a string in quotes, a number, true or false.${optional}`,
        read: () => {
          if (control.value.trim() === '') return { kind: 'empty' };
          try {
            return { kind: 'value', value: JSON.parse(control.value) as unknown };
          } catch (err) {
            return { kind: 'invalid', message: `is not valid JSON (${err instanceof Error ? err.message : String(err)})` };
          }
        },
      };
    }
  }
}

/** `2026-01-31T12:00:00+02:00` → `2026-01-31T10:00:00` (UTC, the datetime-local format); null for a value that is no date. */
function utcLocal(iso: string): string | null {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return null;
  const text = new Date(ms).toISOString();
  return text.endsWith('.000Z') ? text.slice(0, 19) : text.slice(0, 23);
}
