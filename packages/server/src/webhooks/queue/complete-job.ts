import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import { insertAttempts, type AttemptRecord } from './attempts-store.js';

export interface Completion {
  jobId: string;
  attempt: AttemptRecord;
}

/**
 * delivering → delivered for a batch of jobs held under one lease, with the attempts that did it: one guarded
 * UPDATE for the batch and one multi-row INSERT for the attempts of the jobs it changed, instead of two
 * statements per job. Returns the ids it applied to; a job whose lease was lost is left alone (no attempt row).
 */
export async function completeJobs(db: Kysely<Tables>, caps: DialectCapabilities, leaseId: string, done: readonly Completion[]): Promise<Set<string>> {
  if (done.length === 0) return new Set();
  // Two statements that must land together: inside the caller's transaction, or in one of our own.
  const run = async (trx: Kysely<Tables>): Promise<Set<string>> => {
    const rows = await trx
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
      .where('id', 'in', done.map((d) => d.jobId))
      .where('state', '=', 'delivering')
      .where('lease_id', '=', leaseId)
      .returning(['id', 'attempt_count'])
      .execute();
    const numbers = new Map(rows.map((r) => [r.id, r.attempt_count]));
    await insertAttempts(
      trx,
      done.filter((d) => numbers.has(d.jobId)).map((d) => ({ jobId: d.jobId, number: numbers.get(d.jobId)!, attempt: d.attempt })),
    );
    return new Set(numbers.keys());
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}

/** delivering → delivered for one job. False when the lease was lost (nothing written). */
export async function completeJob(db: Kysely<Tables>, caps: DialectCapabilities, jobId: string, leaseId: string, attempt: AttemptRecord): Promise<boolean> {
  return (await completeJobs(db, caps, leaseId, [{ jobId, attempt }])).has(jobId);
}
