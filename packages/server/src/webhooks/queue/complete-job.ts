import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import { insertAttempt, type AttemptRecord } from './attempts-store.js';

/** delivering → delivered, with the attempt that did it. False when the lease was lost (nothing written). */
export async function completeJob(db: Kysely<Tables>, caps: DialectCapabilities, jobId: string, leaseId: string, attempt: AttemptRecord): Promise<boolean> {
  // Two statements that must land together: inside the caller's transaction, or in one of our own.
  const run = async (trx: Kysely<Tables>): Promise<boolean> => {
    const row = await trx
      .updateTable('delivery_jobs')
      .set((eb) => ({
        state: 'delivered',
        attempt_count: eb('attempt_count', '+', 1),
        lease_id: null,
        lease_expires_at: null,
        last_error_code: null,
        last_error_message: null,
        updated_at: caps.nowMs(),
      }))
      .where('id', '=', jobId)
      .where('state', '=', 'delivering')
      .where('lease_id', '=', leaseId)
      .returning('attempt_count')
      .executeTakeFirst();
    if (!row) return false;
    await insertAttempt(trx, jobId, row.attempt_count, attempt);
    return true;
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}
