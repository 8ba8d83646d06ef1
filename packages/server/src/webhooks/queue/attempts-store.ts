import type { Kysely } from 'kysely';
import type { DeliveryAttemptsTable, Tables } from '../../db/tables.js';

export interface AttemptRecord {
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: { code: string; message: string } | null;
  responseSnippet: string;
}

/** One attempt (a failure; delivered batches are written by completeJobs). */
export async function insertAttempt(db: Kysely<Tables>, jobId: string, number: number, a: AttemptRecord): Promise<void> {
  await db
    .insertInto('delivery_attempts')
    .values({
      job_id: jobId,
      number,
      started_at: a.startedAt,
      duration_ms: Math.round(a.durationMs),
      status_code: a.statusCode,
      error_code: a.error?.code ?? null,
      error_message: a.error?.message ?? null,
      response_snippet: a.responseSnippet,
    })
    .execute();
}

export async function listAttempts(db: Kysely<Tables>, jobId: string): Promise<DeliveryAttemptsTable[]> {
  return db.selectFrom('delivery_attempts').selectAll().where('job_id', '=', jobId).orderBy('number').execute();
}
