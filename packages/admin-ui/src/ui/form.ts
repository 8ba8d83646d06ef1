/** Labelled form controls; every input has a <label for>, a stable id, and a data-path for error mapping. */
import { h, type Child } from '../dom.js';

interface FieldOptions {
  label: string;
  id: string;
  /** JSON Pointer of the request-body member this control fills. */
  path?: string;
  hint?: string;
  className?: string;
}

export function field(opts: FieldOptions, control: HTMLElement): HTMLElement {
  const hintId = opts.hint ? `${opts.id}-hint` : undefined;
  control.id = opts.id;
  if (opts.path) control.setAttribute('data-path', opts.path);
  if (hintId) control.setAttribute('aria-describedby', hintId);
  return h('div', { class: `field ${opts.className ?? ''}`.trim() },
    h('label', { for: opts.id }, opts.label),
    control,
    opts.hint && h('p', { class: 'hint', id: hintId }, opts.hint),
  );
}

export function textInput(attrs: Record<string, unknown> = {}): HTMLInputElement {
  return h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', ...attrs });
}

export function select(options: { value: string; label: string }[], attrs: Record<string, unknown> = {}): HTMLSelectElement {
  const el = h('select', attrs, options.map((o) => h('option', { value: o.value }, o.label)));
  if (attrs.value !== undefined) el.value = String(attrs.value);
  return el;
}

export function checkbox(label: string, id: string, attrs: Record<string, unknown> = {}): HTMLElement {
  return h('div', { class: 'check' },
    h('input', { type: 'checkbox', id, ...attrs }),
    h('label', { for: id }, label));
}

export function button(label: Child, attrs: Record<string, unknown> = {}): HTMLButtonElement {
  return h('button', { type: 'button', class: 'btn', ...attrs }, label);
}

/** Disables a form's controls while a request runs, so a double click cannot send it twice. */
export async function busy<T>(form: HTMLElement, work: () => Promise<T>): Promise<T> {
  const controls = Array.from(form.querySelectorAll<HTMLButtonElement | HTMLInputElement>('button, input, select, textarea'))
    .filter((c) => !c.disabled);
  form.setAttribute('aria-busy', 'true');
  for (const c of controls) c.disabled = true;
  try {
    return await work();
  } finally {
    for (const c of controls) c.disabled = false;
    form.removeAttribute('aria-busy');
  }
}
