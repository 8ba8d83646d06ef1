import type { TargetRow } from './targets-store.js';

/** An event as a subscription judges it: what it is about, and its payload (JSON text, as stored). */
export interface SubscribedEvent {
  topic: string;
  collection: string;
  recordId: string;
  payload: string | null;
}

/**
 * Whether `target`'s subscription wants `event`: the one rule replay uses (and new subscription fields extend here:
 * collections, filters, changed fields). Today: the event's topic is one of the target's. A `webhook.test` event is
 * never matched: it was made for the one target it was sent to.
 */
export function subscriptionMatches(target: Pick<TargetRow, 'topics'>, event: SubscribedEvent): boolean {
  if (event.topic === 'webhook.test') return false;
  return (target.topics as readonly string[]).includes(event.topic);
}
