/**
 * The query language's faults carry a `position` (docs/queries.md, in code points): under the field, the text as it
 * was sent with a caret under the fault, as the records browser shows its filter's. Visual only (aria-hidden): the
 * message itself, with the position in words, is the field's error.
 */
import { h } from '../dom.js';

export function caretEcho(text: string, position: number, testid = 'filter-error-caret'): HTMLElement {
  // Code points, not UTF-16 units: an emoji before the fault counts once.
  const before = Array.from(text).slice(0, position).length;
  const caret = h('span', null, '^');
  const echo = h('pre', { class: 'query-caret field-error', 'aria-hidden': 'true', testid }, text, '\n', ' '.repeat(before), caret);
  // A long filter scrolls sideways in its echo: once drawn, bring the caret into view.
  requestAnimationFrame(() => {
    const offset = caret.getBoundingClientRect().left - echo.getBoundingClientRect().left;
    if (offset > echo.clientWidth - 24) echo.scrollLeft = offset - echo.clientWidth / 2;
  });
  return echo;
}
