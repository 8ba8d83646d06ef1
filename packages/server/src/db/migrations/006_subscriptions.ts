import { sql, SqliteAdapter, type Kysely } from 'kysely';

/**
 * What a target receives (SPEC §9), and per-record ordering.
 *
 * - `webhooks` gains `collections` and `changed_fields` (JSON arrays, null for "all"), `filter` (an expression, null
 *   for none) and `ordering` (`none` or `record`).
 * - A job of an ordered target that has an older unfinished job for the same record waits in a fifth state, `held`,
 *   outside every index a claim reads, until that job is delivered or dead (docs/delivery-states.md). The state CHECK
 *   of migration 004 admits it: PostgreSQL swaps the constraint; SQLite, which cannot, rebuilds `delivery_jobs` and
 *   `delivery_attempts` as 004 did.
 * - Two partial indexes: held jobs by (target, record, id), for the next one to release; and unfinished jobs by
 *   (target, record), for a write to find whether its job must wait.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhooks add column collections text`.execute(db);
  await sql`alter table webhooks add column filter text`.execute(db);
  await sql`alter table webhooks add column changed_fields text`.execute(db);
  await sql`alter table webhooks add column ordering text not null default 'none'`.execute(db);
  if (db.getExecutor().adapter instanceof SqliteAdapter) await rebuildJobsOnSqlite(db);
  else {
    await sql`alter table delivery_jobs drop constraint delivery_jobs_state_check`.execute(db);
    await sql`alter table delivery_jobs add constraint delivery_jobs_state_check ${STATE_CHECK}`.execute(db);
  }
  await sql`create index delivery_jobs_held on delivery_jobs (webhook_id, record_id, id) where state = 'held'`.execute(db);
  await sql`create index delivery_jobs_open_record on delivery_jobs (webhook_id, record_id) where state in ('pending', 'delivering')`.execute(db);
}

const STATE_CHECK = sql`check (state in ('pending', 'delivering', 'delivered', 'dead', 'held'))`;

async function rebuildJobsOnSqlite(db: Kysely<unknown>): Promise<void> {
  // As in 004: foreign keys off first (a no-op inside a transaction), so dropping the old jobs table does not
  // cascade into the attempts.
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await sql`begin immediate`.execute(db);
    try {
      await sql`
        create table delivery_jobs_new (
          id text primary key, webhook_id text not null references webhooks (id), event_id text not null,
          topic text not null, collection text not null, record_id text not null,
          state text not null ${STATE_CHECK}, attempt_count integer not null, round_start integer not null,
          next_attempt_at bigint not null, lease_id text, lease_expires_at bigint,
          last_error_code text, last_error_message text, created_at bigint not null, updated_at bigint not null)`.execute(db);
      const jobColumns = sql.raw(
        'id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, lease_id, lease_expires_at, last_error_code, last_error_message, created_at, updated_at',
      );
      await sql`insert into delivery_jobs_new (${jobColumns}) select ${jobColumns} from delivery_jobs`.execute(db);
      await sql`
        create table delivery_attempts_new (
          job_id text not null references delivery_jobs (id) on delete cascade, number integer not null,
          started_at bigint not null, duration_ms integer not null, status_code integer, error_code text,
          error_message text, response_snippet text not null,
          constraint delivery_attempts_pk primary key (job_id, number))`.execute(db);
      await sql`insert into delivery_attempts_new select job_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet from delivery_attempts`.execute(db);
      await sql`drop table delivery_attempts`.execute(db);
      await sql`drop table delivery_jobs`.execute(db);
      await sql`alter table delivery_jobs_new rename to delivery_jobs`.execute(db);
      await sql`alter table delivery_attempts_new rename to delivery_attempts`.execute(db);
      // The indexes went with the old table (see 001, 003 and 004 for why each exists).
      await sql`create index delivery_jobs_webhook on delivery_jobs (webhook_id, id)`.execute(db);
      await sql`create index delivery_jobs_pending on delivery_jobs (webhook_id, next_attempt_at) where state = 'pending'`.execute(db);
      await sql`create index delivery_jobs_pending_due on delivery_jobs (next_attempt_at) where state = 'pending'`.execute(db);
      await sql`create index delivery_jobs_leases on delivery_jobs (lease_expires_at) where state = 'delivering'`.execute(db);
      await sql`create index delivery_jobs_dead on delivery_jobs (id) where state = 'dead'`.execute(db);
      const { rows } = await sql`pragma foreign_key_check`.execute(db);
      if (rows.length > 0) throw new Error(`migration 006: ${rows.length} rows break a foreign key: ${JSON.stringify(rows.slice(0, 3))}`);
      await sql`commit`.execute(db);
    } catch (err) {
      await sql`rollback`.execute(db).catch(() => {});
      throw err;
    }
  } finally {
    await sql`pragma foreign_keys = on`.execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
