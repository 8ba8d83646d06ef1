import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import { recordTopic } from './job.js';
import { promoteHeld } from './promote-held.js';
import type { DeliveryId } from '../../lib/ids.js';

/**
 * The update retryDead and recoverDead both make, before they say which dead jobs: one more full round (round_start
 * = attempt_count, numbering continues), due after the schedule's first delay, only while the target is not deleted.
 * The job comes back `held` for a target that orders by record (decided from the target's row in the same
 * statement), else `pending`; a record job's `ordered` mark (migration 011) follows the target's ordering now.
 */
export const reviveDead = (db: Kysely<Tables>, opts: { now: number; firstDelayMs: number }) =>
  db
    .updateTable('delivery_jobs')
    .set((eb) => ({
      state: sql<'pending' | 'held'>`case when exists (select 1 from webhooks w where w.id = delivery_jobs.webhook_id and w.ordering = 'record') then 'held' else 'pending' end`,
      ordered: sql<number>`case when ${recordTopic('delivery_jobs.topic')} and exists (select 1 from webhooks w where w.id = delivery_jobs.webhook_id and w.ordering = 'record') then 1 else 0 end`,
      round_start: eb.ref('attempt_count'),
      next_attempt_at: opts.now + opts.firstDelayMs,
      updated_at: opts.now,
    }))
    .where('state', '=', 'dead')
    .where(({ exists, selectFrom }) =>
      exists(selectFrom('webhooks as w').select('w.id').whereRef('w.id', '=', 'delivery_jobs.webhook_id').where('w.deleted_at', 'is', null)),
    );

/**
 * dead → pending for one more full round of the schedule; attempt numbering continues. Only while the target is
 * not deleted: a claim needs a live target, so an orphan sent back to pending would wait there for ever.
 *
 * For a target that orders by record the job comes back `held` (dead → held), and promoteHeld releases it at once
 * unless its record has an unfinished job: then it waits for that one, as a replayed job does (replay-events.ts), so
 * a record never has two jobs in flight (SPEC §9). Run it in a transaction: a crash between the two statements
 * leaves a held job the worker's sweep releases.
 */
export async function retryDead(db: Kysely<Tables>, caps: DialectCapabilities, opts: { now: number; jobId: DeliveryId; firstDelayMs: number }): Promise<boolean> {
  const { jobId, ...rest } = opts;
  return (await retryDeadJobs(db, caps, { ...rest, jobIds: [jobId] })).length === 1;
}

/**
 * retryDead for a list of jobs (the admin's bulk retry, SPEC §17: at most 100, so one statement): the same guarded
 * update, and promoteHeld for those it sent back. Returns their ids; the others were not dead, do not exist, or
 * belong to a deleted target, and are left as they were.
 */
export async function retryDeadJobs(db: Kysely<Tables>, caps: DialectCapabilities, opts: { now: number; jobIds: readonly DeliveryId[]; firstDelayMs: number }): Promise<DeliveryId[]> {
  if (opts.jobIds.length === 0) return [];
  const rows = await reviveDead(db, opts).where('id', 'in', [...opts.jobIds]).returning('id').execute();
  const revived = rows.map((r) => r.id as DeliveryId);
  await promoteHeld(db, caps, { now: opts.now, after: revived });
  return revived;
}
