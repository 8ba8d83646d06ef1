/** One event of the feed (GET /admin/v1/events/{id}, SPEC §17): what changed, its payload, and the jobs it made. */
import { api, seg } from '../api.js';
import { h, replace, time } from '../dom.js';
import { href, type PageContext } from '../router.js';
import { copyId } from '../ui/copy-id.js';
import { errorBanner } from '../ui/feedback.js';
import type { EventDetail } from '../types.js';
import { card, jsonBlock, loading, pageHeader } from './common.js';
import { deliveriesTable, loadTargetNames } from './deliveries-table.js';
import { fact } from './delivery.js';

export function eventPage(ctx: PageContext): HTMLElement {
  const id = ctx.params.id ?? '';
  const header = h('div', null, pageHeader(h('span', { class: 'mono' }, id), { testid: 'event-title' }));
  const body = h('div', { class: 'stack-lg' }, loading());
  const names = new Map<string, string>();

  const load = async () => {
    let event: EventDetail;
    try {
      event = await api.get<EventDetail>(`/events/${seg(id)}`);
    } catch (err) {
      if (ctx.alive()) replace(body, errorBanner(err));
      return;
    }
    if (!ctx.alive()) return;
    replace(header, pageHeader(h('span', null, h('span', { class: 'chip chip-title' }, event.topic), ' ', h('span', { class: 'mono' }, event.id)), {
      testid: 'event-title',
      subtitle: h('span', null, event.collection, ' · ', event.recordId, ' · ', time(event.occurredAt)),
    }));
    replace(body,
      card('Event', h('dl', { class: 'facts', testid: 'event-facts' },
        fact('Event', copyId(event.id, { label: 'event id', testid: 'event-id' })),
        fact('Topic', h('span', { class: 'chip', testid: 'event-topic' }, event.topic)),
        fact('Collection', event.collection),
        fact('Record', h('span', null, h('span', { class: 'mono', testid: 'event-record' }, event.recordId), ' · ',
          h('a', { href: href('/deliveries', { q: event.recordId }), class: 'text-link', testid: 'event-record-jobs' }, 'its deliveries'))),
        fact('Occurred', time(event.occurredAt)))),
      card(`Deliveries (${event.deliveries.length})`, deliveriesTable(event.deliveries, names, {
        caption: 'Delivery jobs of this event',
        empty: 'No delivery job: no enabled target was subscribed to this event when it committed (or retention has pruned its jobs).',
      })),
      card('Payload', h('p', { class: 'muted small' }, 'As in the feed, and as the payload of every delivery of this event.'), jsonBlock(event.payload ?? null, 'event-payload')));
    void loadTargetNames(ctx.alive, names, body);
  };
  void load();

  return h('div', { class: 'page' },
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/events' }, 'Events'), ' / '),
    header, body);
}
