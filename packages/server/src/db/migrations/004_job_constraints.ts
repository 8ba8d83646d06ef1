import { sql, SqliteAdapter, type Kysely } from 'kysely';

/**
 * The schema says what the delivery engine assumes.
 *
 * - Targets are soft-deleted: a deleted target keeps its row (`deleted_at`), so every job's `webhook_id` keeps
 *   pointing at something, and loses its secrets (`secret_sealed` may now be null). Jobs of targets deleted before
 *   this migration point at rows that are gone: each such id gets a tombstone, a deleted target with no secret.
 * - `delivery_jobs.webhook_id` is a foreign key to `webhooks`, and `state` is one of the four states (CHECK).
 *
 * PostgreSQL alters the tables in place, inside the migrator's transaction. SQLite cannot add a constraint to a
 * table, so it rebuilds `webhooks`, `delivery_jobs` and `delivery_attempts` (SQLite's documented twelve steps) in a
 * transaction of its own, with foreign keys off: with them on, dropping the old jobs table would first delete every
 * attempt through their ON DELETE CASCADE.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) await rebuildOnSqlite(db);
  else await alterOnPostgres(db);
}

const TOMBSTONES = sql`
  insert into webhooks (id, name, url, topics, enabled, secret_sealed, previous_secret_sealed, previous_secret_expires_at, created_at, updated_at, deleted_at)
  select webhook_id, '(deleted)', '', '[]', 0, null, null, null, min(created_at), max(updated_at), max(updated_at)
    from delivery_jobs
   where webhook_id not in (select id from webhooks)
   group by webhook_id`;

const STATE_CHECK = sql`check (state in ('pending', 'delivering', 'delivered', 'dead'))`;

async function alterOnPostgres(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhooks add column deleted_at bigint`.execute(db);
  await sql`alter table webhooks alter column secret_sealed drop not null`.execute(db);
  await TOMBSTONES.execute(db);
  await sql`alter table delivery_jobs add constraint delivery_jobs_webhook_fk foreign key (webhook_id) references webhooks (id)`.execute(db);
  await sql`alter table delivery_jobs add constraint delivery_jobs_state_check ${STATE_CHECK}`.execute(db);
}

async function rebuildOnSqlite(db: Kysely<unknown>): Promise<void> {
  // A no-op inside a transaction: it has to come first. The migrator runs SQLite migrations on one connection.
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await sql`begin immediate`.execute(db);
    try {
      await sql`
        create table webhooks_new (
          id text primary key, name text not null, url text not null, topics text not null, enabled integer not null,
          secret_sealed text, previous_secret_sealed text, previous_secret_expires_at bigint,
          created_at bigint not null, updated_at bigint not null, deleted_at bigint)`.execute(db);
      await sql`insert into webhooks_new (id, name, url, topics, enabled, secret_sealed, previous_secret_sealed, previous_secret_expires_at, created_at, updated_at)
                select id, name, url, topics, enabled, secret_sealed, previous_secret_sealed, previous_secret_expires_at, created_at, updated_at from webhooks`.execute(db);
      await sql`drop table webhooks`.execute(db);
      await sql`alter table webhooks_new rename to webhooks`.execute(db);
      await TOMBSTONES.execute(db);

      // Created under the final names they reference, so the renames below leave nothing to rewrite.
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

      // The indexes went with the old table (see 001 and 003 for why each exists).
      await sql`create index delivery_jobs_webhook on delivery_jobs (webhook_id, id)`.execute(db);
      await sql`create index delivery_jobs_pending on delivery_jobs (webhook_id, next_attempt_at) where state = 'pending'`.execute(db);
      await sql`create index delivery_jobs_pending_due on delivery_jobs (next_attempt_at) where state = 'pending'`.execute(db);
      await sql`create index delivery_jobs_leases on delivery_jobs (lease_expires_at) where state = 'delivering'`.execute(db);
      await sql`create index delivery_jobs_dead on delivery_jobs (id) where state = 'dead'`.execute(db);

      const { rows } = await sql`pragma foreign_key_check`.execute(db);
      if (rows.length > 0) throw new Error(`migration 004: ${rows.length} rows break a foreign key: ${JSON.stringify(rows.slice(0, 3))}`);
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
