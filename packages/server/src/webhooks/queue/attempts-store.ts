import type { Kysely } from 'kysely';
import type { DeliveryAttemptsTable, Tables } from '../../db/tables.js';

export interface AttemptRecord {
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: { code: string; message: string } | null;
  responseSnippet: string;
}

/** One multi-row INSERT; callers keep batches well under the databases' parameter limits (8 per row). */
export async function insertAttempts(db: Kysely<Tables>, rows: ReadonlyArray<{ jobId: string; number: number; attempt: AttemptRecord }>): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('delivery_attempts')
    .values(
      rows.map(({ jobId, number, attempt: a }) => ({
        job_id: jobId,
        number,
        started_at: a.startedAt,
        duration_ms: Math.round(a.durationMs),
        status_code: a.statusCode,
        error_code: a.error?.code ?? null,
        error_message: a.error?.message ?? null,
        response_snippet: a.responseSnippet,
      })),
    )
    .execute();
}

export async function insertAttempt(db: Kysely<Tables>, jobId: string, number: number, a: AttemptRecord): Promise<void> {
  await insertAttempts(db, [{ jobId, number, attempt: a }]);
}

export async function listAttempts(db: Kysely<Tables>, jobId: string): Promise<DeliveryAttemptsTable[]> {
  return db.selectFrom('delivery_attempts').selectAll().where('job_id', '=', jobId).orderBy('number').execute();
}
