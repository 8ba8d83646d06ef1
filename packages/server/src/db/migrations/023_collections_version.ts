import { SqliteAdapter, sql, type Kysely } from 'kysely';

/**
 * A number that moves with every committed change to `collections` (a collection created, its fields changed, or
 * deleted), made by any process, so that a process can keep what it built from every collection (the admin OpenAPI
 * document, GET /admin/v1/api/schema: http/collections-answers.ts) and learn with one read of one row whether it is
 * still current. With 2,000 collections of 50 fields, building them again for each request held the event loop
 * 0.3–1.95 s.
 *
 * `collections_version` holds one row. Every insert, update and delete of a collection moves it up by a random step
 * (1 to a million), as `targets_version` (migration 022): a database that lost its last changes (a failover to a
 * replica behind) and changes again does not come back to a number a process kept for other collections. The
 * triggers are the database's, so a change made by an older process, or by hand in SQL, moves it too.
 *
 * PostgreSQL: deferred to the commit, so a transaction changing a collection takes the version row's lock last, after
 * the collection's own (a forced delete, a field made required), and two such transactions never wait on each other
 * in a circle. SQLite's write transactions run one at a time: plain triggers, one per kind of change.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table collections_version (id integer primary key check (id = 1), version bigint not null)`.execute(db);
  await sql`insert into collections_version (id, version) values (1, 0)`.execute(db);
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    for (const change of ['insert', 'update', 'delete']) {
      await sql`create trigger ${sql.raw(`collections_${change}`)} after ${sql.raw(change)} on collections begin
        update collections_version set version = version + 1 + abs(random() % 1000000) where id = 1;
      end`.execute(db);
    }
    return;
  }
  await sql`create function svc_collections_changed() returns trigger language plpgsql as $$
    begin
      update collections_version set version = version + 1 + floor(random() * 1000000)::bigint where id = 1;
      return null;
    end $$`.execute(db);
  await sql`create constraint trigger collections_changed after insert or update or delete on collections
    deferrable initially deferred for each row execute function svc_collections_changed()`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
