/**
 * Delivery jobs as a compact table, for the deliveries page and an event's page. One line a job at laptop width
 * (35 jobs took about 5,000 px when ids and TLS errors wrapped): ids are cut at their end with a Copy button, the last
 * error is one line with the whole text in its tooltip and on the job's page, and a job whose target is disabled says
 * so instead of showing a next attempt that has passed. On phones each job is a card of labelled lines (styles.css).
 */
import { api } from '../api.js';
import { h } from '../dom.js';
import { href } from '../router.js';
import { copyId } from '../ui/copy-id.js';
import type { Delivery, Page, Webhook } from '../types.js';
import { badge, table } from './common.js';
import { stateBadge } from './delivery-state.js';

export const HEADERS = ['Delivery', 'Topic', 'State', 'Next attempt', 'Target', 'Record', 'Tries', 'Last error', 'Created'];

/** `names`: target names by id, filled in when known; the id shows until then (or for a deleted target). */
export function deliveriesTable(items: Delivery[], names: Map<string, string>, opts: { caption: string; empty: string }): HTMLElement {
  const el = table(HEADERS, items.map((d) => deliveryRow(d, names)), { testid: 'deliveries-table', caption: opts.caption, empty: opts.empty });
  el.querySelector('table')?.classList.add('table-compact', 'table-jobs');
  return el;
}

function deliveryRow(d: Delivery, names: Map<string, string>): HTMLTableRowElement {
  const target = names.get(d.webhookId);
  return h('tr', { testid: 'delivery-row', 'data-id': d.id, 'data-state': d.state },
    h('td', { class: 'cell-job-id' }, copyId(d.id, { label: 'delivery id', href: href(`/deliveries/${encodeURIComponent(d.id)}`), testid: 'delivery-link' })),
    h('td', null, h('span', { class: 'chip', title: d.topic, testid: 'delivery-topic' }, d.topic)),
    h('td', null, stateBadge(d.state)),
    h('td', { testid: 'delivery-next' }, nextAttempt(d)),
    h('td', { class: 'cell-trunc' }, h('a', { href: href(`/webhooks/${encodeURIComponent(d.webhookId)}`), class: 'trunc', 'data-webhook': d.webhookId, title: target ? `${target} (${d.webhookId})` : d.webhookId }, target ?? d.webhookId)),
    h('td', { class: 'cell-job-id' }, copyId(d.recordId, { label: 'record id', title: `${d.collection}/${d.recordId}`, testid: 'delivery-record' })),
    h('td', { class: 'num' }, String(d.attemptCount)),
    h('td', { class: 'cell-trunc cell-last-error' }, d.lastError
      ? h('span', { class: 'error-text trunc', title: `${d.lastError.code}: ${d.lastError.message}`, testid: 'delivery-error' }, h('strong', null, d.lastError.code), ' ', d.lastError.message)
      : h('span', { class: 'muted' }, '—')),
    h('td', null, shortTime(d.createdAt)));
}

/** A table's time: the clock alone today, else the day and the minute; the exact UTC value in the tooltip. */
function shortTime(iso: string | null): HTMLElement | string {
  if (!iso) return '—';
  const at = new Date(iso);
  const today = at.toDateString() === new Date().toDateString();
  const text = today
    ? at.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' })
    : at.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  return h('time', { datetime: iso, title: iso }, text);
}

/** A pending job of a disabled target waits for it to be enabled: its due time says nothing (SPEC §17 heldBy). */
export function nextAttempt(d: Delivery): HTMLElement | string {
  if (d.heldBy === 'target_disabled') return badge('held: target disabled', 'warn', 'delivery-held');
  if (d.state === 'pending' || d.state === 'delivering') return shortTime(d.nextAttemptAt);
  return h('span', { class: 'muted' }, '—');
}

/**
 * Target names by id, for tables drawn before they are known: links drawn with the id get the name when it comes.
 * A failure leaves the ids (the list works without names).
 */
export function loadTargetNames(alive: () => boolean, names: Map<string, string>, container: HTMLElement): Promise<Webhook[]> {
  return api.get<Page<Webhook>>('/webhooks', { limit: 500 }).then((page) => {
    if (!alive()) return [];
    for (const w of page.items) names.set(w.id, w.name);
    for (const link of Array.from(container.querySelectorAll<HTMLAnchorElement>('a[data-webhook]'))) {
      const name = names.get(link.dataset.webhook ?? '');
      if (name) link.textContent = name;
    }
    return page.items;
  }, () => []);
}
