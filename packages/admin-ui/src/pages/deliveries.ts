import { api } from '../api.js';
import { h, replace, time } from '../dom.js';
import { href, navigate, type PageContext } from '../router.js';
import { bannerSlot, errorBanner } from '../ui/feedback.js';
import { button, field, select } from '../ui/form.js';
import { pager } from '../ui/pager.js';
import { DELIVERY_STATES, type Delivery, type DeliveryState, type Page, type Webhook } from '../types.js';
import { card, loading, pageHeader, table } from './common.js';
import { stateBadge } from './delivery-state.js';

/** While any job on screen may still change on its own, the list polls. */
const REFRESH_MS = 2000;
const ACTIVE: DeliveryState[] = ['pending', 'delivering'];

export function deliveriesPage(ctx: PageContext): HTMLElement {
  const webhookId = ctx.query.get('webhookId') ?? '';
  const state = ctx.query.get('state') ?? '';
  const banner = bannerSlot();
  const list = h('div', null, loading());
  const status = h('span', { class: 'refresh-status muted small', testid: 'auto-refresh', role: 'status' });
  const paging = pager(() => void load(), 'deliveries-pager');
  const names = new Map<string, string>();
  let timer: number | undefined;
  ctx.onCleanup(() => window.clearTimeout(timer));

  const targetSelect = select([{ value: '', label: 'All targets' }], { testid: 'filter-webhook', value: webhookId });
  const stateSelect = select([{ value: '', label: 'All states' }, ...DELIVERY_STATES.map((s) => ({ value: s, label: s }))], { testid: 'filter-state', value: state });
  const apply = () => navigate(href('/deliveries', { webhookId: targetSelect.value, state: stateSelect.value }).slice(1));
  targetSelect.addEventListener('change', apply);
  stateSelect.addEventListener('change', apply);
  const refresh = button('Refresh', { class: 'btn btn-small', testid: 'refresh-deliveries' });
  refresh.addEventListener('click', () => void load());

  // Target names for the filter and the table; the list still works if this fails.
  void api.get<Page<Webhook>>('/webhooks', { limit: 500 }).then((page) => {
    if (!ctx.alive()) return;
    for (const w of page.items) {
      names.set(w.id, w.name);
      targetSelect.appendChild(h('option', { value: w.id }, w.name));
    }
    if (webhookId && !names.has(webhookId)) targetSelect.appendChild(h('option', { value: webhookId }, webhookId));
    targetSelect.value = webhookId;
  }).catch(() => undefined);

  const load = async () => {
    window.clearTimeout(timer);
    let page: Page<Delivery>;
    try {
      page = await api.get<Page<Delivery>>('/deliveries', { webhookId, state, limit: 50, cursor: paging.cursor });
    } catch (err) {
      if (ctx.alive()) banner.show(errorBanner(err));
      return;
    }
    if (!ctx.alive()) return;
    banner.show(null);
    paging.loaded(page.nextCursor, page.items.length);
    replace(list, table(['Delivery', 'State', 'Target', 'Record', 'Attempts', 'Next attempt', 'Last error', 'Created'],
      page.items.map((d) => h('tr', { testid: 'delivery-row', 'data-id': d.id, 'data-state': d.state },
        h('td', { class: 'cell-id' }, h('div', { class: 'cell-stack' },
          h('a', { href: href(`/deliveries/${encodeURIComponent(d.id)}`), class: 'mono small', testid: 'delivery-link' }, d.id),
          h('span', { class: 'chip', testid: 'delivery-topic' }, d.topic))),
        h('td', null, stateBadge(d.state)),
        h('td', { class: 'cell-name' }, h('a', { href: href(`/webhooks/${encodeURIComponent(d.webhookId)}`) }, names.get(d.webhookId) ?? d.webhookId)),
        h('td', { class: 'cell-id' }, h('span', { class: 'mono' }, `${d.collection}/${d.recordId}`)),
        h('td', { class: 'num' }, String(d.attemptCount)),
        h('td', null, d.state === 'pending' || d.state === 'delivering' ? time(d.nextAttemptAt) : h('span', { class: 'muted' }, '—')),
        h('td', { class: 'small cell-error' }, d.lastError ? h('span', { class: 'error-text', title: d.lastError.message }, d.lastError.code, ': ', d.lastError.message) : h('span', { class: 'muted' }, '—')),
        h('td', null, time(d.createdAt)))),
      { testid: 'deliveries-table', caption: 'Delivery jobs', empty: 'No deliveries match these filters.' }));
    const active = page.items.some((d) => ACTIVE.includes(d.state));
    status.textContent = active ? 'Auto-refreshing while jobs are in flight…' : `Updated ${new Date().toLocaleTimeString()}`;
    if (active) timer = window.setTimeout(() => void load(), REFRESH_MS);
  };
  void load();

  return h('div', { class: 'page' },
    pageHeader('Deliveries', { subtitle: 'Every webhook delivery job, its state and attempts.' }),
    card(null,
      h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter deliveries', testid: 'deliveries-filters' },
        field({ label: 'Target', id: 'filter-webhook', className: 'field-inline' }, targetSelect),
        field({ label: 'State', id: 'filter-state', className: 'field-inline' }, stateSelect),
        h('div', { class: 'filters-end' }, status, refresh)),
      banner, list, paging.element));
}
