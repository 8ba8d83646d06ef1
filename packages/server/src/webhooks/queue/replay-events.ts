import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import { newId, type DeliveryId, type EventId, type WebhookId } from '../../lib/ids.js';
import { noJobOfTarget, recordTopic } from './job.js';
import { promoteHeld } from './promote-held.js';

/**
 * [*] → pending for events a target missed (POST /admin/v1/webhooks/{id}/replay): one job of this target per event
 * named, in one statement whose every row is guarded by "this target has no job for this event yet", so an event
 * another replay (or the write itself) already gave a job is skipped. Run one bounded batch at a time, inside the
 * caller's transaction. The job is built from the event row, as enqueue builds it; its envelope comes from the
 * event's stored payload. Returns the ids of the jobs created.
 *
 * For a target that orders by record the jobs are made `held` ([*] → held), then promoteHeld releases the oldest of
 * each record that has no unfinished job: the replayed events of a record go out one after another, in event order,
 * after whatever of that record was already waiting.
 *
 * On PostgreSQL two replays of one target at once would each insert under a snapshot that cannot see the other's
 * uncommitted jobs, and both give the event a job: the target's row is locked first, in a statement of its own, so
 * the second insert starts after the first commits and its snapshot sees those jobs. SQLite's transactions take the
 * single write lock when they begin.
 */
export async function replayEvents(trx: Kysely<Tables>, caps: DialectCapabilities, opts: { now: number; webhookId: WebhookId; ordered: boolean; eventIds: readonly EventId[] }): Promise<DeliveryId[]> {
  const { now, webhookId } = opts;
  if (opts.eventIds.length === 0) return [];
  await caps.lockRow(trx, 'webhooks', 'id', webhookId);
  // (event id, new job id) pairs; a VALUES list names its columns column1, column2 on both databases.
  const pairs = sql.join(opts.eventIds.map((eventId) => sql`(${eventId}, ${newId('del', now)})`));
  // Literals, not parameters, in the select list: PostgreSQL would type those parameters as text.
  const { rows } = await sql<{ id: string }>`
    insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start,
                               next_attempt_at, created_at, updated_at, ordered)
    select v.column2, ${sql.lit(webhookId)}, e.id, e.topic, e.collection, e.record_id, ${sql.lit(opts.ordered ? 'held' : 'pending')}, 0, 0,
           ${sql.lit(now)}, ${sql.lit(now)}, ${sql.lit(now)}, ${opts.ordered ? sql`case when ${recordTopic('e.topic')} then 1 else 0 end` : sql`0`}
      from (values ${pairs}) as v
      join events e on e.id = v.column1
     where e.payload is not null
       and ${noJobOfTarget('e.id', webhookId)}
    returning id`.execute(trx);
  const ids = rows.map((r) => r.id as DeliveryId);
  if (opts.ordered) await promoteHeld(trx, caps, { now, after: ids });
  return ids;
}
