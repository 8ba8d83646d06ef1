import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import { insertAttempt, type AttemptRecord } from './attempts-store.js';

/**
 * delivering → pending (retry after `delayMs`) or delivering → dead (`delayMs` null: the round is over),
 * with the failed attempt. False when the lease was lost.
 */
export async function failJob(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  jobId: string,
  leaseId: string,
  attempt: AttemptRecord & { error: { code: string; message: string } },
  delayMs: number | null,
): Promise<boolean> {
  // Two statements that must land together: inside the caller's transaction, or in one of our own.
  const run = async (trx: Kysely<Tables>): Promise<boolean> => {
    const now = caps.nowMs();
    const row = await trx
      .updateTable('delivery_jobs')
      .set((eb) => ({
        state: delayMs === null ? 'dead' : 'pending',
        attempt_count: eb('attempt_count', '+', 1),
        next_attempt_at: delayMs === null ? eb.ref('next_attempt_at') : eb(now, '+', delayMs),
        lease_id: null,
        lease_expires_at: null,
        last_error_code: attempt.error.code,
        last_error_message: attempt.error.message,
        updated_at: now,
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
