import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { AppError } from '../errors.js';
import type { EventInput } from '../webhooks/envelope.js';
import { findCollection, type Collection } from './collections-store.js';
import type { Field } from './fields.js';
import { checkFilter, type Filter } from './query/check.js';
import { matchesFilter, type FilterableRecord } from './query/evaluate.js';

/**
 * Webhook subscriptions' filters (SPEC §9) with the list query's own checker and evaluator, so a target and
 * `GET …/records?filter=` agree on every record. The webhooks layer cannot know a collection's fields; the record
 * write gives each event a judge built here.
 */

/**
 * Checked filters by fields and text: a write judges every filtered target without parsing it again, and the `~`
 * operands of a kept filter stay lowered (evaluate.ts), so a write lowers only its record's values.
 */
const checked = new Map<string, Filter | null>();
const CHECKED_MAX = 1000;

function checkedFilter(fieldsKey: string, fields: readonly Field[], filter: string): Filter | null {
  const key = `${fieldsKey}\0${filter}`;
  let f = checked.get(key);
  if (f === undefined) {
    const r = checkFilter(filter, fields);
    // A filter that no longer checks (a field it names was removed or retyped since it was saved) matches nothing.
    f = 'filter' in r ? r.filter : null;
    if (checked.size >= CHECKED_MAX) checked.clear();
    checked.set(key, f);
  }
  return f;
}

type RecordJsonLike = { id?: unknown; version?: unknown; createdAt?: unknown; updatedAt?: unknown; data?: unknown };

function filterable(r: RecordJsonLike | undefined): FilterableRecord | null {
  if (!r || typeof r.id !== 'string' || typeof r.data !== 'object' || r.data === null) return null;
  return {
    id: r.id,
    version: Number(r.version),
    createdAt: Date.parse(String(r.createdAt)),
    updatedAt: Date.parse(String(r.updatedAt)),
    data: r.data as Record<string, unknown>,
  };
}

/**
 * The judge of one record event: a filter holds for `record` (a created record, a deleted one's last state) or, for
 * an update, for `record` or `previous`, so a receiver learns that a record left the set.
 */
export function filterJudge(fields: readonly Field[], payload: Record<string, unknown>): (filter: string) => boolean {
  // Every record write carries a judge, most never asked: nothing is prepared until a filtered target asks. The
  // states are built once for all targets, so each of their text values is lowered once per event (evaluate.ts).
  let prepared: { fieldsKey: string; states: FilterableRecord[] } | null = null;
  return (filter) => {
    prepared ??= {
      fieldsKey: JSON.stringify(fields),
      states: [filterable(payload.record as RecordJsonLike), filterable(payload.previous as RecordJsonLike)].filter((r) => r !== null),
    };
    const f = checkedFilter(prepared.fieldsKey, fields, filter);
    return f !== null && prepared.states.some((r) => matchesFilter(f, r));
  };
}

/** A record event with its judge: what the write path hands the outbox. */
export const judged = <E extends EventInput>(collection: Collection, event: E): E => ({ ...event, filterJudge: filterJudge(collection.fields, event.payload) });

/**
 * Replay's judges: stored events of any collection, each judged against its collection as it is now (read once per
 * replay, through the caller's transaction: on SQLite another connection would wait for it).
 */
export function storedEventJudges(): (db: Kysely<Tables>, event: EventInput) => Promise<EventInput> {
  const collections = new Map<string, Collection | null>();
  return async (db, event) => {
    let c = collections.get(event.collection);
    if (c === undefined) collections.set(event.collection, (c = await findCollection(db, event.collection)));
    return c ? judged(c, event) : event;
  };
}

/**
 * At save: a filter must check against every collection it names (SPEC §9): `validation_failed` at `/filter`, the
 * fault's position in the message.
 */
export async function checkSubscriptionFilter(db: Kysely<Tables>, collections: readonly string[], filter: string): Promise<void> {
  for (const name of collections) {
    const collection = await findCollection(db, name);
    if (!collection) {
      throw new AppError('validation_failed', 'The filter names a collection that does not exist.', {
        errors: [{ path: '/filter', message: `cannot be checked against collection ${JSON.stringify(name)}: no such collection` }],
      });
    }
    const r = checkFilter(filter, collection.fields);
    if ('faults' in r) {
      const f = r.faults[0]!;
      throw new AppError('validation_failed', 'The filter does not check against its collections.', {
        errors: [{ path: '/filter', message: `${f.message} at position ${f.position} (collection ${name})`, position: f.position }],
      });
    }
  }
}
