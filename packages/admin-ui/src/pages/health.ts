import { api } from '../api.js';
import { h, replace, time } from '../dom.js';
import { href, type PageContext } from '../router.js';
import { bannerSlot, errorBanner } from '../ui/feedback.js';
import { percent } from '../ui/health-summary.js';
import type { Page, TargetStats, Webhook } from '../types.js';
import { badge, card, loading, pageHeader, table } from './common.js';
import { rateKind, statsFor, statsPages } from './webhooks-health.js';

interface Row {
  target: Webhook;
  stats: TargetStats | null;
}

/**
 * Every target's last 24 hours at a glance, failing ones first: lowest success rate first, targets without attempts
 * after those with some, disabled ones last.
 */
export function healthPage(ctx: PageContext): HTMLElement {
  const banner = bannerSlot();
  const list = h('div', null, loading());

  const load = async () => {
    try {
      // The targets and every target's statistics are read side by side (pages of 500 and of 200: 2 and 5 requests
      // for 1,000 targets); a target the statistics' pages lack is asked for alone.
      const [targets, pages] = await Promise.all([everyTarget(ctx.alive), statsPages(ctx.alive)]);
      const stats = await statsFor(targets, ctx.alive, null, pages);
      if (!ctx.alive()) return;
      const rows: Row[] = targets.map((target) => ({ target, stats: stats.get(target.id) ?? null }));
      rows.sort(failingFirst);
      replace(list, table(['Target', 'State', 'Success rate (24 h)', 'Attempts', 'Last success', 'Last failure'], rows.map(row),
        { testid: 'health-table', caption: 'Health of every webhook target', empty: 'No webhook targets yet.' }));
    } catch (err) {
      if (ctx.alive()) banner.show(errorBanner(err));
    }
  };
  void load();

  return h('div', { class: 'page' },
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/webhooks' }, 'Webhooks'), ' / '),
    pageHeader('Webhook health', { subtitle: 'The last 24 hours of every target, failing ones first.', testid: 'health-title' }),
    banner,
    card(null, list));
}

async function everyTarget(alive: () => boolean): Promise<Webhook[]> {
  const targets: Webhook[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<Webhook> = await api.get<Page<Webhook>>('/webhooks', { limit: 500, cursor });
    targets.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor && alive());
  return targets;
}

function failingFirst(a: Row, b: Row): number {
  const rank = (r: Row) => [r.target.enabled ? 0 : 1, r.stats?.successRate ?? 2] as const;
  const [ea, ra] = rank(a);
  const [eb, rb] = rank(b);
  return ea - eb || ra - rb || a.target.name.localeCompare(b.target.name);
}

function row({ target, stats }: Row): HTMLTableRowElement {
  const rate = stats?.successRate ?? null;
  const kind = rateKind(rate);
  return h('tr', { testid: 'health-row', 'data-id': target.id },
    h('td', null, h('a', { href: href(`/webhooks/${encodeURIComponent(target.id)}`), class: 'strong', testid: 'health-link' }, target.name)),
    h('td', null, target.enabled ? badge('enabled', 'ok', 'webhook-state') : badge('disabled', 'muted', 'webhook-state')),
    h('td', null, badge(percent(rate), kind, 'health-rate')),
    h('td', { class: 'num' }, stats ? `${stats.attempts.succeeded} / ${stats.attempts.total}` : '—'),
    h('td', null, time(stats?.lastSuccessAt)),
    h('td', null, time(stats?.lastFailureAt)));
}
