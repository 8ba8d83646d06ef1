import { sql, type Kysely } from 'kysely';

/**
 * Running for months (SPEC §10).
 *
 * 1. Targets say why they are disabled (`disabled_reason`: manual, failing, gone) and since when. A target already
 *    disabled was disabled by an admin. The auto-disable rule keeps its two counters on the target row, so judging
 *    an attempt is O(1): `failing_since` (the first failed attempt after the last success, null while healthy) and
 *    `failed_attempts` (failed attempts since then).
 * 2. Retention's indexes, partial so they hold only what they serve: delivered and dead jobs by the time they
 *    reached that state (`updated_at`, which no later transition touches), and the jobs that still need their event
 *    (unfinished or dead) by event, for the events' "does anyone still need it" probe. Delivered jobs, the bulk of
 *    the table, are in the first only. Events are pruned by their primary key (ids sort by creation time).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhooks add column disabled_reason text`.execute(db);
  await sql`alter table webhooks add column disabled_at bigint`.execute(db);
  await sql`alter table webhooks add column failing_since bigint`.execute(db);
  await sql`alter table webhooks add column failed_attempts integer not null default 0`.execute(db);
  await sql`update webhooks set disabled_reason = 'manual', disabled_at = updated_at where enabled = 0 and deleted_at is null`.execute(db);

  await sql`create index delivery_jobs_delivered_at on delivery_jobs (updated_at) where state = 'delivered'`.execute(db);
  await sql`create index delivery_jobs_dead_at on delivery_jobs (updated_at) where state = 'dead'`.execute(db);
  await sql`create index delivery_jobs_event_needed on delivery_jobs (event_id) where state <> 'delivered'`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
