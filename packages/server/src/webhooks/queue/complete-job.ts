import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import type { AttemptRecord } from './attempts-store.js';

export interface Completion {
  jobId: string;
  attempt: AttemptRecord;
}

/**
 * delivering → delivered for a batch of jobs held under one lease, with the attempts that did it. Returns the ids
 * it applied to; a job whose lease was lost is left alone (and gets no attempt row).
 *
 * The statements have one text whatever the batch size (the batch travels as one array or JSON parameter), so
 * they are parsed and planned once, not once per size. On PostgreSQL the update and the insert are one statement
 * (a data-modifying WITH), atomic on its own: one round trip and one commit for the batch. On SQLite, which has no
 * data-modifying WITH, they are two statements in one transaction (the caller's, or our own).
 */
export async function completeJobs(db: Kysely<Tables>, caps: DialectCapabilities, leaseId: string, done: readonly Completion[]): Promise<Set<string>> {
  if (done.length === 0) return new Set();
  const now = caps.nowMs();
  if (caps.name === 'postgres') {
    const ids = done.map((d) => d.jobId);
    const { rows } = await sql<{ job_id: string }>`
      with done as (
        update delivery_jobs
           set state = 'delivered', attempt_count = attempt_count + 1, lease_id = null, lease_expires_at = null,
               last_error_code = null, last_error_message = null, updated_at = ${now}
         where id = any(${ids}::text[]) and state = 'delivering' and lease_id = ${leaseId}
        returning id, attempt_count)
      insert into delivery_attempts (job_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet)
      select done.id, done.attempt_count, a.started_at, a.duration_ms, a.status_code, null, null, a.snippet
        from done
        join unnest(${ids}::text[], ${done.map((d) => d.attempt.startedAt)}::bigint[],
                    ${done.map((d) => Math.round(d.attempt.durationMs))}::int[], ${done.map((d) => d.attempt.statusCode)}::int[],
                    ${done.map((d) => d.attempt.responseSnippet)}::text[]) as a(job_id, started_at, duration_ms, status_code, snippet)
          on a.job_id = done.id
      returning job_id`.execute(db);
    return new Set(rows.map((r) => r.job_id));
  }
  const run = async (trx: Kysely<Tables>): Promise<Set<string>> => {
    const { rows } = await sql<{ id: string; attempt_count: number }>`
      update delivery_jobs
         set state = 'delivered', attempt_count = attempt_count + 1, lease_id = null, lease_expires_at = null,
             last_error_code = null, last_error_message = null, updated_at = ${now}
       where id in (select value from json_each(${JSON.stringify(done.map((d) => d.jobId))})) and state = 'delivering' and lease_id = ${leaseId}
      returning id, attempt_count`.execute(trx);
    const numbers = new Map(rows.map((r) => [r.id, r.attempt_count]));
    const attempts = done
      .filter((d) => numbers.has(d.jobId))
      .map(({ jobId, attempt: a }) => [jobId, numbers.get(jobId), a.startedAt, Math.round(a.durationMs), a.statusCode, a.responseSnippet]);
    await sql`
      insert into delivery_attempts (job_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet)
      select value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, null, null, value ->> 5
        from json_each(${JSON.stringify(attempts)})`.execute(trx);
    return new Set(numbers.keys());
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}

/** delivering → delivered for one job. False when the lease was lost (nothing written). */
export async function completeJob(db: Kysely<Tables>, caps: DialectCapabilities, jobId: string, leaseId: string, attempt: AttemptRecord): Promise<boolean> {
  return (await completeJobs(db, caps, leaseId, [{ jobId, attempt }])).has(jobId);
}
