import type SQLite from 'better-sqlite3';

/**
 * Prepared statements kept by SQL text, least recently used dropped: preparing costs more than running most of svc's
 * statements, and their texts are stable (values are parameters). One cache per connection.
 */
export function statementCache(native: SQLite.Database, size: number): (text: string) => SQLite.Statement {
  const cache = new Map<string, SQLite.Statement>();
  return (text) => {
    let stmt = cache.get(text);
    if (stmt) {
      cache.delete(text);
    } else {
      stmt = native.prepare(text);
      if (cache.size >= size) cache.delete(cache.keys().next().value!);
    }
    cache.set(text, stmt);
    return stmt;
  };
}
