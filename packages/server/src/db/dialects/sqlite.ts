import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type { Tables } from '../tables.js';
import type { Database, DialectCapabilities } from './types.js';

const caps: DialectCapabilities = {
  name: 'sqlite',
  skipLocked: false,
  sharedByProcesses: false,
  nowMs: () => sql<number>`CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)`,
  currentSchema: async () => undefined,
  isUniqueViolation: (e) => typeof e === 'object' && e !== null && String((e as { code?: unknown }).code).startsWith('SQLITE_CONSTRAINT_'),
};

export function openSqlite(path: string, synchronous: 'FULL' | 'NORMAL'): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const native = new SQLite(path);
  // WAL lets readers proceed during a write; busy_timeout covers a second process (svc migrate) briefly.
  native.pragma('journal_mode = WAL');
  native.pragma(`synchronous = ${synchronous}`);
  native.pragma('busy_timeout = 5000');
  native.pragma('foreign_keys = ON');
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: native }) });
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    db,
    caps,
    signal: {
      notify: async () => {
        emitter.emit('jobs');
      },
      subscribe: async (listener) => {
        emitter.on('jobs', listener);
        return async () => {
          emitter.off('jobs', listener);
        };
      },
    },
    ping: async () => {
      native.prepare('select 1').get();
    },
    close: async () => {
      await db.destroy();
    },
  };
}
