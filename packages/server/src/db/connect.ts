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
  /** SVC_REQUEST_TIMEOUT_MS: a request that meets a database outage answers 503 within it (connectTimeoutMs). */
  requestTimeoutMs?: number;
}

/**
 * How long opening a PostgreSQL connection, waiting for a free one, or a statement on a server that answers nothing
 * may take before the request gives up with 503: a quarter of the request timeout, at most 5 s. A quarter, because a
 * stalled statement is cut only after that long plus a probe as long (postgres-outages.ts), and the answer must
 * still be written within the request timeout.
 */
export const connectTimeoutMs = (requestTimeoutMs = 30_000): number => Math.max(100, Math.min(5_000, Math.floor(requestTimeoutMs / 4)));

/** `sqlite:<path>` (relative paths from the working directory) or `postgres://…`. */
export function sqlitePath(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null;
  const path = url.slice('sqlite:'.length);
  return path === ':memory:' ? path : resolve(path);
}

export function connect(url: string, options: ConnectOptions): Database {
  const path = sqlitePath(url);
  if (path !== null) return openSqlite(path, options.sqliteSynchronous, { count: options.sqliteReaders ?? 0, timeoutMs: options.queryTimeoutMs ?? 10_000 });
  return openPostgres(url, options.poolSize, options.queryTimeoutMs, connectTimeoutMs(options.requestTimeoutMs));
}
