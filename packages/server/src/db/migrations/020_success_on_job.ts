import { sql, SqliteAdapter, type Kysely } from 'kysely';

/**
 * A successful attempt is recorded on its job row, in the completion's one statement, instead of a row of its own
 * (issue 29: the attempt insert was one of three row writes per delivered job). Failed attempts keep their rows.
 *
 * 1. `delivery_jobs` gets the delivering attempt's facts, null until a completion by this version writes them:
 *    `success_started_at`, `success_duration_ms`, `success_status_code`, `success_snippet`,
 *    `success_remote_address`, `success_dns_ms`, `success_connect_ms`, `success_tls_ms`, `success_first_byte_ms`.
 *    The success's number is the job's `attempt_count` (a delivered job is final: no transition changes it again).
 * 2. The attempt rows' table is renamed `delivery_attempts_rows` (its key, its index `delivery_attempts_webhook_time`,
 *    its foreign key and any storage parameters an operator set go with it), and `delivery_attempts` becomes a view:
 *    those rows, and one row for each job that holds a success. Every reader of `delivery_attempts` (the attempts
 *    API, `svc prune --dry-run`'s count, an operator's SQL) sees what it saw before, successes recorded either way.
 * 3. `INSTEAD OF` triggers make the view take the inserts and deletes older processes make (a success row written by
 *    the previous version's completion, a prune's delete), into and from `delivery_attempts_rows`.
 * 4. `delivery_jobs_success_time` (webhook_id, success_started_at, success_duration_ms), partial on a recorded
 *    success: target health reads a window of it beside `delivery_attempts_webhook_time`, entry for entry.
 *
 * A later migration that rebuilds `delivery_jobs` on SQLite (the twelve steps of 004 and 006) must drop the view and
 * its triggers first and create them again after: SQLite checks views when a table is renamed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  for (const [column, type] of SUCCESS_COLUMNS) await sql`alter table delivery_jobs add column ${sql.raw(column)} ${sql.raw(type)}`.execute(db);
  await sql`alter table delivery_attempts rename to delivery_attempts_rows`.execute(db);
  await sql`
    create view delivery_attempts as
      select job_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet,
             webhook_id, remote_address, dns_ms, connect_ms, tls_ms, first_byte_ms
        from delivery_attempts_rows
      union all
      select id, attempt_count, success_started_at, success_duration_ms, success_status_code, cast(null as text), cast(null as text), success_snippet,
             webhook_id, success_remote_address, success_dns_ms, success_connect_ms, success_tls_ms, success_first_byte_ms
        from delivery_jobs
       where success_started_at is not null`.execute(db);
  const values = sql.raw(ROW_COLUMNS.map((c) => `new.${c}`).join(', '));
  const columns = sql.raw(ROW_COLUMNS.join(', '));
  if (sqlite) {
    await sql`
      create trigger delivery_attempts_insert instead of insert on delivery_attempts
      begin insert into delivery_attempts_rows (${columns}) values (${values}); end`.execute(db);
    await sql`
      create trigger delivery_attempts_delete instead of delete on delivery_attempts
      begin delete from delivery_attempts_rows where job_id = old.job_id and number = old.number; end`.execute(db);
  } else {
    await sql`
      create function delivery_attempts_write() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into delivery_attempts_rows (${columns}) values (${values});
          return new;
        end if;
        delete from delivery_attempts_rows where job_id = old.job_id and number = old.number;
        return old;
      end $$`.execute(db);
    await sql`create trigger delivery_attempts_write instead of insert or delete on delivery_attempts for each row execute function delivery_attempts_write()`.execute(db);
  }
  await sql`
    create index delivery_jobs_success_time on delivery_jobs (webhook_id, success_started_at, success_duration_ms)
     where success_started_at is not null`.execute(db);
}

const SUCCESS_COLUMNS: ReadonlyArray<[string, string]> = [
  ['success_started_at', 'bigint'],
  ['success_duration_ms', 'integer'],
  ['success_status_code', 'integer'],
  ['success_snippet', 'text'],
  ['success_remote_address', 'text'],
  ['success_dns_ms', 'integer'],
  ['success_connect_ms', 'integer'],
  ['success_tls_ms', 'integer'],
  ['success_first_byte_ms', 'integer'],
];

const ROW_COLUMNS = [
  'job_id', 'number', 'started_at', 'duration_ms', 'status_code', 'error_code', 'error_message', 'response_snippet',
  'webhook_id', 'remote_address', 'dns_ms', 'connect_ms', 'tls_ms', 'first_byte_ms',
];

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
