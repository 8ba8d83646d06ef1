// What the SQLite read baselines share: svc's database file opened with svc's pragmas, and the bearer token's
// look-up (SHA-256 of the token, one indexed query).
import Database from 'better-sqlite3';

export function openDatabase(path) {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  return db;
}

export const tokenQuery = (db) => db.prepare('select id, scopes, collections from api_tokens where token_hash = ?');
