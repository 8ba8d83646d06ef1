/**
 * Prev/Next paging over the API's opaque cursors. The API only knows "next", so the cursors of the
 * pages already seen are kept on a stack to go back.
 */
import { h } from '../dom.js';

export interface Pager {
  element: HTMLElement;
  /** Cursor of the page to load now (null for the first page). */
  readonly cursor: string | null;
  /** Record the answer of the page just loaded. */
  loaded(nextCursor: string | null, count: number): void;
  reset(): void;
}

export function pager(load: () => void, testid = 'pager'): Pager {
  const stack: (string | null)[] = [null];
  let next: string | null = null;
  const prevBtn = h('button', { type: 'button', class: 'btn', testid: `${testid}-prev`, disabled: true }, '← Prev');
  const nextBtn = h('button', { type: 'button', class: 'btn', testid: `${testid}-next`, disabled: true }, 'Next →');
  const info = h('span', { class: 'pager-info', testid: `${testid}-info` });
  prevBtn.addEventListener('click', () => {
    if (stack.length > 1) {
      stack.pop();
      load();
    }
  });
  nextBtn.addEventListener('click', () => {
    if (next) {
      stack.push(next);
      load();
    }
  });
  const element = h('nav', { class: 'pager', 'aria-label': 'Pages', testid, hidden: true }, prevBtn, info, nextBtn);
  return {
    element,
    get cursor() {
      return stack[stack.length - 1] ?? null;
    },
    loaded(nextCursor, count) {
      next = nextCursor;
      prevBtn.disabled = stack.length <= 1;
      nextBtn.disabled = !nextCursor;
      // One page only: nothing to page through, so the control stays out of the way.
      element.hidden = stack.length <= 1 && !nextCursor;
      info.textContent = count === 0 ? `Page ${stack.length} · empty` : `Page ${stack.length} · ${count} shown`;
    },
    reset() {
      stack.length = 1;
      next = null;
    },
  };
}
