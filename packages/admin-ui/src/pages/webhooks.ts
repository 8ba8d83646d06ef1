import { api, seg } from '../api.js';
import { h, replace, time } from '../dom.js';
import { href, type PageContext } from '../router.js';
import { bannerSlot, errorBanner, notice } from '../ui/feedback.js';
import { button } from '../ui/form.js';
import { pager } from '../ui/pager.js';
import type { Page, Webhook } from '../types.js';
import { badge, card, loading, pageHeader, table } from './common.js';
import { targetAddress } from './webhook-subscription.js';
import { healthCell, statsFor } from './webhooks-health.js';

export function webhooksPage(ctx: PageContext): HTMLElement {
  const banner = bannerSlot();
  const list = h('div', null, loading());
  const paging = pager(() => void load(), 'webhooks-pager');

  const load = async () => {
    try {
      const cursor = paging.cursor;
      const page = await api.get<Page<Webhook>>('/webhooks', { limit: 50, cursor });
      if (!ctx.alive()) return;
      paging.loaded(page.nextCursor, page.items.length);
      const health = page.items.map(healthCell);
      replace(list, table(['Name', 'URL or address', 'Topics', 'State', 'Health (24 h)', 'Created', ''], page.items.map((w, i) => row(w, health[i]!.cell, banner, load)),
        { testid: 'webhooks-table', caption: 'Webhook targets', empty: 'No webhook targets yet.' }));
      // The list shows at once; the health column fills in from one request for the page's statistics (same cursor).
      const stats = await statsFor(page.items, ctx.alive, cursor);
      page.items.forEach((w, i) => health[i]!.fill(stats.get(w.id) ?? null));
    } catch (err) {
      if (ctx.alive()) banner.show(errorBanner(err));
    }
  };
  void load();

  return h('div', { class: 'page' },
    pageHeader('Webhooks', {
      subtitle: 'HTTPS endpoints and message brokers that receive signed events when records change.',
      actions: [
        h('a', { href: '#/health', class: 'btn btn-ghost', testid: 'health-overview' }, 'Health'),
        h('a', { href: '#/webhooks/new', class: 'btn btn-primary', testid: 'new-webhook', id: 'new-webhook' }, '+ New webhook'),
      ],
    }),
    banner,
    card(null, list, paging.element));
}

function row(w: Webhook, health: HTMLTableCellElement, banner: ReturnType<typeof bannerSlot>, reload: () => Promise<void>): HTMLTableRowElement {
  const toggle = button(w.enabled ? 'Disable' : 'Enable', {
    class: 'btn btn-small', testid: 'toggle-webhook', 'aria-label': `${w.enabled ? 'Disable' : 'Enable'} webhook ${w.name}`,
  });
  toggle.addEventListener('click', async () => {
    toggle.disabled = true;
    try {
      await api.patch(`/webhooks/${seg(w.id)}`, { enabled: !w.enabled });
      banner.show(notice(`Webhook “${w.name}” ${w.enabled ? 'disabled' : 'enabled'}.`));
      await reload();
    } catch (err) {
      banner.show(errorBanner(err));
      toggle.disabled = false;
    }
  });
  return h('tr', { testid: 'webhook-row', 'data-id': w.id },
    h('td', { class: 'cell-target-name' }, h('a', { href: href(`/webhooks/${encodeURIComponent(w.id)}`), class: 'strong', testid: 'webhook-link' }, w.name)),
    h('td', { class: 'cell-url' }, h('span', { class: 'mono small', testid: 'webhook-address' }, targetAddress(w))),
    h('td', null, h('span', { class: 'chips' }, w.topics.map((t) => h('span', { class: 'chip' }, t)))),
    h('td', null, w.enabled ? badge('enabled', 'ok', 'webhook-state') : badge('disabled', 'muted', 'webhook-state')),
    health,
    h('td', null, time(w.createdAt)),
    h('td', { class: 'cell-actions' }, toggle,
      h('a', { href: href('/deliveries', { webhookId: w.id }), class: 'btn btn-small btn-ghost', testid: 'webhook-deliveries-link' }, 'Deliveries')));
}
