import { resolve } from 'node:path';
import { openPostgres } from './dialects/postgres.js';
import { openSqlite } from './dialects/sqlite.js';
import type { Database } from './dialects/types.js';

export type { Database } from './dialects/types.js';

export interface ConnectOptions {
  sqliteSynchronous: 'FULL' | 'NORMAL';
  poolSize?: number;
  /** How long a records query (Database.queries) may run: PostgreSQL's statement_timeout, SQLite's reader deadline. */
  queryTimeoutMs?: number;
  /** SQLite: reader threads for Database.queries (0 or unset: the main connection, no timeout). */
  sqliteReaders?: number;
}

/** `sqlite:<path>` (relative paths from the working directory) or `postgres://…`. */
export function sqlitePath(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null;
  const path = url.slice('sqlite:'.length);
  return path === ':memory:' ? path : resolve(path);
}

export function connect(url: string, options: ConnectOptions): Database {
  const path = sqlitePath(url);
  if (path !== null) return openSqlite(path, options.sqliteSynchronous, { count: options.sqliteReaders ?? 0, timeoutMs: options.queryTimeoutMs ?? 10_000 });
  return openPostgres(url, options.poolSize, options.queryTimeoutMs);
}
