import type { Kysely } from 'kysely';
import type { DeliveryAttemptsTable, Tables } from '../../db/tables.js';
import type { AttemptRecord } from './job.js';

/** The attempt row a failure transition writes beside its update (delivered batches write theirs in complete.ts). */
export async function insertAttempt(trx: Kysely<Tables>, job: { id: string; webhookId: string }, number: number, a: AttemptRecord): Promise<void> {
  await trx.insertInto('delivery_attempts').values(attemptValues(job.id, job.webhookId, number, a)).execute();
}

/** The row an attempt becomes (complete.ts writes the same columns in bulk). */
export function attemptValues(jobId: string, webhookId: string, number: number, a: AttemptRecord): DeliveryAttemptsTable {
  const t = a.trace?.timings;
  return {
    job_id: jobId,
    webhook_id: webhookId,
    number,
    started_at: a.startedAt,
    duration_ms: Math.round(a.durationMs),
    status_code: a.statusCode,
    error_code: a.error?.code ?? null,
    error_message: a.error?.message ?? null,
    response_snippet: a.responseSnippet,
    remote_address: a.trace?.remoteAddress ?? null,
    dns_ms: t?.dnsMs ?? null,
    connect_ms: t?.connectMs ?? null,
    tls_ms: t?.tlsMs ?? null,
    first_byte_ms: t?.firstByteMs ?? null,
  };
}

export async function listAttempts(db: Kysely<Tables>, jobId: string): Promise<DeliveryAttemptsTable[]> {
  return db.selectFrom('delivery_attempts').selectAll().where('job_id', '=', jobId).orderBy('number').execute();
}

/** Two statements that must land together: inside the caller's transaction, or in one of our own. */
export const inTransaction = <T>(db: Kysely<Tables>, work: (trx: Kysely<Tables>) => Promise<T>): Promise<T> =>
  db.isTransaction ? work(db) : db.transaction().execute(work);
