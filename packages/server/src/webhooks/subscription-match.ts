import type { EventInput } from './envelope.js';
import type { TargetRow } from './targets-store.js';

/**
 * What a target's subscription wants (SPEC §9, §10): the one rule for the write path's enqueue and for replay.
 * Topics are matched by the query that finds subscribed targets; this judges the rest.
 */

const RECORD_TOPICS: ReadonlySet<string> = new Set(['record.created', 'record.updated', 'record.deleted']);

/** A change to a record: only these are narrowed by a target's subscription or held back by its ordering (SPEC §9). */
export const isRecordEvent = (event: Pick<EventInput, 'topic'>): boolean => RECORD_TOPICS.has(event.topic);

type RecordPayload = { record?: { data?: Record<string, unknown> }; previous?: { data?: Record<string, unknown> } };

const fieldValue = (data: Record<string, unknown> | undefined, field: string): string =>
  JSON.stringify(data && Object.hasOwn(data, field) ? data[field] : null);

/** Whether a field changed, by event payload: compared once per event, however many targets watch the field. */
const changedByEvent = new WeakMap<object, Map<string, boolean>>();

function fieldChanged(payload: RecordPayload, field: string): boolean {
  let byField = changedByEvent.get(payload);
  if (!byField) changedByEvent.set(payload, (byField = new Map()));
  let changed = byField.get(field);
  if (changed === undefined) byField.set(field, (changed = fieldValue(payload.record?.data, field) !== fieldValue(payload.previous?.data, field)));
  return changed;
}

/** `changedFields`: a record.updated counts only when one of these fields' value differs between previous and record. */
function changesWatchedField(target: TargetRow, event: EventInput): boolean {
  if (target.changedFields === null || event.topic !== 'record.updated') return true;
  return target.changedFields.some((f) => fieldChanged(event.payload as RecordPayload, f));
}

/**
 * The target's `filter` (SPEC §9): holds for a created record, a deleted one's last state, and an update's record or
 * previous state — judged by the event's own judge. A null filter lets everything through.
 */
function matchesFilter(target: Pick<TargetRow, 'filter'>, event: EventInput): boolean {
  if (target.filter === null) return true;
  return event.filterJudge?.(target.filter) ?? false;
}

/**
 * Whether `target` gets a job for `event`: its collections, changed fields and filter, for record events; its
 * collections alone for a `collection.deleted` (it names a collection; filter and changed fields are about records).
 */
export function wantsEvent(target: TargetRow, event: EventInput): boolean {
  if (event.topic === 'collection.deleted') return target.collections === null || target.collections.includes(event.collection);
  if (!isRecordEvent(event)) return true;
  if (target.collections !== null && !target.collections.includes(event.collection)) return false;
  return changesWatchedField(target, event) && matchesFilter(target, event);
}

/**
 * Replay's rule: a stored event the target would have been sent. A `webhook.test` event was made for the one target it
 * was sent to, and an operational event is never sent to the target it is about.
 */
export function subscriptionMatches(target: TargetRow, event: EventInput): boolean {
  if (event.topic === 'webhook.test' || !(target.topics as readonly string[]).includes(event.topic)) return false;
  const about = event.payload as { webhook?: { id?: unknown }; delivery?: { webhookId?: unknown } };
  if (about.webhook?.id === target.id || about.delivery?.webhookId === target.id) return false;
  return wantsEvent(target, event);
}
