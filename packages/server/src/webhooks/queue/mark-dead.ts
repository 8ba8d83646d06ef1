import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import { inTransaction, insertAttempt } from './attempts-store.js';
import type { AttemptRecord, HeldRef } from './job.js';
import { promoteHeld } from './promote-held.js';
import type { WebhookId } from '../../lib/ids.js';

/**
 * delivering → dead: the round's last attempt failed; the attempt is recorded with it, and the record's next held job
 * (ordered targets) released. False when the lease was lost.
 */
export async function markDead(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { now: number; job: HeldRef; attempt: AttemptRecord & { error: { code: string; message: string } } },
): Promise<boolean> {
  const { now, job, attempt } = opts;
  return inTransaction(db, async (trx) => {
    const row = await trx
      .updateTable('delivery_jobs')
      .set((eb) => ({
        state: 'dead',
        attempt_count: eb('attempt_count', '+', 1),
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
    await promoteHeld(trx, caps, { now, after: [job.id] });
    return true;
  });
}
