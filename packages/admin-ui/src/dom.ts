/**
 * A tiny DOM builder. Text always goes in through text nodes, never through HTML parsing, so
 * nothing a user typed (a webhook name, a record field, a server message) can become markup.
 * There is deliberately no way to set innerHTML here.
 */
export type Child = Node | string | number | null | undefined | false | Child[];

type Handler = (event: Event) => void;

export interface Attrs {
  class?: string | undefined;
  id?: string | undefined;
  /** data-testid, the stable handle browser tests use. */
  testid?: string | undefined;
  /** Event listeners, e.g. { click: () => … }. */
  on?: Record<string, Handler> | undefined;
  /** Everything else becomes an attribute; false/null/undefined leave it out, true sets it empty. */
  [attr: string]: unknown;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'on') {
        for (const [type, fn] of Object.entries(value as Record<string, Handler>)) el.addEventListener(type, fn);
      } else if (key === 'testid') {
        el.setAttribute('data-testid', String(value));
      } else if (key === 'class') {
        el.className = String(value);
      } else if (key === 'value' && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) {
        // The default too, so form.reset() returns to it rather than to empty.
        el.defaultValue = String(value);
        el.value = String(value);
      } else if (key === 'value' && 'value' in el) {
        (el as HTMLSelectElement).value = String(value);
      } else if (key === 'checked' && el instanceof HTMLInputElement) {
        el.defaultChecked = Boolean(value);
        el.checked = Boolean(value);
      } else if (/^on/i.test(key) || key === 'style' || key === 'srcdoc') {
        // Inline handlers and inline styles are refused by the CSP anyway; refuse them here too.
        throw new Error(`h(): attribute ${key} is not allowed`);
      } else {
        el.setAttribute(key, value === true ? '' : String(value));
      }
    }
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (typeof child === 'string' || typeof child === 'number') parent.appendChild(document.createTextNode(String(child)));
    else parent.appendChild(child);
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

/** A local, readable time with the exact UTC value in the tooltip. */
export function time(iso: string | null | undefined): HTMLElement | string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const sameYear = date.getFullYear() === new Date().getFullYear();
  const text = date.toLocaleString(undefined, {
    ...(sameYear ? {} : { year: 'numeric' as const }),
    month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit',
  });
  return h('time', { datetime: iso, title: iso }, text);
}

let idCounter = 0;
/** A unique DOM id for pairing labels, inputs and their messages. */
export function uid(prefix: string): string {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}
