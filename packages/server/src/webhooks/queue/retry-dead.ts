import type { Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';

/**
 * dead → pending for one more full round of the schedule; attempt numbering continues. Only while the target is
 * not deleted: a claim needs a live target, so an orphan sent back to pending would wait there for ever.
 */
export async function retryDead(db: Kysely<Tables>, opts: { now: number; jobId: string; firstDelayMs: number }): Promise<boolean> {
  const res = await db
    .updateTable('delivery_jobs')
    .set((eb) => ({ state: 'pending', round_start: eb.ref('attempt_count'), next_attempt_at: opts.now + opts.firstDelayMs, updated_at: opts.now }))
    .where('id', '=', opts.jobId)
    .where('state', '=', 'dead')
    .where(({ exists, selectFrom }) =>
      exists(selectFrom('webhooks as w').select('w.id').whereRef('w.id', '=', 'delivery_jobs.webhook_id').where('w.deleted_at', 'is', null)),
    )
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
