/**
 * The deliveries page's search: one box for an id (a delivery, an event or a record: the prefix says which), and
 * filters by target, topic, state and creation time. All of it lives in the page's address (shareable, survives a
 * reload) and is answered by the server (GET /admin/v1/deliveries, SPEC §17), never by filtering a page locally.
 */
import { ApiError } from '../api.js';
import { h } from '../dom.js';
import { applyFieldErrors, clearFieldErrors } from '../ui/feedback.js';
import { button, field, select, textInput } from '../ui/form.js';
import { fromLocalInput, localInputValue } from '../ui/local-time.js';
import { DELIVERY_STATES, TOPICS } from '../types.js';

export interface DeliveryQuery {
  /** A del_, evt_ or rec_ id; empty: none. */
  q: string;
  webhookId: string;
  state: string;
  topics: string[];
  /** RFC 3339, on createdAt. */
  since: string;
  until: string;
}

export type IdKind = 'delivery' | 'event' | 'record';
const PREFIXES: Record<string, IdKind> = { del_: 'delivery', evt_: 'event', rec_: 'record' };

export function idKind(q: string): IdKind | null {
  return PREFIXES[q.slice(0, 4)] ?? null;
}

export function readQuery(params: URLSearchParams): DeliveryQuery {
  return {
    q: params.get('q') ?? '',
    webhookId: params.get('webhookId') ?? '',
    state: params.get('state') ?? '',
    topics: (params.get('topic') ?? '').split(',').filter(Boolean),
    since: params.get('since') ?? '',
    until: params.get('until') ?? '',
  };
}

/** The page's address for a query: empty members left out; topics comma-joined (the API takes them repeated). */
export function queryHash(q: DeliveryQuery): string {
  const params = new URLSearchParams();
  for (const [key, value] of [['q', q.q], ['webhookId', q.webhookId], ['state', q.state], ['topic', q.topics.join(',')], ['since', q.since], ['until', q.until]] as const) {
    if (value) params.set(key, value);
  }
  const qs = params.toString();
  return `/deliveries${qs ? `?${qs}` : ''}`;
}

export interface DeliveryFilters {
  element: HTMLFormElement;
  /** Adds the targets' names to the target select once known. */
  addTargets(targets: { id: string; name: string }[]): void;
  /** Puts the server's invalid_query faults beside their controls; the rest for the banner. */
  showErrors(err: unknown): { path: string; message: string }[];
}

export function deliveriesFilters(query: DeliveryQuery, apply: (q: DeliveryQuery) => void): DeliveryFilters {
  const search = textInput({ testid: 'deliveries-search', value: query.q, placeholder: 'del_…, evt_… or rec_…', class: 'mono' });
  const target = select([{ value: '', label: 'All targets' }], { testid: 'filter-webhook', value: query.webhookId });
  if (query.webhookId) target.append(h('option', { value: query.webhookId }, query.webhookId));
  target.value = query.webhookId;
  const state = select([{ value: '', label: 'All states' }, ...DELIVERY_STATES.map((s) => ({ value: s, label: s }))], { testid: 'filter-state', value: query.state });
  const since = h('input', { type: 'datetime-local', testid: 'filter-since', value: query.since ? localInputValue(Date.parse(query.since)) : '' });
  const until = h('input', { type: 'datetime-local', testid: 'filter-until', value: query.until ? localInputValue(Date.parse(query.until)) : '' });

  const topicBoxes = TOPICS.map((t, i) => h('input', { type: 'checkbox', id: `filter-topic-${i}`, value: t, checked: query.topics.includes(t), testid: `filter-topic-${t}` }));
  const topicsSummary = h('summary', { class: 'multi-summary', testid: 'filter-topics-summary', 'data-path': '/topic', 'aria-describedby': 'filter-topics-label' });
  const showTopics = () => {
    const n = topicBoxes.filter((b) => b.checked).length;
    topicsSummary.textContent = n === 0 ? 'All topics' : n === 1 ? topicBoxes.find((b) => b.checked)!.value : `${n} topics`;
  };
  showTopics();
  const topics = h('details', { class: 'multi', testid: 'filter-topics' }, topicsSummary,
    h('fieldset', { class: 'multi-list' }, h('legend', { class: 'visually-hidden' }, 'Topics'),
      topicBoxes.map((b) => h('div', { class: 'check' }, b, h('label', { for: b.id, class: 'mono small' }, b.value)))));

  const current = (): DeliveryQuery => ({
    q: search.value.trim(),
    webhookId: target.value,
    state: state.value,
    topics: topicBoxes.filter((b) => b.checked).map((b) => b.value),
    since: fromLocalInput(since.value) ?? '',
    until: fromLocalInput(until.value) ?? '',
  });
  const clear = button('Clear', { class: 'btn btn-ghost', testid: 'deliveries-clear' });
  const form = h('form', { class: 'filters filters-deliveries', role: 'search', 'aria-label': 'Find deliveries', testid: 'deliveries-filters', novalidate: true },
    field({ label: 'Delivery, event or record id', id: 'deliveries-search', path: '/q', className: 'field-search' }, search),
    field({ label: 'Target', id: 'filter-webhook', path: '/webhookId', className: 'field-inline' }, target),
    h('div', { class: 'field field-inline' }, h('span', { class: 'field-label', id: 'filter-topics-label' }, 'Topics'), topics),
    field({ label: 'State', id: 'filter-state', path: '/state', className: 'field-inline' }, state),
    field({ label: 'Created since', id: 'filter-since', path: '/since', className: 'field-inline' }, since),
    field({ label: 'Created until', id: 'filter-until', path: '/until', className: 'field-inline' }, until),
    h('div', { class: 'filters-buttons' },
      h('button', { type: 'submit', class: 'btn btn-primary', testid: 'deliveries-apply' }, 'Search'), clear));

  const submit = () => {
    clearFieldErrors(form);
    const q = current();
    if (q.q && !idKind(q.q)) {
      showErrors(new ApiError(400, { type: 'about:blank', title: 'Not an id', status: 400, code: 'invalid_query', requestId: '', detail: '',
        errors: [{ path: '/q', message: 'Type a delivery (del_…), event (evt_…) or record (rec_…) id.' }] }));
      return;
    }
    apply(q);
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit();
  });
  // The target and state selects apply at once, as they always did; topics (often several), times and the id on Search.
  for (const box of topicBoxes) box.addEventListener('change', showTopics);
  for (const control of [target, state]) control.addEventListener('change', submit);
  clear.addEventListener('click', () => apply({ q: '', webhookId: '', state: '', topics: [], since: '', until: '' }));

  const showErrors = (err: unknown) => {
    if (!(err instanceof ApiError)) return [];
    // The box sends recordId or eventId: its faults are the box's.
    const errors = (err.problem.errors ?? []).map((e) => {
      const path = e.path.replace(/^\/?/, '/');
      return { ...e, path: path === '/recordId' || path === '/eventId' ? '/q' : path };
    });
    return applyFieldErrors(form, new ApiError(err.status, { ...err.problem, errors }));
  };

  return {
    element: form,
    addTargets(list) {
      for (const t of list) {
        const existing = Array.from(target.options).find((o) => o.value === t.id);
        if (existing) existing.textContent = t.name;
        else target.append(h('option', { value: t.id }, t.name));
      }
      target.value = query.webhookId;
    },
    showErrors,
  };
}
