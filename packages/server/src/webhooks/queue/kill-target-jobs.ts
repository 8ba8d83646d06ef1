import type { Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';
import type { WebhookId } from '../../lib/ids.js';

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
    .where('webhook_id', '=', opts.webhookId)
    .where('state', 'in', ['pending', 'delivering', 'held'])
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
