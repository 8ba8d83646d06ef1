import { sql, type Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';
import { newId } from '../../lib/ids.js';

/**
 * [*] → pending for events a target missed (POST /admin/v1/webhooks/{id}/replay): one job of this target per event
 * named, each inserted by a statement guarded by "this target has no job for this event yet", so an event another
 * replay (or the write itself) already gave a job is skipped. Run inside the caller's transaction, one bounded batch
 * at a time. The job is built from the event row, as enqueue builds it; its envelope comes from the event's stored
 * payload. Returns the ids of the jobs created.
 */
export async function replayEvents(trx: Kysely<Tables>, opts: { now: number; webhookId: string; eventIds: readonly string[] }): Promise<string[]> {
  const { now, webhookId } = opts;
  const created: string[] = [];
  for (const eventId of opts.eventIds) {
    const id = newId('del', now);
    const res = await trx
      .insertInto('delivery_jobs')
      .columns(['id', 'webhook_id', 'event_id', 'topic', 'collection', 'record_id', 'state', 'attempt_count', 'round_start', 'next_attempt_at', 'created_at', 'updated_at'])
      .expression((eb) =>
        eb
          .selectFrom('events as e')
          // Literals, not parameters: PostgreSQL types an INSERT … SELECT's parameters as text.
          .select([
            sql.lit(id).as('id'),
            sql.lit(webhookId).as('webhook_id'),
            'e.id as event_id',
            'e.topic',
            'e.collection',
            'e.record_id',
            sql.lit('pending').as('state'),
            sql.lit(0).as('attempt_count'),
            sql.lit(0).as('round_start'),
            sql.lit(now).as('next_attempt_at'),
            sql.lit(now).as('created_at'),
            sql.lit(now).as('updated_at'),
          ])
          .where('e.id', '=', eventId)
          .where('e.payload', 'is not', null)
          .where(({ not, exists, selectFrom }) =>
            not(exists(selectFrom('delivery_jobs as j').select('j.id').whereRef('j.event_id', '=', 'e.id').where('j.webhook_id', '=', webhookId))),
          ),
      )
      .executeTakeFirst();
    if (Number(res.numInsertedOrUpdatedRows ?? 0) === 1) created.push(id);
  }
  return created;
}
