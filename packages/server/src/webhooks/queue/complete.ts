import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import { attemptValues, inTransaction } from './attempts-store.js';
import type { AttemptTimings } from '../connection-trace.js';
import type { AttemptRecord, HeldRef } from './job.js';
import { promoteHeld } from './promote-held.js';

export interface Completion {
  job: HeldRef;
  attempt: AttemptRecord;
}

/**
 * delivering → delivered for a batch of jobs, each still under the lease of the claim it names, with the attempts
 * that did it. Returns the ids it applied to; a job whose lease was lost is left alone and gets no attempt row.
 * The next held job of each record of an ordered target is then released (promoteHeld; only for jobs marked `ordered`).
 *
 * The statements have one text whatever the batch size (the batch travels as arrays or one JSON parameter), so they
 * are parsed and planned once, not once per size. On PostgreSQL the update and the insert are one statement (a
 * data-modifying WITH), atomic on its own: one round trip and one commit for the batch. A success also ends its
 * target's failing streak (the auto-disable counters of migration 007), in the same statement or transaction. On SQLite, which has no
 * data-modifying WITH, they are two statements in one transaction (the caller's, or our own).
 */
export async function complete(db: Kysely<Tables>, caps: DialectCapabilities, opts: { now: number; done: readonly Completion[] }): Promise<Set<string>> {
  const { now, done } = opts;
  if (done.length === 0) return new Set();
  const ids = done.map((d) => d.job.id);
  if (caps.dataModifyingWith) {
    const { rows } = await sql<{ job_id: string; ordered: number }>`
      with done as (
        update delivery_jobs j
           set state = 'delivered', attempt_count = j.attempt_count + 1, lease_id = null, lease_expires_at = null,
               last_error_code = null, last_error_message = null, updated_at = ${now}
          from unnest(${ids}::text[], ${done.map((d) => d.job.lease)}::text[]) as held(id, lease)
         where j.id = held.id and j.state = 'delivering' and j.lease_id = held.lease
        returning j.id, j.attempt_count, j.webhook_id, j.ordered, held.lease),
      -- a success ends its target's failing streak (auto-disable's counters, migration 007); no row lock when none
      healthy as (
        update webhooks w set failing_since = null, failed_attempts = 0
         where w.id in (select webhook_id from done) and w.failing_since is not null),
      attempts as (
        insert into delivery_attempts (job_id, webhook_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet,
                                       remote_address, dns_ms, connect_ms, tls_ms, first_byte_ms)
        select done.id, done.webhook_id, done.attempt_count, a.started_at, a.duration_ms, a.status_code, null, null, a.snippet,
               a.remote_address, a.dns_ms, a.connect_ms, a.tls_ms, a.first_byte_ms
          from done
          join unnest(${ids}::text[], ${done.map((d) => d.job.lease)}::text[], ${done.map((d) => d.attempt.startedAt)}::bigint[],
                      ${done.map((d) => Math.round(d.attempt.durationMs))}::int[], ${done.map((d) => d.attempt.statusCode)}::int[],
                      ${done.map((d) => d.attempt.responseSnippet)}::text[], ${done.map((d) => d.attempt.trace?.remoteAddress ?? null)}::text[],
                      ${timing(done, 'dnsMs')}::int[], ${timing(done, 'connectMs')}::int[], ${timing(done, 'tlsMs')}::int[],
                      ${timing(done, 'firstByteMs')}::int[])
               as a(job_id, lease, started_at, duration_ms, status_code, snippet, remote_address, dns_ms, connect_ms, tls_ms, first_byte_ms)
            on a.job_id = done.id and a.lease = done.lease
        returning job_id)
      -- the attempts CTE runs whether read or not; it has a row for each of done's (the same (id, lease) pairs)
      select id as job_id, ordered from done`.execute(db);
    const applied = new Set(rows.map((r) => r.job_id));
    // A statement of its own, after the update: its snapshot then sees a held job a writer committed while this
    // update waited for that writer's lock on the finished job (enqueue.ts newestUnfinished). Lost by a crash just here,
    // the release is made by the worker's sweep.
    await promoteHeld(db, caps, { now, after: orderedOf(rows.map((r) => ({ id: r.job_id, ordered: r.ordered }))) });
    return applied;
  }
  return inTransaction(db, async (trx) => {
    // SQLite's RETURNING cannot name the lease that matched; a job twice in one batch (an old claim's result and the
    // new claim's) keeps only the entry whose lease is the row's, read first in this same write transaction.
    const current = await currentLeases(trx, done);
    const { rows } = await sql<{ id: string; attempt_count: number; webhook_id: string; ordered: number }>`
      update delivery_jobs
         set state = 'delivered', attempt_count = attempt_count + 1, lease_id = null, lease_expires_at = null,
             last_error_code = null, last_error_message = null, updated_at = ${now}
        from (select value ->> 0 as id, value ->> 1 as lease from json_each(${JSON.stringify(done.map((d) => [d.job.id, d.job.lease]))})) as held
       where delivery_jobs.id = held.id and delivery_jobs.state = 'delivering' and delivery_jobs.lease_id = held.lease
      returning delivery_jobs.id, delivery_jobs.attempt_count, delivery_jobs.webhook_id, delivery_jobs.ordered`.execute(trx);
    const numbers = new Map(rows.map((r) => [r.id, r]));
    const attempts = done
      .filter((d) => numbers.has(d.job.id) && (current === null || current.get(d.job.id) === d.job.lease))
      .map(({ job, attempt }) => {
        const { webhook_id, attempt_count } = numbers.get(job.id)!;
        const a = attemptValues(job.id, webhook_id, attempt_count, attempt);
        return [a.job_id, a.webhook_id, a.number, a.started_at, a.duration_ms, a.status_code, a.response_snippet, a.remote_address, a.dns_ms, a.connect_ms, a.tls_ms, a.first_byte_ms];
      });
    await sql`
      insert into delivery_attempts (job_id, webhook_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet,
                                     remote_address, dns_ms, connect_ms, tls_ms, first_byte_ms)
      select value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, null, null, value ->> 6,
             value ->> 7, value ->> 8, value ->> 9, value ->> 10, value ->> 11
        from json_each(${JSON.stringify(attempts)})`.execute(trx);
    await promoteHeld(trx, caps, { now, after: orderedOf(rows) });
    const targets = [...new Set(rows.map((r) => r.webhook_id))];
    if (targets.length > 0) {
      await sql`update webhooks set failing_since = null, failed_attempts = 0 where id in (${sql.join(targets)}) and failing_since is not null`.execute(trx);
    }
    return new Set(numbers.keys());
  });
}

/**
 * The finished jobs whose records may have a held job waiting: only a job marked `ordered` holds its record's place
 * (migration 011), so the others' completions skip promoteHeld's statement (on PostgreSQL a round trip a batch).
 */
const orderedOf = (rows: ReadonlyArray<{ id: string; ordered: number }>): string[] => rows.filter((r) => Number(r.ordered) === 1).map((r) => r.id);

const timing = (done: readonly Completion[], phase: keyof AttemptTimings): Array<number | null> =>
  done.map((d) => d.attempt.trace?.timings[phase] ?? null);

/** Null when every job of the batch is there once (the usual case: no read needed). */
async function currentLeases(trx: Kysely<Tables>, done: readonly Completion[]): Promise<Map<string, string | null> | null> {
  const seen = new Set<string>();
  const twice = done.filter((d) => (seen.has(d.job.id) ? true : (seen.add(d.job.id), false))).map((d) => d.job.id);
  if (twice.length === 0) return null;
  const rows = await trx.selectFrom('delivery_jobs').select(['id', 'lease_id']).where('id', 'in', twice).execute();
  const leases = new Map<string, string | null>(done.map((d) => [d.job.id, d.job.lease]));
  for (const r of rows) leases.set(r.id, r.lease_id);
  return leases;
}
