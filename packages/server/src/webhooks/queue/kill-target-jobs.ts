import type { Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';

/** pending|delivering → dead for every unfinished job of a deleted target (run in the delete's transaction). */
export async function killJobsOfTarget(db: Kysely<Tables>, webhookId: string, now: number): Promise<number> {
  const res = await db
    .updateTable('delivery_jobs')
    .set({
      state: 'dead',
      lease_id: null,
      lease_expires_at: null,
      last_error_code: 'target_deleted',
      last_error_message: 'The webhook target was deleted.',
      updated_at: now,
    })
    .where('webhook_id', '=', webhookId)
    .where('state', 'in', ['pending', 'delivering'])
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
