import { sql, SqliteAdapter, type Kysely } from 'kysely';

/**
 * The event feed (SPEC §7): every event gets a feed position of two columns, `tx` and `position`, ordered together
 * (docs/event-feed.md). Events written before this migration have none and are not in the feed: it begins with the
 * events committed after the upgrade. The partial index serves the feed's range reads and, on SQLite, the counter.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events add column tx bigint`.execute(db);
  await sql`alter table events add column position bigint`.execute(db);
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) await sql`create sequence events_position_seq`.execute(db);
  // The feed's range reads, its head, and SQLite's counter (the last position) all walk this one index.
  await sql`create unique index events_feed on events (tx, position) where position is not null`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
