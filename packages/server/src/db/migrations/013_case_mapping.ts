import { SqliteAdapter, sql, type Kysely } from 'kysely';
import { postgresLowerFunctions } from '../../lib/case-mapping.js';

/**
 * `~`/`!~` fold case by svc's own table (lib/case-mapping.ts, SPEC §12 "One case mapping") instead of PostgreSQL's
 * lower() under the C.utf8 collation, which follows the server's glibc (55 code points apart from Node's table on
 * Debian 12). SQLite registers the same mapping in JavaScript on every connection (dialects/sqlite.ts). No index is
 * built on either function. A later table (a newer Unicode version) needs a new migration running these again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  for (const statement of postgresLowerFunctions()) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
