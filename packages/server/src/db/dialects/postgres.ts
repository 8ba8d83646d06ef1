import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Tables } from '../tables.js';
import type { Database, DialectCapabilities } from './types.js';

const CHANNEL = 'svc_jobs';

const caps: DialectCapabilities = {
  name: 'postgres',
  skipLocked: true,
  dataModifyingWith: true,
  sharedByProcesses: true,
  // clock_timestamp, not now(): now() is frozen at transaction start.
  // A scalar subquery is evaluated once per statement, so the planner can use it in an index range.
  nowMs: () => sql<number>`(select (extract(epoch from clock_timestamp()) * 1000)::bigint)`,
  currentSchema: async (db) => (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s,
  isUniqueViolation: (e) => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '23505',
};

// Times are bigint milliseconds: pg would return them as strings. They fit a double exactly.
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text'),
};

export function openPostgres(url: string, poolSize = 10): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: types as pg.CustomTypesConfig });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  let listener: pg.Client | null = null;
  const subscribers = new Set<() => void>();
  return {
    db,
    caps,
    write: (work) => db.transaction().execute(work),
    signal: {
      notify: async () => {
        await sql`select pg_notify(${CHANNEL}, '')`.execute(db);
      },
      subscribe: async (fn) => {
        subscribers.add(fn);
        if (!listener) {
          const client = new pg.Client({ connectionString: url });
          client.on('error', () => {
            // The poll fallback keeps workers going; drop the broken listener so the next subscribe reconnects.
            if (listener === client) listener = null;
          });
          client.on('notification', () => subscribers.forEach((s) => s()));
          await client.connect();
          await client.query(`LISTEN ${CHANNEL}`);
          listener = client;
        }
        return async () => {
          subscribers.delete(fn);
          if (subscribers.size === 0 && listener) {
            const l = listener;
            listener = null;
            await l.end().catch(() => {});
          }
        };
      },
    },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      if (listener) await listener.end().catch(() => {});
      listener = null;
      await db.destroy();
    },
  };
}
