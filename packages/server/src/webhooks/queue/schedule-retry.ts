import type { Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';
import { inTransaction, insertAttempt } from './attempts-store.js';
import type { AttemptRecord, HeldRef } from './job.js';
import type { WebhookId } from '../../lib/ids.js';

/** delivering → pending at `at` (the decision's), with the failed attempt. False when the lease was lost. */
export async function scheduleRetry(
  db: Kysely<Tables>,
  opts: { now: number; job: HeldRef; attempt: AttemptRecord & { error: { code: string; message: string } }; at: number },
): Promise<boolean> {
  const { now, job, attempt, at } = opts;
  return inTransaction(db, async (trx) => {
    const row = await trx
      .updateTable('delivery_jobs')
      .set((eb) => ({
        state: 'pending',
        attempt_count: eb('attempt_count', '+', 1),
        next_attempt_at: at,
        lease_id: null,
        lease_expires_at: null,
        last_error_code: attempt.error.code,
        last_error_message: attempt.error.message,
        updated_at: now,
      }))
      .where('id', '=', job.id)
      .where('state', '=', 'delivering')
      .where('lease_id', '=', job.lease)
      .returning(['attempt_count', 'webhook_id'])
      .executeTakeFirst();
    if (!row) return false;
    await insertAttempt(trx, { id: job.id, webhookId: row.webhook_id as WebhookId }, row.attempt_count, attempt);
    return true;
  });
}
