import { sql } from 'kysely';
import type { DeliveredJob, JobsDriver } from '../types.js';

/**
 * The delivery queue's PostgreSQL statements (types.ts JobsDriver): batches travel as typed arrays, and a transition
 * with a consequence elsewhere is one data-modifying WITH, atomic on its own: one round trip and one commit.
 */

const column = <K extends keyof DeliveredJob>(done: readonly DeliveredJob[], key: K): Array<DeliveredJob[K]> => done.map((d) => d[key]);

export const postgresJobs: JobsDriver = {
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
