import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { newId } from '../lib/ids.js';
import { envelopeBody, type EventInput } from './envelope.js';
import { subscribedTargets } from './targets-store.js';

/**
 * Inside the caller's transaction: the event and one pending job per enabled subscribed target. Either all of
 * it commits with the record write or none of it does. Returns the number of jobs, so the caller wakes workers
 * after commit only when there is something to do.
 */
export async function enqueueEvent(trx: Kysely<Tables>, event: EventInput, now: number, onlyTargetId?: string): Promise<string[]> {
  const targets = onlyTargetId ? [{ id: onlyTargetId }] : await subscribedTargets(trx, event.topic);
  const eventId = newId('evt', now);
  await trx.insertInto('events').values({ id: eventId, topic: event.topic, collection: event.collection, record_id: event.recordId, created_at: now }).execute();
  if (targets.length === 0) return [];
  const jobs = targets.map((t) => {
    const id = newId('del', now);
    return {
      id,
      webhook_id: t.id,
      event_id: eventId,
      topic: event.topic,
      collection: event.collection,
      record_id: event.recordId,
      body: envelopeBody(id, event),
      state: 'pending' as const,
      attempt_count: 0,
      round_start: 0,
      next_attempt_at: now,
      lease_id: null,
      lease_expires_at: null,
      last_error_code: null,
      last_error_message: null,
      created_at: now,
      updated_at: now,
    };
  });
  await trx.insertInto('delivery_jobs').values(jobs).execute();
  return jobs.map((j) => j.id);
}
