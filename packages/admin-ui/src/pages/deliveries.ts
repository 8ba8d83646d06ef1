import { api, ApiError, seg } from '../api.js';
import { h, replace } from '../dom.js';
import { navigate, type PageContext } from '../router.js';
import { confirmDialog } from '../ui/dialog.js';
import { bannerSlot, errorBanner, notice } from '../ui/feedback.js';
import { button } from '../ui/form.js';
import { pager } from '../ui/pager.js';
import type { BulkRetryResult, Delivery, DeliveryState, Page } from '../types.js';
import { card, loading, pageHeader } from './common.js';
import { deliveriesFilters, idKind, queryHash, readQuery, type DeliveryQuery } from './deliveries-filters.js';
import { deliveriesTable, loadTargetNames } from './deliveries-table.js';

/** While any job on screen may still change on its own, the list polls. */
const REFRESH_MS = 2000;
const ACTIVE: DeliveryState[] = ['pending', 'delivering'];
const PAGE_SIZE = 50;

export function deliveriesPage(ctx: PageContext): HTMLElement {
  const query = readQuery(ctx.query);
  const banner = bannerSlot();
  /** What an action did (bulk retry); apart from `banner`, which each load clears. */
  const outcome = bannerSlot();
  const list = h('div', null, loading());
  const summary = h('div', { class: 'results-bar' });
  const status = h('span', { class: 'refresh-status muted small', testid: 'auto-refresh', role: 'status' });
  const paging = pager(() => void load(), 'deliveries-pager');
  const names = new Map<string, string>();
  let timer: number | undefined;
  let sequence = 0;
  ctx.onCleanup(() => window.clearTimeout(timer));

  const filters = deliveriesFilters(query, (q: DeliveryQuery) => navigate(queryHash(q)));
  const refresh = button('Refresh', { class: 'btn btn-small', testid: 'refresh-deliveries' });
  refresh.addEventListener('click', () => void load());

  // Target names for the filter and the table; the list still works if this fails.
  void loadTargetNames(ctx.alive, names, list).then((targets) => filters.addTargets(targets));

  const fetchJobs = async (): Promise<Page<Delivery>> => {
    const kind = idKind(query.q);
    // A delivery id names one job: the list has no id filter (SPEC §17), its own route answers it.
    if (kind === 'delivery') {
      try {
        return { items: [await api.get<Delivery>(`/deliveries/${seg(query.q)}`)], nextCursor: null };
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return { items: [], nextCursor: null };
        throw err;
      }
    }
    return api.get<Page<Delivery>>('/deliveries', {
      webhookId: query.webhookId, state: query.state, topic: query.topics, since: query.since, until: query.until,
      recordId: kind === 'record' ? query.q : undefined, eventId: kind === 'event' ? query.q : undefined,
      limit: PAGE_SIZE, cursor: paging.cursor,
    });
  };

  const load = async () => {
    window.clearTimeout(timer);
    sequence += 1;
    const mine = sequence;
    let page: Page<Delivery>;
    try {
      page = await fetchJobs();
    } catch (err) {
      if (!ctx.alive() || mine !== sequence) return;
      banner.show(errorBanner(err, filters.showErrors(err)));
      replace(list);
      replace(summary);
      return;
    }
    if (!ctx.alive() || mine !== sequence) return;
    banner.show(null);
    paging.loaded(page.nextCursor, page.items.length);
    const filtered = query.q || query.webhookId || query.state || query.topics.length || query.since || query.until;
    replace(list, deliveriesTable(page.items, names, {
      caption: 'Delivery jobs, newest first',
      empty: idKind(query.q) === 'delivery' ? `No delivery ${query.q}.` : filtered ? 'No deliveries match these filters.' : 'No deliveries yet. Jobs appear here when records change and a target subscribes.',
    }));
    const dead = page.items.filter((d) => d.state === 'dead');
    replace(summary,
      h('span', { class: 'muted small', testid: 'deliveries-count' }, idKind(query.q) === 'delivery' ? 'One delivery, by its id: the filters do not apply.' : `${page.items.length} ${page.items.length === 1 ? 'job' : 'jobs'} shown`),
      dead.length > 0 ? retryAllButton(dead.map((d) => d.id)) : null);
    // A disabled target's job waits without changing: only jobs that can move keep the page polling.
    const active = page.items.some((d) => ACTIVE.includes(d.state) && d.heldBy !== 'target_disabled');
    status.textContent = active ? 'Auto-refreshing while jobs are in flight…' : `Updated ${new Date().toLocaleTimeString()}`;
    if (active) timer = window.setTimeout(() => void load(), REFRESH_MS);
  };

  /** Every dead job on screen back to pending in one request (at most a page: 50 of the API's 100). */
  const retryAllButton = (ids: string[]) => {
    const label = `Retry ${ids.length} dead ${ids.length === 1 ? 'job' : 'jobs'} shown`;
    const retry = button(label, { class: 'btn btn-small btn-primary', testid: 'retry-dead-shown' });
    retry.addEventListener('click', async () => {
      const ok = await confirmDialog({
        title: `${label}?`,
        message: h('p', null, `Each goes back to pending for one more full round of attempts, as a single retry does. Jobs that are no longer dead, or whose target was deleted, are skipped.`),
        confirmLabel: 'Retry',
      });
      if (!ok) return;
      retry.disabled = true;
      try {
        const res = await api.post<BulkRetryResult>('/deliveries/retry', { ids });
        const skipped = res.skipped.length === 0 ? '' : ` Skipped ${res.skipped.length}: ${res.skipped.map((s) => `${s.id} (${s.reason})`).join(', ')}.`;
        outcome.show(notice(`${res.retried} ${res.retried === 1 ? 'job' : 'jobs'} sent back for another round.${skipped}`, 'bulk-retry-result'));
        await load();
      } catch (err) {
        outcome.show(errorBanner(err));
        retry.disabled = false;
      }
    });
    return retry;
  };

  // The form refuses an id that is none of the three; an address typed by hand gets the same answer.
  if (query.q && !idKind(query.q)) {
    replace(list);
    banner.show(errorBanner(new Error(`“${query.q}” is not a delivery (del_…), event (evt_…) or record (rec_…) id.`)));
  } else {
    void load();
  }

  return h('div', { class: 'page' },
    pageHeader('Deliveries', { subtitle: 'Every webhook delivery job, its state and attempts.', actions: [status, refresh] }),
    card(null, filters.element),
    banner, outcome,
    card(null, summary, list, paging.element));
}
