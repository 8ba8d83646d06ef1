/**
 * What a target receives (SPEC §9), on its page beside the receiver card: URL, topics, collections, the filter,
 * changed fields, ordering and its state. The settings form below edits the same values; this card is for reading
 * them at a glance, the filter included (a long one wraps, it is never cut).
 */
import { h, time } from '../dom.js';
import type { Webhook } from '../types.js';
import { card } from './common.js';
import { fact } from './delivery.js';

const DISABLED: Record<string, string> = {
  manual: 'disabled by an admin',
  failing: 'disabled by svc after failing deliveries',
  gone: 'disabled by svc: the receiver answered 410 Gone',
};

export function subscriptionCard(target: Webhook): HTMLElement {
  const list = (items: string[] | null, none: string, testid: string) => items?.length
    ? h('span', { class: 'chips', testid }, items.map((t) => h('span', { class: 'chip' }, t)))
    : h('span', { class: 'muted', testid }, none);
  return card('Subscription', h('dl', { class: 'facts', testid: 'subscription-facts' },
    fact('URL', h('span', { class: 'mono', testid: 'subscription-url' }, target.url)),
    fact('Topics', list(target.topics, 'none', 'subscription-topics')),
    fact('Collections', list(target.collections, 'All collections', 'subscription-collections')),
    fact('Filter', target.filter
      ? h('code', { class: 'filter-text', testid: 'subscription-filter' }, target.filter)
      : h('span', { class: 'muted', testid: 'subscription-filter' }, 'None: every record event of those collections')),
    fact('Changed fields', list(target.changedFields, 'Any change', 'subscription-changed-fields')),
    fact('Ordering', h('span', { testid: 'subscription-ordering' }, target.ordering === 'record' ? 'Per record: one at a time, oldest version first' : 'None')),
    fact('State', h('span', { testid: 'subscription-state' }, target.enabled ? 'Enabled'
      : [DISABLED[target.disabledReason ?? 'manual'] ?? 'Disabled', target.disabledAt ? [' ', time(target.disabledAt)] : null]))));
}
