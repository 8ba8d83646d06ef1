import { resolve } from 'node:path';
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
  /** SVC_REQUEST_TIMEOUT_MS: a request that meets a database outage answers 503 within it (outageTimeouts). */
  requestTimeoutMs?: number;
}

/**
 * How long PostgreSQL may keep a request waiting before it answers 503 (SVC_REQUEST_TIMEOUT_MS, T): opening a
 * connection or waiting for a free one, T/2 (at most 10 s); a statement on a server that answers nothing, T/4 (at
 * most 5 s) before the server is probed, and as long for the probe (postgres-outages.ts). Both end well within T.
 */
export function outageTimeouts(requestTimeoutMs = 30_000): { connectMs: number; stallMs: number } {
  return { connectMs: Math.max(100, Math.min(10_000, Math.floor(requestTimeoutMs / 2))), stallMs: Math.max(50, Math.min(5_000, Math.floor(requestTimeoutMs / 4))) };
}

/** `sqlite:<path>` (relative paths from the working directory) or `postgres://…`. */
export function sqlitePath(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null;
  const path = url.slice('sqlite:'.length);
  return path === ':memory:' ? path : resolve(path);
}

/**
 * Opens the database a URL names. The PostgreSQL dialect (pg, its pools, its outage watch) is loaded only for a
 * PostgreSQL URL: loading pg cost a SQLite process ~50 ms of its start, most of it Node's own fetch, which pg reaches
 * for at load to ask whether it runs on Cloudflare (a CPU profile of `svc worker`, bench/README "Start-up").
 */
export async function connect(url: string, options: ConnectOptions): Promise<Database> {
  const path = sqlitePath(url);
  if (path !== null) return openSqlite(path, options.sqliteSynchronous, { count: options.sqliteReaders ?? 0, timeoutMs: options.queryTimeoutMs ?? 10_000 });
  const { openPostgres } = await import('./dialects/postgres.js');
  return openPostgres(url, options.poolSize, options.queryTimeoutMs, outageTimeouts(options.requestTimeoutMs));
}
