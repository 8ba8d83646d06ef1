import { EventEmitter } from 'node:events';
import { closeSync, constants, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type SqliteDatabase } from 'kysely';
import { GroupCommit } from '../group-commit.js';
import type { Tables } from '../tables.js';
import type { Database, DialectCapabilities, JobSignal } from './types.js';

const caps: DialectCapabilities = {
  name: 'sqlite',
  skipLocked: false,
  dataModifyingWith: false,
  sharedByProcesses: false,
  nowMs: () => sql<number>`CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)`,
  currentSchema: async () => undefined,
  isUniqueViolation: (e) => typeof e === 'object' && e !== null && String((e as { code?: unknown }).code).startsWith('SQLITE_CONSTRAINT_'),
  // One writer at a time, and writes commit in the order they run: a counter read and bumped inside the write is a
  // commit order on its own. The last position is one step back along the feed index (tx is always 0 here).
  eventPosition: () => ({
    tx: sql<number>`0`,
    position: sql<number>`coalesce((select position from events where position is not null order by tx desc, position desc limit 1), 0) + 1`,
  }),
  feedHorizon: () => sql<number>`1`,
  withFeedNotice: (insert) => insert,
};

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew; preparing costs more than running most of svc's statements. The SQL text of a
 * query is stable (values are parameters), so prepared statements are kept by text, least recently used dropped.
 */
function withStatementCache(native: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => native.close(),
    prepare(text: string) {
      let stmt = cache.get(text);
      if (stmt) {
        cache.delete(text);
      } else {
        stmt = native.prepare(text);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(text, stmt);
      return stmt;
    },
  };
}

/**
 * The database holds every record and (sealed) secret: a folder svc creates is 0700 and a database file it creates is
 * 0600, whatever the umask. SQLite gives the -wal and -shm files the mode of the database file, so they follow.
 * Existing files and folders keep the mode their owner chose.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600));
}

export function openSqlite(path: string, synchronous: 'FULL' | 'NORMAL'): Database {
  if (path !== ':memory:') createPrivately(path);
  const native = new SQLite(path);
  // WAL lets readers proceed during a write; busy_timeout covers a second process (svc migrate) briefly.
  native.pragma('journal_mode = WAL');
  native.pragma(`synchronous = ${synchronous}`);
  native.pragma('busy_timeout = 5000');
  native.pragma('foreign_keys = ON');
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: withStatementCache(native) }) });
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  const grouped = new GroupCommit(db);
  return {
    db,
    caps,
    write: (work) => grouped.run(work),
    signal: emitterSignal(emitter, 'jobs'),
    events: emitterSignal(emitter, 'events'),
    ping: async () => {
      native.prepare('select 1').get();
    },
    close: async () => {
      await db.destroy();
    },
  };
}

/** In-process wake-ups: one process serves a SQLite database. */
function emitterSignal(emitter: EventEmitter, name: string): JobSignal {
  return {
    notify: async () => {
      emitter.emit(name);
    },
    subscribe: async (listener) => {
      emitter.on(name, listener);
      return async () => {
        emitter.off(name, listener);
      };
    },
  };
}
