/**
 * The records of one collection: a filter in the query language of docs/queries.md, sortable columns
 * and the total count. The filter and sort in force travel with every page's request, because the
 * server refuses a cursor issued for another query.
 */
import { api, ApiError, seg } from '../api.js';
import { h, replace, time, uid } from '../dom.js';
import type { PageContext } from '../router.js';
import { errorBanner } from '../ui/feedback.js';
import { button } from '../ui/form.js';
import { pager } from '../ui/pager.js';
import type { Collection, Page, RecordItem } from '../types.js';
import { card, loading } from './common.js';

const PAGE_SIZE = 20;

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
  let filter = '';
  let sort: Sort | null = null;
  let sequence = 0;

  const list = h('div', null, loading());
  const count = h('p', { class: 'records-count muted small', testid: 'records-count', role: 'status' });
  const paging = pager(() => void load(), 'records-pager');

  const inputId = uid('records-filter');
  const input = h('input', {
    type: 'text', id: inputId, testid: 'records-filter', autocomplete: 'off', spellcheck: 'false',
    placeholder: "status = 'open' && priority >= 3", 'aria-describedby': `${inputId}-hint`,
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
        'Text in quotes; null matches absent fields.'),
      problem));

  const columns: Column[] = [
    { label: 'ID', sortKey: 'id', cell: (r) => h('td', null, h('code', { class: 'nowrap' }, r.id)) },
    { label: 'Version', sortKey: 'version', cell: (r) => h('td', null, String(r.version)) },
    { label: 'Updated', sortKey: 'updatedAt', cell: (r) => h('td', null, time(r.updatedAt)) },
    ...collection.fields.map((f): Column => ({
      label: f.name,
      sortKey: f.type === 'json' ? null : f.name,
      cell: (r) => h('td', { class: 'cell-value' }, showValue(r.data[f.name])),
    })),
  ];

  const showProblem = (err: unknown): boolean => {
    const fault = err instanceof ApiError && err.code === 'invalid_query'
      ? err.problem.errors?.find((e) => e.path === 'filter') : undefined;
    if (!fault) return false;
    const position = typeof fault.position === 'number' ? fault.position : null;
    replace(problem,
      h('p', { class: 'field-error', testid: 'filter-error-message' }, fault.message,
        position === null ? null : h('span', { testid: 'filter-error-position' }, ` (at position ${position})`)),
      position === null ? null : h('pre', { class: 'query-caret', 'aria-hidden': 'true', testid: 'filter-error-caret' },
        filter, '\n', `${' '.repeat(position)}^`));
    problem.hidden = false;
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
      const page = await api.get<Page<RecordItem> & { totalCount?: number }>(`/collections/${seg(collection.name)}/records`, {
        limit: PAGE_SIZE, cursor: paging.cursor, filter, count: true,
        sort: sort ? `${sort.descending ? '-' : ''}${sort.key}` : undefined,
      });
      // A slower answer to an earlier query must not overwrite the current one.
      if (!ctx.alive() || mine !== sequence) return;
      hideProblem();
      paging.loaded(page.nextCursor, page.items.length);
      const total = page.totalCount ?? 0;
      count.textContent = filter ? `${total} matching` : `${total} ${total === 1 ? 'record' : 'records'}`;
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
    paging.reset();
    void load();
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    filter = input.value.trim();
    paging.reset();
    void load();
  });
  clear.addEventListener('click', () => {
    input.value = '';
    filter = '';
    paging.reset();
    void load();
  });

  void load();
  return card('Records', form, count, list, paging.element);
}

function recordsTable(name: string, columns: Column[], items: RecordItem[], sort: Sort | null, filtered: boolean,
  onSort: (key: string) => void): HTMLElement {
  if (items.length === 0) {
    return h('p', { class: 'empty', testid: 'records-table-empty' },
      filtered ? 'No records match the filter.' : 'No records yet. Records are written through the public API.');
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
    const row = h('tr', { testid: 'record-row', 'data-id': r.id }, columns.map((c) => c.cell(r)));
    Array.from(row.cells).forEach((cell, i) => cell.setAttribute('data-label', columns[i]!.label));
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
