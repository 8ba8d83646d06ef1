import { sql, type Kysely } from 'kysely';

/**
 * What the admin UI asks of the admin API (SPEC §17); webhooks/queue/jobs-store.ts says how each filter of the
 * deliveries list is served.
 *
 * 1. `delivery_jobs_record (record_id, id)`: a record's jobs, newest first. Without it the list walked the primary key
 *    backwards through every job: over 200,000 jobs, 124 ms on SQLite and 97 ms on PostgreSQL (a parallel sequential
 *    scan) for a record's four jobs, against 0.3 ms and 0.9 ms with it (measured on the data of
 *    test/integration/admin-api-17-plans.test.ts, which checks the plans). On PostgreSQL the index is built inside the
 *    migration's transaction, holding job inserts back meanwhile: 0.9–1.3 s for 200,000 jobs on this machine.
 * 2. `delivery_jobs_other_topics (id) where topic is not record.*`: the jobs of `webhook.test` and the operational
 *    topics, few among many record jobs, newest first. A topic with no job walked all 200,000 (118–222 ms); partial,
 *    so record jobs, nearly every insert, never touch it.
 * 3. `admins.last_login_at`: when the admin last logged in (null: never), for the admins list.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index delivery_jobs_record on delivery_jobs (record_id, id)`.execute(db);
  await sql`create index delivery_jobs_other_topics on delivery_jobs (id) where not (topic like 'record.%')`.execute(db);
  await sql`alter table admins add column last_login_at bigint`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
