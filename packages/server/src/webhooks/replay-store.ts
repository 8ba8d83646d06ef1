import { sql, type Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { idFloorAt } from '../lib/ids.js';
import { noJobOfTarget } from './queue/job.js';

/**
 * Replay's reads of the events table (SPEC §10, §12). A replay walks the window a slice of the primary key at a time
 * (replayScanEnd), so no statement examines more than a slice, whatever the table holds; each slice's candidates
 * are picked by topic and collection in SQL from columns stored before the payload, so the payload of an event the
 * target is not subscribed to is never read — on SQLite not even its overflow pages, on PostgreSQL not its TOAST.
 * Only candidates whose subscription needs the payload (filter, changedFields, an operational event's subject)
 * are read whole, by id, in batches bounded in bytes (eventPayloads).
 */

/** Where a slice of the walk starts: after `afterId`, or at the window's start. */
export interface ReplaySlice {
  from: number;
  afterId: string | null;
}

/** What the target's subscription asks for, as SQL can judge it. */
export interface ReplaySelection {
  webhookId: string;
  from: number;
  to: number;
  /** Record topics the target takes, narrowed by `collections` (null: all). */
  recordTopics: readonly string[];
  collections: readonly string[] | null;
  /** Other topics it takes (operational events), whatever their collection. */
  otherTopics: readonly string[];
}

export interface ReplayCandidate {
  id: string;
  topic: string;
  collection: string;
  record_id: string;
  /** The payload's size in bytes, read without reading it (octet_length: SQLite's record header, PostgreSQL's TOAST pointer). */
  size: number;
}

/**
 * Event ids sort by creation time and are never earlier than it, so the window's start is a floor on the key. One
 * lower bound, never two: SQLite ranges its index scan on one of them and filters by the other, and a walk that
 * started at the floor every slice would cost the square of the window.
 */
const sliceStart = (db: Kysely<Tables>, s: ReplaySlice) =>
  db.selectFrom('events as e').where('e.id', s.afterId === null ? '>=' : '>', s.afterId ?? idFloorAt('evt', s.from));

/**
 * The id `scan` events into the walk from this slice's start: the slice is (start, that id]. Null when fewer are
 * left: the slice runs to the end of the table. One walk of `scan` entries of the primary key's index.
 */
export async function replayScanEnd(db: Kysely<Tables>, s: ReplaySlice, scan: number): Promise<string | null> {
  const row = await sliceStart(db, s).select('e.id').orderBy('e.id').limit(1).offset(scan - 1).executeTakeFirst();
  return row?.id ?? null;
}

/**
 * The events of one slice that the selection takes and this target has no job for, oldest first; their payloads are
 * not read. Events without a stored payload cannot be sent.
 */
export function replayCandidatesQuery(db: Kysely<Tables>, s: ReplaySlice & { throughId: string | null }, sel: ReplaySelection) {
  let q = sliceStart(db, s)
    .select(['e.id', 'e.topic', 'e.collection', 'e.record_id', sql<number>`octet_length(e.payload)`.as('size')])
    .where('e.created_at', '>=', sel.from)
    .where('e.created_at', '<=', sel.to)
    .where('e.payload', 'is not', null)
    .where((eb) => {
      const parts = [];
      if (sel.recordTopics.length > 0 && sel.collections?.length !== 0) {
        const topic = eb('e.topic', 'in', [...sel.recordTopics]);
        parts.push(sel.collections === null ? topic : eb.and([topic, eb('e.collection', 'in', [...sel.collections])]));
      }
      if (sel.otherTopics.length > 0) parts.push(eb('e.topic', 'in', [...sel.otherTopics]));
      return eb.or(parts);
    })
    .where(noJobOfTarget('e.id', sel.webhookId))
    .orderBy('e.id');
  if (s.throughId !== null) q = q.where('e.id', '<=', s.throughId);
  return q;
}

export async function replayCandidates(db: Kysely<Tables>, s: ReplaySlice & { throughId: string | null }, sel: ReplaySelection): Promise<ReplayCandidate[]> {
  const rows = await replayCandidatesQuery(db, s, sel).execute();
  return rows.map((r) => ({ ...r, size: Number(r.size ?? 0) }));
}

/** The stored payloads of these events (the caller bounds how many bytes it asks for at once). */
export async function eventPayloads(db: Kysely<Tables>, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('events').select(['id', 'payload']).where('id', 'in', [...ids]).execute();
  return new Map(rows.map((r) => [r.id, r.payload ?? '{}']));
}
