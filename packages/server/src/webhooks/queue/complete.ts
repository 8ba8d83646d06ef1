import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import { inTransaction } from './attempts-store.js';
import type { AttemptTimings } from '../connection-trace.js';
import type { AttemptRecord, HeldRef } from './job.js';
import { promoteHeld } from './promote-held.js';

export interface Completion {
  job: HeldRef;
  attempt: AttemptRecord;
}

/**
 * delivering → delivered for a batch of jobs, each still under the lease of the claim it names, with the attempts
 * that did it. Returns the ids it applied to; a job whose lease was lost is left alone and keeps no attempt.
 * The next held job of each record of an ordered target is then released (promoteHeld; only for jobs marked `ordered`).
 *
 * The delivering attempt is written on the job row by the same update (its `success_*` columns, migration 020; its
 * number is the job's new `attempt_count`), not as an attempt row: the view `delivery_attempts` shows it beside the
 * rows of failed attempts. Each attempt travels with its (id, lease), so only the entry whose lease is the row's can
 * match, even for a job twice in one batch (an old claim's result and the new claim's).
 *
 * The statements have one text whatever the batch size (the batch travels as arrays or one JSON parameter), so they
 * are parsed and planned once, not once per size. On PostgreSQL the update is one statement with the end of the
 * targets' failing streaks (the auto-disable counters of migration 007; a data-modifying WITH), atomic on its own:
 * one round trip and one commit for the batch. On SQLite the update and the counters' reset are two statements in
 * one transaction (the caller's, or our own).
 */
export async function complete(db: Kysely<Tables>, caps: DialectCapabilities, opts: { now: number; done: readonly Completion[] }): Promise<Set<string>> {
  const { now, done } = opts;
  if (done.length === 0) return new Set();
  if (caps.dataModifyingWith) {
    const { rows } = await sql<{ job_id: string; ordered: number }>`
      with done as (
        update delivery_jobs j
           set state = 'delivered', attempt_count = j.attempt_count + 1, lease_id = null, lease_expires_at = null,
               last_error_code = null, last_error_message = null, updated_at = ${now},
               success_started_at = a.started_at, success_duration_ms = a.duration_ms, success_status_code = a.status_code,
               success_snippet = a.snippet, success_remote_address = a.remote_address, success_dns_ms = a.dns_ms,
               success_connect_ms = a.connect_ms, success_tls_ms = a.tls_ms, success_first_byte_ms = a.first_byte_ms
          from unnest(${done.map((d) => d.job.id)}::text[], ${done.map((d) => d.job.lease)}::text[], ${done.map((d) => d.attempt.startedAt)}::bigint[],
                      ${done.map((d) => Math.round(d.attempt.durationMs))}::int[], ${done.map((d) => d.attempt.statusCode)}::int[],
                      ${done.map((d) => d.attempt.responseSnippet)}::text[], ${done.map((d) => d.attempt.trace?.remoteAddress ?? null)}::text[],
                      ${timing(done, 'dnsMs')}::int[], ${timing(done, 'connectMs')}::int[], ${timing(done, 'tlsMs')}::int[],
                      ${timing(done, 'firstByteMs')}::int[])
               as a(id, lease, started_at, duration_ms, status_code, snippet, remote_address, dns_ms, connect_ms, tls_ms, first_byte_ms)
         where j.id = a.id and j.state = 'delivering' and j.lease_id = a.lease
        returning j.id, j.webhook_id, j.ordered),
      -- a success ends its target's failing streak (auto-disable's counters, migration 007); no row lock when none
      healthy as (
        update webhooks w set failing_since = null, failed_attempts = 0
         where w.id in (select webhook_id from done) and w.failing_since is not null)
      select id as job_id, ordered from done`.execute(db);
    const applied = new Set(rows.map((r) => r.job_id));
    // A statement of its own, after the update: its snapshot then sees a held job a writer committed while this
    // update waited for that writer's lock on the finished job (enqueue.ts newestUnfinished). Lost by a crash just here,
    // the release is made by the worker's sweep.
    await promoteHeld(db, caps, { now, after: orderedOf(rows.map((r) => ({ id: r.job_id, ordered: r.ordered }))) });
    return applied;
  }
  return inTransaction(db, async (trx) => {
    const attempts = done.map(({ job, attempt }) => {
      const t = attempt.trace?.timings;
      return [job.id, job.lease, attempt.startedAt, Math.round(attempt.durationMs), attempt.statusCode, attempt.responseSnippet,
        attempt.trace?.remoteAddress ?? null, t?.dnsMs ?? null, t?.connectMs ?? null, t?.tlsMs ?? null, t?.firstByteMs ?? null];
    });
    const { rows } = await sql<{ id: string; webhook_id: string; ordered: number }>`
      update delivery_jobs
         set state = 'delivered', attempt_count = attempt_count + 1, lease_id = null, lease_expires_at = null,
             last_error_code = null, last_error_message = null, updated_at = ${now},
             success_started_at = a.started_at, success_duration_ms = a.duration_ms, success_status_code = a.status_code,
             success_snippet = a.snippet, success_remote_address = a.remote_address, success_dns_ms = a.dns_ms,
             success_connect_ms = a.connect_ms, success_tls_ms = a.tls_ms, success_first_byte_ms = a.first_byte_ms
        from (select value ->> 0 as id, value ->> 1 as lease, value ->> 2 as started_at, value ->> 3 as duration_ms, value ->> 4 as status_code,
                     value ->> 5 as snippet, value ->> 6 as remote_address, value ->> 7 as dns_ms, value ->> 8 as connect_ms,
                     value ->> 9 as tls_ms, value ->> 10 as first_byte_ms
                from json_each(${JSON.stringify(attempts)})) as a
       where delivery_jobs.id = a.id and delivery_jobs.state = 'delivering' and delivery_jobs.lease_id = a.lease
      returning delivery_jobs.id, delivery_jobs.webhook_id, delivery_jobs.ordered`.execute(trx);
    await promoteHeld(trx, caps, { now, after: orderedOf(rows) });
    const targets = [...new Set(rows.map((r) => r.webhook_id))];
    if (targets.length > 0) {
      await sql`update webhooks set failing_since = null, failed_attempts = 0 where id in (${sql.join(targets)}) and failing_since is not null`.execute(trx);
    }
    return new Set(rows.map((r) => r.id));
  });
}

/**
 * The finished jobs whose records may have a held job waiting: only a job marked `ordered` holds its record's place
 * (migration 011), so the others' completions skip promoteHeld's statement (on PostgreSQL a round trip a batch).
 */
const orderedOf = (rows: ReadonlyArray<{ id: string; ordered: number }>): string[] => rows.filter((r) => Number(r.ordered) === 1).map((r) => r.id);

const timing = (done: readonly Completion[], phase: keyof AttemptTimings): Array<number | null> =>
  done.map((d) => d.attempt.trace?.timings[phase] ?? null);
