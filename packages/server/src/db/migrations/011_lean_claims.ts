import { sql, type Kysely } from 'kysely';

/**
 * Claims and completions touch fewer indexes. An UPDATE rewrites a partial index's entry whenever a column its
 * predicate names changes, even when the row stays in it: a claim (pending → delivering) deleted and re-inserted
 * each job's entries in `delivery_jobs_event_needed` (state <> 'delivered') and `delivery_jobs_open_record` (state in
 * pending, delivering), for nothing (W4, SQLite, ten targets: about 4 % of the worker's CPU each).
 *
 * 1. `delivery_jobs_event_needed` goes: retention's "does an unfinished or dead job still need this event" probe
 *    walks `delivery_jobs_event_target` (event, target) instead, one row per target of the event.
 * 2. `delivery_jobs_open_record` holds only jobs that take part in their record's ordering: a new column `ordered`
 *    (1 for a record event's job of a target that orders by record), set when the job is made, when a dead one is
 *    revived, and for a target's unfinished jobs when its ordering is switched on. Jobs of other targets, nearly
 *    all of them, never enter it, so their claims and completions only test its predicate. Existing unfinished and
 *    dead record jobs of ordered targets are marked here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index delivery_jobs_event_needed`.execute(db);
  await sql`alter table delivery_jobs add column ordered integer not null default 0`.execute(db);
  await sql`
    update delivery_jobs set ordered = 1
     where state in ('pending', 'delivering', 'held', 'dead')
       and topic in ('record.created', 'record.updated', 'record.deleted')
       and webhook_id in (select id from webhooks where ordering = 'record')`.execute(db);
  await sql`drop index delivery_jobs_open_record`.execute(db);
  await sql`create index delivery_jobs_open_record on delivery_jobs (webhook_id, record_id) where ordered = 1 and state in ('pending', 'delivering')`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
