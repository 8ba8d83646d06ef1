import { SqliteAdapter, sql, type Kysely } from 'kysely';

/**
 * SQLite: retention's walk over old events reads `created_at`, `tx` and `position` from an index instead of the row.
 * SQLite keeps a row's columns in order and spills a large row onto overflow pages: `tx` and `position` (added by
 * migration 005) come after `payload`, so reading them walks the whole payload. An event retention must keep (a dead
 * job still needs it) was read that way on every pass: 300 kept events of 2 MB cost 260–385 ms of the main thread a
 * pass, once a minute (SPEC §12: nothing holds the event loop). With this covering index: under 1 ms.
 * PostgreSQL keeps large values out of line (TOAST) and reads these columns without touching the payload: nothing
 * to do there, and no index to maintain on every write.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return;
  await sql`create index events_retention on events (id, created_at, tx, position)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
