import type SQLite from 'better-sqlite3';
import { LruCache } from '../../lib/lru.js';

/**
 * Starts the text of a statement whose rows arrive as arrays of their values (DialectCapabilities.arrayRows):
 * better-sqlite3's raw mode, on the main connection and on a reader thread alike.
 */
export const ARRAY_ROWS = '/* rows as arrays */ ';

/**
 * Prepared statements kept by SQL text, least recently used dropped: preparing costs more than running most of svc's
 * statements, and their texts are stable (values are parameters). One cache per connection.
 */
export function statementCache(native: SQLite.Database, size: number): (text: string) => SQLite.Statement {
  const cache = new LruCache<string, SQLite.Statement>(size);
  return (text) =>
    cache.getOrSet(text, () => {
      const stmt = native.prepare(text);
      // The text is the key, so a statement prepared for arrays is only ever run for arrays.
      if (stmt.reader && text.startsWith(ARRAY_ROWS)) stmt.raw(true);
      return stmt;
    });
}
