import type { Kysely } from 'kysely';
import type { InsertPart } from '../db/compiled.js';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { Tables } from '../db/tables.js';
import { newId, type EventId } from '../lib/ids.js';

/**
 * The events table's writes: an event is written inside its record write's transaction, by the delivery engine's
 * enqueue (webhooks/queue/enqueue.ts) beside its jobs, with the trace context of its write's span. What the
 * feed reads back (feed-store.ts) is decided here: which events are in the feed, at which position, with which JSON.
 */

/** An event about to be written. */
export interface NewEvent {
  id: EventId;
  topic: string;
  collection: string;
  recordId: string;
  /** The payload as stored JSON text: what every delivery of the event and the feed carry, byte for byte. */
  payloadJson: string;
  createdAt: number;
  /** In the feed (at the next position, SPEC §7), or not: a `webhook.test` event is for its one target only. */
  inFeed: boolean;
  /** The write span's context (SPEC §15, migration 019), or null: not traced. */
  trace: EventTrace | null;
}

/** A span context as the W3C headers carry it, stored with an event. */
export interface EventTrace {
  readonly traceparent: string;
  readonly tracestate: string | null;
}

/**
 * A new event with its id. Record changes are feed events, and their payload names the event (SPEC §7); a
 * webhook.test is neither.
 */
export function newEvent(e: { topic: string; collection: string; recordId: string; payload: Record<string, unknown> }, now: number, trace: EventTrace | null = null): NewEvent {
  const id = newId('evt', now);
  const inFeed = e.topic !== 'webhook.test';
  const payloadJson = JSON.stringify(inFeed ? { ...e.payload, eventId: id } : e.payload);
  return { id, topic: e.topic, collection: e.collection, recordId: e.recordId, payloadJson, createdAt: now, inFeed, trace };
}

/**
 * A feed event's JSON up to its payload (SPEC §7: `{"id","topic","collection","recordId","occurredAt","payload"}`),
 * stored with the event (migration 012) so that a feed page is each row's prefix, payload and `}`, nothing to quote
 * or format per row. `occurredAt` is the event's time in ISO 8601 with milliseconds, UTC, as Date#toISOString.
 */
export const feedEventPrefix = (e: { id: string; topic: string; collection: string; recordId: string; createdAt: number }): string =>
  `{"id":${JSON.stringify(e.id)},"topic":${JSON.stringify(e.topic)},"collection":${JSON.stringify(e.collection)},"recordId":${JSON.stringify(e.recordId)},"occurredAt":"${new Date(e.createdAt).toISOString()}","payload":`;

const EVENT_COLUMNS = ['id', 'topic', 'collection', 'record_id', 'payload', 'created_at', 'json_prefix'] as const;
const TRACED_COLUMNS = [...EVENT_COLUMNS, 'traceparent', 'tracestate'] as const;

/**
 * The inserts of the events, in order, for the caller to run in its transaction (db/compiled.ts insertTogether, with
 * the record and the jobs of the same write): one for the feed's and one for the others. Feed events each at the next
 * position (`tx`, `position`). A traced write's events carry its context in the same insert (its own statement
 * text); an untraced one's insert names no trace column at all, as before tracing existed (SPEC §15: nothing
 * measurable spent when it is off).
 */
export async function eventInserts(trx: Kysely<Tables>, caps: DialectCapabilities, events: readonly NewEvent[]): Promise<InsertPart[]> {
  const traced = events.some((e) => e.trace !== null);
  const feed: Array<unknown[]> = [];
  const other: Array<unknown[]> = [];
  for (const e of events) {
    const prefix = e.inFeed ? feedEventPrefix(e) : null;
    const row = [e.id, e.topic, e.collection, e.recordId, e.payloadJson, e.createdAt, prefix];
    if (traced) row.push(e.trace?.traceparent ?? null, e.trace?.tracestate ?? null);
    (e.inFeed ? feed : other).push(row);
  }
  const [columns, suffix] = traced ? [TRACED_COLUMNS, '-traced'] : [EVENT_COLUMNS, ''];
  const unfed: InsertPart = { spec: { name: `events-insert-unfed${suffix}`, table: 'events', columns: [...columns, 'tx', 'position'] }, rows: other.map((row) => [...row, null, null]) };
  return [await feedInsert(trx, caps, feed, columns, suffix), unfed];
}

/** The feed's events, each at the next position (`tx`, `position`). */
async function feedInsert(
  trx: Kysely<Tables>,
  caps: DialectCapabilities,
  rows: ReadonlyArray<readonly unknown[]>,
  columns: readonly (keyof Tables['events'] & string)[],
  suffix: string,
): Promise<InsertPart> {
  if (rows.length === 0) return { spec: { name: 'events-insert-feed-none', table: 'events', columns }, rows };
  const at = await caps.eventPositions(trx, rows.length);
  if ('values' in at) {
    const spec = { name: `events-insert-feed-values${suffix}`, table: 'events', columns: [...columns, 'tx', 'position'] } as const;
    return { spec, rows: rows.map((row, i) => [...row, at.values[i]!.tx, at.values[i]!.position]) };
  }
  return { spec: { name: `events-insert-feed-expressions${suffix}`, table: 'events', columns, fixed: at.expressions }, rows };
}
