/** Pieces every page uses: its heading, tables that scroll on narrow screens, state badges. */
import { h, type Child } from '../dom.js';

export function pageHeader(title: Child, options: { subtitle?: Child; actions?: Child[]; testid?: string } = {}): HTMLElement {
  return h('div', { class: 'page-header' },
    h('div', { class: 'page-title' },
      h('h1', { testid: options.testid ?? 'page-title' }, title),
      options.subtitle ? h('p', { class: 'subtitle' }, options.subtitle) : null),
    options.actions?.length ? h('div', { class: 'page-actions' }, options.actions) : null);
}

export function card(title: Child, ...children: Child[]): HTMLElement {
  return h('section', { class: 'card' }, title ? h('h2', { class: 'card-title' }, title) : null, children);
}

/** A table inside a horizontally scrolling frame; on phones each row reflows into a labelled block. */
export function table(headers: string[], rows: HTMLTableRowElement[], opts: { testid: string; caption: string; empty: string }): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty', testid: `${opts.testid}-empty` }, opts.empty);
  for (const row of rows) {
    Array.from(row.cells).forEach((cell, i) => {
      if (!cell.hasAttribute('data-label')) cell.setAttribute('data-label', headers[i] ?? '');
    });
  }
  return h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': opts.caption },
    h('table', { class: 'table', testid: opts.testid },
      h('caption', { class: 'visually-hidden' }, opts.caption),
      h('thead', null, h('tr', null, headers.map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', null, rows)));
}

export function loading(text = 'Loading…'): HTMLElement {
  return h('p', { class: 'loading', role: 'status' }, text);
}

export function badge(text: string, kind: string, testid?: string): HTMLElement {
  return h('span', { class: `badge badge-${kind}`, testid }, text);
}

/** A <pre> holding pretty JSON, inserted as text. */
export function jsonBlock(value: unknown, testid?: string): HTMLElement {
  return h('pre', { class: 'json', testid, tabindex: '0' }, JSON.stringify(value, null, 2));
}
