/**
 * What a target receives (SPEC §9), on its page beside the receiver card: URL, topics, collections, the filter,
 * changed fields, ordering and its state; a broker target's kind, broker and address instead of a URL. The settings form below edits the same values; this card is for reading
 * them at a glance, the filter included (a long one wraps, it is never cut).
 */
import { h, time } from '../dom.js';
import { TARGET_TYPE_LABELS, type Webhook } from '../types.js';
import { card } from './common.js';
import { fact } from './delivery.js';

const DISABLED: Record<string, string> = {
  manual: 'disabled by an admin',
  failing: 'disabled by svc after failing deliveries',
  gone: 'disabled by svc: the receiver answered 410 Gone',
};

/**
 * Where a broker target publishes, in one line: `nats:orders → svc.{collection}.{topic}`, `rabbitmq:mq → svc-events
 * / {collection}.{topic}`, `redis:cache → svc:{collection} (~10000)`. An HTTPS target's is its URL.
 */
export function targetAddress(w: Webhook): string {
  switch (w.type) {
    case 'nats': return `nats:${w.broker} → ${w.subject}`;
    case 'rabbitmq': return `rabbitmq:${w.broker} → ${w.exchange === '' ? '(default exchange)' : w.exchange}${w.routingKey ? ` / ${w.routingKey}` : ''}`;
    case 'redis': return `redis:${w.broker} → ${w.stream}${w.maxLength === null ? '' : ` (~${w.maxLength})`}`;
    default: return w.url ?? '';
  }
}

/** Kind, broker and address for a broker target; the URL for an HTTPS one. */
function destinationFacts(target: Webhook): HTMLElement[][] {
  if (target.type === 'https') return [fact('URL', h('span', { class: 'mono', testid: 'subscription-url' }, target.url))];
  const place = target.type === 'nats' ? `subject ${target.subject}`
    : target.type === 'rabbitmq' ? `exchange ${target.exchange === '' ? '(default)' : target.exchange}, routing key ${target.routingKey ?? '(none)'}`
      : `stream ${target.stream}, ${target.maxLength === null ? 'never trimmed' : `trimmed to ~${target.maxLength}`}`;
  return [
    fact('Kind', h('span', { testid: 'subscription-kind' }, TARGET_TYPE_LABELS[target.type])),
    fact('Broker', h('span', { class: 'mono', testid: 'subscription-broker' }, target.broker)),
    fact('Address', h('span', { class: 'mono', testid: 'subscription-address' }, place)),
  ];
}

export function subscriptionCard(target: Webhook): HTMLElement {
  const list = (items: string[] | null, none: string, testid: string) => items?.length
    ? h('span', { class: 'chips', testid }, items.map((t) => h('span', { class: 'chip' }, t)))
    : h('span', { class: 'muted', testid }, none);
  return card('Subscription', h('dl', { class: 'facts', testid: 'subscription-facts' },
    ...destinationFacts(target),
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
