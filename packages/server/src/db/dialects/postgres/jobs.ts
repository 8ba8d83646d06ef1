import { sql, type RawBuilder } from 'kysely';
import type { ClaimRow, ClaimStatementOptions, DeliveredJob, JobsDriver } from '../types.js';

/**
 * The delivery queue's PostgreSQL statements (types.ts JobsDriver): batches travel as typed arrays, and a transition
 * with a consequence elsewhere is one data-modifying WITH, atomic on its own: one round trip and one commit.
 */

const column = <K extends keyof DeliveredJob>(done: readonly DeliveredJob[], key: K): Array<DeliveredJob[K]> => done.map((d) => d[key]);

export const postgresJobs: JobsDriver = {
  async claim(db, opts) {
    // Each row's values in the RETURNING list's order (its column names are all distinct).
    const { rows } = await claimStatement(opts).execute(db);
    return rows.map((r) => Object.values(r) as unknown as ClaimRow);
  },
  async delivered(db, now, done, then) {
    const { rows } = await sql<{ id: string; ordered: number }>`
      with done as (
        update delivery_jobs j
           set state = 'delivered', attempt_count = j.attempt_count + 1, lease_id = null, lease_expires_at = null,
               last_error_code = null, last_error_message = null, updated_at = ${now},
               success_started_at = a.started_at, success_duration_ms = a.duration_ms, success_status_code = a.status_code,
               success_snippet = a.snippet, success_remote_address = a.remote_address, success_dns_ms = a.dns_ms,
               success_connect_ms = a.connect_ms, success_tls_ms = a.tls_ms, success_first_byte_ms = a.first_byte_ms
          from unnest(${column(done, 'id')}::text[], ${column(done, 'lease')}::text[], ${column(done, 'startedAt')}::bigint[],
                      ${column(done, 'durationMs')}::int[], ${column(done, 'statusCode')}::int[], ${column(done, 'snippet')}::text[],
                      ${column(done, 'remoteAddress')}::text[], ${column(done, 'dnsMs')}::int[], ${column(done, 'connectMs')}::int[],
                      ${column(done, 'tlsMs')}::int[], ${column(done, 'firstByteMs')}::int[])
               as a(id, lease, started_at, duration_ms, status_code, snippet, remote_address, dns_ms, connect_ms, tls_ms, first_byte_ms)
         where j.id = a.id and j.state = 'delivering' and j.lease_id = a.lease
        returning j.id, j.webhook_id, j.ordered),
      -- a success ends its target's failing streak (auto-disable's counters, migration 007); no row lock when none
      healthy as (
        update webhooks w set failing_since = null, failed_attempts = 0
         where w.id in (select webhook_id from done) and w.failing_since is not null)
      select id, ordered from done`.execute(db);
    // A statement of its own, after the update: its snapshot then sees a held job a writer committed while this
    // update waited for that writer's lock on the finished job (enqueue.ts newestUnfinished). Lost by a crash just
    // here, the release is made by the worker's sweep.
    await then(db, rows);
    return rows;
  },
};

/**
 * The claim, one statement (exported so its plan can be checked). For each target a range probe on the partial index
 * of pending jobs by (webhook_id, next_attempt_at), so its cost does not grow with the backlog: one limited subquery
 * per target, joined by UNION ALL (each with its own limit as a value, so PostgreSQL plans the rows it will really
 * get; an unnest()ed list of targets with LATERAL left it guessing, and it chose a hash join over the whole table).
 * The update then finds each chosen job by its primary key (`id = any(array(…))`: PostgreSQL hashed a sequential scan
 * of the table past ~100 ids in an IN list; W4: 2 of a claim's 6 ms on 20 000 jobs). The outer statement does not
 * repeat `state = 'pending'`: the rows the subqueries return are locked (`for update skip locked`) with the WHERE
 * re-checked on their newest version, so they are still pending when the update reaches them.
 *
 * The byte budget is applied as the jobs are read: each chosen job's payload size is read without the payload
 * (`octet_length`: the TOAST pointer; the events' primary key, one probe a job, never a join: PostgreSQL hashed the
 * whole events table for one), a running sum in due order (a window over at most `limit` rows) keeps the jobs that
 * fit and always the first, and only those are updated and have their payload read in RETURNING. The row lock stays on
 * the innermost query (PostgreSQL refuses FOR UPDATE beside a window function): the jobs it locked beyond the budget
 * stay pending, unlocked at the statement's commit.
 */
export function claimStatement(opts: ClaimStatementOptions): RawBuilder<Record<string, unknown>> {
  const chosen = opts.targets.map(
    (t) => sql`select id from (
                 select id, row_number() over budget as n, sum(bytes) over budget as upto from (
                   select due.id, due.next_attempt_at,
                          coalesce((select octet_length(e.payload) from events e where e.id = due.event_id), 0) + ${sql.lit(opts.overheadBytes)} as bytes from (
                     select id, event_id, next_attempt_at from delivery_jobs
                      where webhook_id = ${t.webhookId} and state = 'pending' and next_attempt_at <= ${opts.now}
                        -- the database, not a worker's view of it, decides that a disabled or deleted target's jobs wait,
                        -- and that a limited one's are claimed only through its bucket
                        and exists (select 1 from webhooks w where w.id = ${t.webhookId} and w.enabled = 1 and w.deleted_at is null${t.limited ? sql`` : sql` and w.rate_per_second is null`})
                      order by next_attempt_at
                      limit ${t.limit}
                      for update skip locked) as due) as sized
                 window budget as (order by next_attempt_at, id)) as budgeted
               where n = 1 or upto <= ${t.maxBytes}`,
  );
  return sql`
    update delivery_jobs
       set state = 'delivering', lease_id = ${opts.lease}, lease_expires_at = ${opts.now + opts.leaseMs}, updated_at = ${opts.now}
     where id = any(array(${sql.join(chosen, sql` union all `)}))
    returning id, webhook_id, topic, collection, record_id, attempt_count, round_start,
              (select e.payload from events e where e.id = delivery_jobs.event_id) as payload,
              ${opts.withTrace ? sql`(select e.traceparent || ' ' || coalesce(e.tracestate, '') from events e where e.id = delivery_jobs.event_id)` : sql`null`} as trace`;
}
