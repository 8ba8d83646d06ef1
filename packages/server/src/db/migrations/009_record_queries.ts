import { SqliteAdapter, sql, type Kysely } from 'kysely';
import { POSTGRES_INSTANT_FUNCTION } from '../../lib/query-functions.js';

/**
 * The filter language compares datetimes as instants through svc_instant(text), immutable so indexes may use it.
 * SQLite registers the same function in JavaScript on every connection (dialects/sqlite.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql.raw(POSTGRES_INSTANT_FUNCTION).execute(db);
}
