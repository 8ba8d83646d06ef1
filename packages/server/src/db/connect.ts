import { resolve } from 'node:path';
import { openPostgres } from './dialects/postgres.js';
import { openSqlite } from './dialects/sqlite.js';
import type { Database } from './dialects/types.js';

export type { Database } from './dialects/types.js';

export interface ConnectOptions {
  sqliteSynchronous: 'FULL' | 'NORMAL';
  poolSize?: number;
  /** PostgreSQL's statement_timeout for records queries (Database.queries). */
  queryTimeoutMs?: number;
}

/** `sqlite:<path>` (relative paths from the working directory) or `postgres://…`. */
export function sqlitePath(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null;
  const path = url.slice('sqlite:'.length);
  return path === ':memory:' ? path : resolve(path);
}

export function connect(url: string, options: ConnectOptions): Database {
  const path = sqlitePath(url);
  if (path !== null) return openSqlite(path, options.sqliteSynchronous);
  return openPostgres(url, options.poolSize, options.queryTimeoutMs);
}
