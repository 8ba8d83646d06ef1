/**
 * The records of one collection: a filter in the query language of docs/queries.md, sortable columns
 * and the total count. The filter and sort in force travel with every page's request, because the
 * server refuses a cursor issued for another query. A row opens its record in the editor (record-page.ts).
 */
import { api, ApiError, seg } from '../api.js';
import { h, replace, time, uid } from '../dom.js';
import { currentHash, href, match, navigate, type PageContext } from '../router.js';
import { errorBanner, notice } from '../ui/feedback.js';
import { button, select } from '../ui/form.js';
import { pager } from '../ui/pager.js';
import type { Collection, Field, RecordItem, RecordList } from '../types.js';
import { card, loading } from './common.js';

const PAGE_SIZE = 20;

/** A line for the records card drawn next (after the editor deleted a record and came back), shown once. */
let note: { collection: string; text: string } | null = null;
export function leaveRecordsNote(collection: string, text: string): void {
  note = { collection, text };
}

interface Sort {
  key: string;
  descending: boolean;
}

interface Column {
  label: string;
  /** The name `sort=` takes; null for a column that does not sort (json fields). */
  sortKey: string | null;
  cell(r: RecordItem): HTMLTableCellElement;
}

export function recordsCard(ctx: PageContext, collection: Collection): HTMLElement {
  // From the address as it is now, not ctx.query: the card is redrawn after "Save fields", and the
  // query may have changed since the page opened (replaceState below).
  const query = match(currentHash())?.query ?? ctx.query;
  let filter = query.get('filter') ?? '';
  let sort: Sort | null = parseSort(query.get('sort'), collection);
  let sequence = 0;

  const list = h('div', null, loading());
  const count = h('p', { class: 'records-count muted small', testid: 'records-count', role: 'status' });
  const paging = pager(() => void load(), 'records-pager');

  const inputId = uid('records-filter');
  const input = h('input', {
    type: 'text', id: inputId, testid: 'records-filter', autocomplete: 'off', spellcheck: 'false', value: filter,
    placeholder: exampleFilter(collection.fields), 'aria-describedby': `${inputId}-hint`,
  });
  const problem = h('div', { class: 'query-error', testid: 'filter-error', id: `${inputId}-error`, hidden: true });
  const clear = button('Clear', { class: 'btn btn-small btn-ghost', testid: 'records-filter-clear' });
  const form = h('form', { class: 'query-form', testid: 'records-filter-form', role: 'search', novalidate: true },
    h('div', { class: 'field query-field' },
      h('label', { for: inputId }, 'Filter'),
      h('div', { class: 'query-row' }, input,
        h('button', { type: 'submit', class: 'btn btn-small btn-primary', testid: 'records-filter-apply' }, 'Apply'),
        clear),
      h('p', { class: 'hint', id: `${inputId}-hint` },
        'Compare fields with = != > >= < <= ~ (contains) !~, combine with && || ! and parentheses. ',
        'Text goes in quotes; = null matches an absent field.'),
      problem));

  const columns: Column[] = [
    { label: 'ID', sortKey: 'id', cell: (r) => h('td', null, h('a', { href: recordHref(collection.name, r.id), class: 'mono nowrap', testid: 'record-link' }, r.id)) },
    { label: 'Version', sortKey: 'version', cell: (r) => h('td', null, String(r.version)) },
    { label: 'Updated', sortKey: 'updatedAt', cell: (r) => h('td', null, time(r.updatedAt)) },
    ...collection.fields.map((f): Column => ({
      label: f.name,
      sortKey: f.type === 'json' ? null : f.name,
      cell: (r) => h('td', { class: 'cell-value' }, showValue(r.data[f.name])),
    })),
  ];

  // Phones hide the table header (rows reflow into blocks), so there the sort is a select.
  const sortable = columns.filter((c) => c.sortKey);
  const sortSelect = select([{ value: '', label: 'Creation order' }, ...sortable.flatMap((c) => [
    { value: c.sortKey!, label: `${c.label} ↑` }, { value: `-${c.sortKey!}`, label: `${c.label} ↓` }])],
  { testid: 'records-sort', id: `${inputId}-sort`, value: sortParam(sort) ?? '' });
  sortSelect.addEventListener('change', () => {
    sort = parseSort(sortSelect.value, collection);
    reload();
  });
  const sortField = h('div', { class: 'field phone-only' }, h('label', { for: sortSelect.id }, 'Sort by'), sortSelect);

  // The query lives in the address too, so a reload or a shared link shows the same list. replaceState
  // fires no hashchange, so the page (and unsaved edits in the field form) stays as it is.
  const reload = () => {
    history.replaceState(null, '', href(`/collections/${encodeURIComponent(collection.name)}`, { filter, sort: sortParam(sort) }));
    sortSelect.value = sortParam(sort) ?? '';
    paging.reset();
    void load();
  };

  const showProblem = (err: unknown): boolean => {
    const fault = err instanceof ApiError && err.code === 'invalid_query'
      ? err.problem.errors?.find((e) => e.path === 'filter') : undefined;
    if (!fault) return false;
    const position = typeof fault.position === 'number' ? fault.position : null;
    const caret = h('span', null, '^');
    const echo = h('pre', { class: 'query-caret', 'aria-hidden': 'true', testid: 'filter-error-caret' },
      filter, '\n', ' '.repeat(position ?? 0), caret);
    replace(problem,
      h('p', { class: 'field-error', testid: 'filter-error-message' }, fault.message,
        position === null ? null : h('span', { testid: 'filter-error-position' }, ` (at position ${position})`)),
      position === null ? null : echo);
    problem.hidden = false;
    // A long filter scrolls sideways in its echo: bring the caret into view.
    const offset = caret.getBoundingClientRect().left - echo.getBoundingClientRect().left;
    if (offset > echo.clientWidth - 24) echo.scrollLeft = offset - echo.clientWidth / 2;
    input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', `${inputId}-hint ${problem.id}`);
    return true;
  };
  const hideProblem = () => {
    problem.hidden = true;
    replace(problem);
    input.removeAttribute('aria-invalid');
    input.setAttribute('aria-describedby', `${inputId}-hint`);
  };

  const load = async () => {
    sequence += 1;
    const mine = sequence;
    try {
      const page = await api.get<RecordList>(`/collections/${seg(collection.name)}/records`, {
        // The count is the query's, not the page's: asked with the first page only (it reads every match).
        limit: PAGE_SIZE, cursor: paging.cursor, filter, count: paging.cursor ? undefined : true,
        sort: sortParam(sort),
      });
      // A slower answer to an earlier query must not overwrite the current one.
      if (!ctx.alive() || mine !== sequence) return;
      hideProblem();
      paging.loaded(page.nextCursor, page.items.length);
      const total = page.totalCount;
      if (total !== undefined) count.textContent = filter ? `${total} matching` : `${total} ${total === 1 ? 'record' : 'records'}`;
      replace(list, recordsTable(collection.name, columns, page.items, sort, filter !== '', toggleSort));
    } catch (err) {
      if (!ctx.alive() || mine !== sequence) return;
      if (showProblem(err)) {
        replace(list);
        count.textContent = '';
        paging.loaded(null, 0);
        input.focus();
      } else {
        replace(list, errorBanner(err));
      }
    }
  };

  function toggleSort(key: string): void {
    sort = sort?.key === key && !sort.descending ? { key, descending: true } : { key, descending: false };
    reload();
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    filter = input.value.trim();
    reload();
  });
  clear.addEventListener('click', () => {
    input.value = '';
    filter = '';
    reload();
  });

  const newRecord = h('a', { href: recordHref(collection.name, 'new'), class: 'btn btn-primary btn-small', testid: 'new-record' }, '+ New record');
  const shown = note?.collection === collection.name ? notice(note.text, 'records-notice') : null;
  note = null;
  void load();
  return card(null, h('div', { class: 'card-title-row records-title' }, h('h2', { class: 'card-title' }, 'Records'), newRecord),
    shown, form, sortField, count, list, paging.element);
}

const recordHref = (collection: string, id: string): string => `#/collections/${encodeURIComponent(collection)}/records/${encodeURIComponent(id)}`;

/** The filter box's example, written with fields this collection really has (the built-in ones when it has none). */
export function exampleFilter(fields: Field[]): string {
  const example = (f: Field): string | null => {
    switch (f.type) {
      case 'text': return `${f.name} ~ 'word'`;
      case 'integer': case 'number': return `${f.name} >= 3`;
      case 'boolean': return `${f.name} = true`;
      case 'datetime': return `${f.name} >= '2026-01-01T00:00:00Z'`;
      case 'json': return `${f.name} != null`;
    }
  };
  const parts: string[] = [];
  for (const type of ['text', 'integer', 'number', 'boolean', 'datetime', 'json']) {
    const f = fields.find((x) => x.type === type);
    if (f && parts.length < 2) parts.push(example(f)!);
  }
  return parts.length > 0 ? parts.join(' && ') : "version > 1 && createdAt >= '2026-01-01T00:00:00Z'";
}

const sortParam = (sort: Sort | null): string | undefined => (sort ? `${sort.descending ? '-' : ''}${sort.key}` : undefined);

/** One sort key from the address; anything the columns do not offer means creation order. */
function parseSort(value: string | null, collection: Collection): Sort | null {
  if (!value) return null;
  const descending = value.startsWith('-');
  const key = descending ? value.slice(1) : value;
  const ok = ['id', 'version', 'updatedAt'].includes(key) || collection.fields.some((f) => f.name === key && f.type !== 'json');
  return ok ? { key, descending } : null;
}

function recordsTable(name: string, columns: Column[], items: RecordItem[], sort: Sort | null, filtered: boolean,
  onSort: (key: string) => void): HTMLElement {
  if (items.length === 0) {
    return filtered
      ? h('p', { class: 'empty', testid: 'records-table-empty' }, 'No records match the filter.')
      : h('div', { class: 'empty', testid: 'records-table-empty' }, h('p', null, 'No records yet.'),
        h('a', { href: recordHref(name, 'new'), class: 'btn btn-primary', testid: 'create-first-record' }, 'Create the first record'));
  }
  const headers = columns.map((c) => {
    if (!c.sortKey) return h('th', { scope: 'col', testid: 'records-header', 'data-key': '' }, c.label);
    const key = c.sortKey;
    const active = sort?.key === key;
    const direction = active ? (sort!.descending ? 'descending' : 'ascending') : 'none';
    const arrow = active ? (sort!.descending ? '↓' : '↑') : '↕';
    const btn = h('button', { type: 'button', class: `sort-button${active ? ' sort-active' : ''}`, testid: `sort-${key}` },
      c.label, h('span', { class: 'sort-arrow', 'aria-hidden': 'true' }, arrow),
      h('span', { class: 'visually-hidden' }, active ? `, sorted ${direction}` : ', sort'));
    btn.addEventListener('click', () => onSort(key));
    return h('th', { scope: 'col', testid: 'records-header', 'data-key': key, 'aria-sort': direction }, btn);
  });
  const rows = items.map((r) => {
    const row = h('tr', { testid: 'record-row', 'data-id': r.id, class: 'row-link' }, columns.map((c) => c.cell(r)));
    Array.from(row.cells).forEach((cell, i) => cell.setAttribute('data-label', columns[i]!.label));
    // The whole row opens the record for a pointer; keyboards use the id's link. A click that ends a text selection
    // (copying a value) or lands on a link itself is left alone.
    row.addEventListener('click', (event) => {
      if ((event.target as Element).closest('a, button') || window.getSelection()?.toString()) return;
      navigate(recordHref(name, r.id));
    });
    return row;
  });
  return h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': `Records of ${name}` },
    h('table', { class: 'table', testid: 'records-table' },
      h('caption', { class: 'visually-hidden' }, `Records of ${name}`),
      h('thead', null, h('tr', null, headers)),
      h('tbody', null, rows)));
}

function showValue(value: unknown): HTMLElement | string {
  if (value === undefined || value === null) return h('span', { class: 'muted' }, '—');
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 120 ? h('span', { title: text }, `${text.slice(0, 117)}…`) : text;
}
