import { SqliteAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL: a number that changes whenever a committed change to `webhooks` could change what a record write does
 * with its targets, so a process can keep the targets it read and check they are still current inside the write's
 * own insert instead of reading them again each time (webhooks/targets-cache.ts; a round trip of every record write).
 *
 * `targets_version` holds one row. A target inserted or deleted, or updated in anything but the columns delivery keeps
 * as it goes (a rate-limited target's bucket `rate_window`/`rate_used`, auto-disable's `failing_since`/
 * `failed_attempts`), moves it up by a random step (1 to a million): a database that lost its last changes (a
 * failover to a replica behind) and changes again does not come back to a number a process kept for other targets.
 * A column added to `webhooks` later counts as a change without being named.
 *
 * The triggers are deferred to the commit: a transaction that changes several targets (auto-disable disables each
 * failing target in turn) takes the version row's lock last, after every target row it locks, so two such
 * transactions never wait on each other in a circle. The change and the new number are seen together, as one commit.
 *
 * `svc_targets_at(v)` is how a write checks the targets it planned with: it answers `v` when that is the version on the
 * calling statement's snapshot (the function is stable: it reads on its caller's snapshot), and raises SQLSTATE SV001
 * otherwise, which fails the statement and everything the write did with it.
 *
 * SQLite is left as it is: a process there reads its targets in-process, no round trip to save.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`create table targets_version (id integer primary key check (id = 1), version bigint not null)`.execute(db);
  await sql`insert into targets_version (id, version) values (1, 0)`.execute(db);
  await sql`create function svc_targets_changed() returns trigger language plpgsql as $$
    begin
      update targets_version set version = version + 1 + floor(random() * 1000000)::bigint where id = 1;
      return null;
    end $$`.execute(db);
  await sql`create function svc_targets_at(expected bigint) returns bigint language plpgsql stable as $$
    declare
      current bigint;
    begin
      select version into current from targets_version where id = 1;
      if current is distinct from expected then
        raise exception 'svc: the targets changed (version % planned, % now)', expected, current using errcode = 'SV001';
      end if;
      return current;
    end $$`.execute(db);
  await sql`create constraint trigger webhooks_added_or_removed after insert or delete on webhooks
    deferrable initially deferred for each row execute function svc_targets_changed()`.execute(db);
  await sql`create constraint trigger webhooks_changed after update on webhooks
    deferrable initially deferred for each row
    when ((to_jsonb(old) - ${sql.raw(DELIVERY_KEPT)}) is distinct from (to_jsonb(new) - ${sql.raw(DELIVERY_KEPT)}))
    execute function svc_targets_changed()`.execute(db);
}

/** The columns delivery updates as it goes, which no record write reads. */
const DELIVERY_KEPT = `array['rate_window', 'rate_used', 'failing_since', 'failed_attempts']`;

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
