import { sql, type Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';
import type { WebhookId } from '../../lib/ids.js';
import { unfinishedJobIds } from './job.js';

/** pending|delivering|held → dead for every unfinished job of a deleted target (in the delete's transaction). */
export async function killTargetJobs(trx: Kysely<Tables>, opts: { now: number; webhookId: WebhookId }): Promise<number> {
  const res = await trx
    .updateTable('delivery_jobs')
    .set({
      state: 'dead',
      lease_id: null,
      lease_expires_at: null,
      last_error_code: 'target_deleted',
      last_error_message: 'The webhook target was deleted.',
      updated_at: opts.now,
    })
    .where(sql<boolean>`id in (${unfinishedJobIds(opts.webhookId)})`)
    // Again on the row itself: on PostgreSQL a job the subquery saw in flight may be delivered by the time its row is
    // locked, and the update then re-checks this condition on the newest version, not the subquery.
    .where('state', 'in', ['pending', 'delivering', 'held'])
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
