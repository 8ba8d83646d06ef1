import { sql } from 'kysely';
import type { JobsDriver } from '../types.js';

/**
 * The delivery queue's SQLite statements (types.ts JobsDriver): batches travel as one JSON parameter read with
 * json_each, and a transition with a consequence elsewhere is its statements in one transaction (one writer at a
 * time: nothing else runs between them, and they share one commit).
 */

export const sqliteJobs: JobsDriver = {
  delivered(db, now, done, then) {
    const work = async (trx: typeof db) => {
      const attempts = done.map((d) => [d.id, d.lease, d.startedAt, d.durationMs, d.statusCode, d.snippet, d.remoteAddress, d.dnsMs, d.connectMs, d.tlsMs, d.firstByteMs]);
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
      await then(trx, rows);
      // A success ends its target's failing streak (auto-disable's counters, migration 007).
      const targets = [...new Set(rows.map((r) => r.webhook_id))];
      if (targets.length > 0) {
        await sql`update webhooks set failing_since = null, failed_attempts = 0 where id in (${sql.join(targets)}) and failing_since is not null`.execute(trx);
      }
      return rows.map((r) => ({ id: r.id, ordered: r.ordered }));
    };
    // Inside the caller's transaction, or in one of its own.
    return db.isTransaction ? work(db) : db.transaction().execute(work);
  },
};
