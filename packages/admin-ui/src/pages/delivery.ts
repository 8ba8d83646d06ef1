import { api, seg } from '../api.js';
import { h, replace, time, type Child } from '../dom.js';
import { href, type PageContext } from '../router.js';
import { bannerSlot, errorBanner, notice } from '../ui/feedback.js';
import { button } from '../ui/form.js';
import type { Attempt, DeliveryDetail, Webhook } from '../types.js';
import { card, jsonBlock, loading, pageHeader, table } from './common.js';
import { stateBadge } from './delivery-state.js';
import { timingsText } from '../ui/health-summary.js';
import { nextAttempt } from './deliveries-table.js';

const REFRESH_MS = 2000;

export function deliveryPage(ctx: PageContext): HTMLElement {
  const id = ctx.params.id ?? '';
  targetNames.clear(); // names may have changed since the last visit
  const banner = bannerSlot();
  const header = h('div', null, pageHeader(id, { testid: 'delivery-title' }));
  const body = h('div', { class: 'stack-lg' }, loading());
  let timer: number | undefined;
  ctx.onCleanup(() => window.clearTimeout(timer));

  const load = async () => {
    window.clearTimeout(timer);
    let job: DeliveryDetail;
    try {
      job = await api.get<DeliveryDetail>(`/deliveries/${seg(id)}`);
    } catch (err) {
      if (ctx.alive()) replace(body, errorBanner(err));
      return;
    }
    if (!ctx.alive()) return;
    replace(header, headerFor(job));
    replace(body,
      card('Job', h('dl', { class: 'facts', testid: 'delivery-facts' },
        fact('State', stateBadge(job.state)),
        fact('Topic', h('span', { class: 'chip' }, job.topic)),
        fact('Target', targetLink(job.webhookId)),
        fact('Record', h('span', null, h('span', { class: 'mono' }, `${job.collection}/${job.recordId}`), ' · ',
          h('a', { href: href('/deliveries', { q: job.recordId }), class: 'text-link', testid: 'delivery-record-jobs' }, 'its deliveries'))),
        eventFact(job.envelope),
        fact('Attempts', h('span', { testid: 'delivery-attempt-count' }, String(job.attemptCount))),
        fact('Next attempt', h('span', { testid: 'delivery-next-attempt' },
          job.state === 'pending' || job.state === 'delivering' ? nextAttempt(job) : 'none')),
        fact('Last error', job.lastError ? h('span', { class: 'error-text', testid: 'delivery-last-error' }, job.lastError.code, ': ', job.lastError.message) : '—'),
        fact('Created', time(job.createdAt)),
        fact('Updated', time(job.updatedAt)))),
      card(`Attempts (${job.attempts.length})`, attemptsTable(job.attempts)),
      card('Envelope', h('p', { class: 'muted small' }, 'The exact JSON body sent on every attempt.'), jsonBlock(job.envelope, 'delivery-envelope')));
    if (job.state === 'pending' || job.state === 'delivering') timer = window.setTimeout(() => void load(), REFRESH_MS);
  };

  const headerFor = (job: DeliveryDetail) => {
    const actions: HTMLElement[] = [];
    if (job.state === 'dead') {
      const retry = button('Retry', { class: 'btn btn-primary', testid: 'retry-delivery', id: 'retry-delivery' });
      retry.addEventListener('click', async () => {
        retry.disabled = true;
        try {
          await api.post(`/deliveries/${seg(id)}/retry`);
          banner.show(notice('Delivery queued for another round of attempts.', 'retry-queued'));
          await load();
        } catch (err) {
          banner.show(errorBanner(err));
          retry.disabled = false;
        }
      });
      actions.push(retry);
    }
    return pageHeader(h('span', { class: 'mono' }, job.id), {
      testid: 'delivery-title',
      subtitle: job.state === 'dead' ? 'Every attempt failed. Repair the receiver, then retry.' : null,
      actions,
    });
  };

  void load();
  return h('div', { class: 'page' },
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/deliveries' }, 'Deliveries'), ' / '),
    header, banner, body);
}

/** The target's name once known; its id alone if it was deleted since. */
const targetNames = new Map<string, Promise<string | null>>();

function targetLink(webhookId: string): HTMLElement {
  const link = h('a', { href: href(`/webhooks/${encodeURIComponent(webhookId)}`), class: 'mono', testid: 'delivery-target' }, webhookId);
  // One look-up per target, not one per auto-refresh.
  let name = targetNames.get(webhookId);
  if (!name) {
    name = api.get<Webhook>(`/webhooks/${seg(webhookId)}`).then((w) => w.name, () => null);
    targetNames.set(webhookId, name);
  }
  void name.then((n) => {
    if (n === null) return;
    link.textContent = n;
    link.classList.remove('mono');
    link.title = webhookId;
  });
  return link;
}

/** The feed entry of this job's change (SPEC §7: the envelope's payload names it; test deliveries have none). */
function eventFact(envelope: unknown): HTMLElement[] | null {
  const payload = (envelope as { payload?: { eventId?: unknown } } | null)?.payload;
  const eventId = typeof payload?.eventId === 'string' ? payload.eventId : null;
  if (!eventId) return null;
  return fact('Event', h('a', { href: href(`/events/${encodeURIComponent(eventId)}`), class: 'mono', testid: 'delivery-event' }, eventId));
}

/** A term and its value in a facts list (<dl class="facts">). */
export function fact(label: string, value: Child): HTMLElement[] {
  return [h('dt', null, label), h('dd', null, value)];
}

function attemptsTable(attempts: Attempt[]): HTMLElement {
  return table(['#', 'Started', 'Status', 'Duration', 'Connection', 'Error', 'Response'], attempts.map((a) =>
    h('tr', { testid: 'attempt-row' },
      h('td', { class: 'num' }, String(a.number)),
      h('td', null, time(a.startedAt)),
      h('td', null, a.statusCode === null ? h('span', { class: 'muted' }, '—')
        : h('span', { class: `status status-${Math.floor(a.statusCode / 100)}xx`, testid: 'attempt-status' }, String(a.statusCode))),
      h('td', { class: 'num' }, `${a.durationMs} ms`),
      h('td', { class: 'small', testid: 'attempt-connection' },
        a.remoteAddress ? h('span', { class: 'mono', testid: 'attempt-remote-address' }, a.remoteAddress) : h('span', { class: 'muted' }, 'not connected'),
        h('br'), h('span', { class: 'muted', testid: 'attempt-timings' }, timingsText(a.timings))),
      h('td', { class: 'small' }, a.error ? h('span', { class: 'error-text' }, a.error.code, ': ', a.error.message) : h('span', { class: 'muted' }, '—')),
      h('td', null, a.responseSnippet ? h('pre', { class: 'snippet', testid: 'attempt-snippet' }, a.responseSnippet) : h('span', { class: 'muted' }, 'empty')))),
  { testid: 'attempts-table', caption: 'Attempts, oldest first', empty: 'No attempt yet.' });
}
