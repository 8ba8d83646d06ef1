/**
 * A long identifier in a compact place (a table cell, a status line): one line, never broken across lines, cut in
 * the middle with an ellipsis when the place is too narrow, the whole value in its tooltip, and a Copy button beside
 * it, since the cut text cannot be selected whole. The middle, because svc's ids begin with their creation time: jobs
 * made in the same second share their first 12 characters, and only the end tells them apart. Where the row has
 * the width (phones' cards) nothing is cut.
 */
import { h } from '../dom.js';
import { copyToClipboard } from './clipboard.js';

interface CopyIdOptions {
  /** What the value is, for the button's accessible name: "Copy delivery id del_…". */
  label: string;
  /** A link to the thing the id names. */
  href?: string;
  /** The tooltip, when it should say more than the value. */
  title?: string;
  testid?: string;
}

/** Characters always shown at the end: ULIDs' last 6 are random, enough to tell a page of ids apart. */
const TAIL = 6;

export function copyId(value: string, opts: CopyIdOptions): HTMLElement {
  // The tail never shrinks; the head takes the ellipsis (CSS text-overflow cuts only at an end).
  const parts = [h('span', { class: 'id-head' }, value.slice(0, -TAIL)), h('span', { class: 'id-tail' }, value.slice(-TAIL))];
  const title = opts.title ?? value;
  const text = opts.href
    ? h('a', { href: opts.href, class: 'id-text mono', title, testid: opts.testid }, parts)
    : h('span', { class: 'id-text mono', title, testid: opts.testid }, parts);
  const status = h('span', { class: 'visually-hidden', role: 'status' });
  const button = h('button', { type: 'button', class: 'btn-copy', 'aria-label': `Copy ${opts.label} ${value}`, title: 'Copy', testid: 'copy-id' }, 'Copy');
  let reset: number | undefined;
  button.addEventListener('click', async (event) => {
    // Inside a clickable row the copy is all the click means.
    event.stopPropagation();
    const done = await copyToClipboard(value, text);
    // The visible word stays inside the accessible name (WCAG 2.5.3), so both change together.
    const word = done ? 'Copied' : 'Select';
    button.textContent = word;
    button.setAttribute('aria-label', `${word} ${opts.label} ${value}`);
    status.textContent = done ? `${opts.label} copied` : 'Select the id and copy it by hand';
    window.clearTimeout(reset);
    reset = window.setTimeout(() => {
      button.textContent = 'Copy';
      button.setAttribute('aria-label', `Copy ${opts.label} ${value}`);
      status.textContent = '';
    }, 1500);
  });
  return h('span', { class: 'id-copy', 'data-value': value }, text, button, status);
}
