import { EventEmitter } from 'node:events';
import { closeSync, constants, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect, sql, type SqliteDatabase } from 'kysely';
import { GroupCommit } from '../group-commit.js';
import type { Tables } from '../tables.js';
import { sqliteJobs } from './sqlite/jobs.js';
import { OverBudgetError, registerQueryFunctions, type MainBudget } from './sqlite-functions.js';
import { ARRAY_ROWS, statementCache } from './sqlite-statements.js';
import { ReaderPool, ReaderTimeoutError, readerKysely } from './sqlite-readers.js';
import { onWriterThread } from './sqlite-writer-thread.js';
import type { Database, DialectCapabilities, JobSignal, QueryDialect, QueryValueType } from './types.js';

const ROW_CHECK = '(rowid % 64 <> 0 or svc_check())';
/** ROW_CHECK, and a check before each large value (QueryDialect.recordCheck, eventCheck); it holds ROW_CHECK, which sets the budget. */
const largeValueCheck = (column: string) => `((octet_length(${column}) >= 65536 and svc_check()) or ${ROW_CHECK})`;
const RECORD_CHECK = largeValueCheck('data');
/**
 * How long a records query may run on the main connection before it is given up there and run again on a reader
 * thread: most finish well within it (W11's indexed page: about 1 ms), and a thread hop would cost them more than they
 * take (the clone of their rows); a slow one holds the event loop this long, plus at most 64 rows' work.
 */
const MAIN_BUDGET_MS = 20;

const fieldSql = (name: string, type: QueryValueType): string =>
  type === 'datetime' ? `svc_instant(json_extract(data, '$.${name}'))` : `json_extract(data, '$.${name}')`;

// json_extract gives SQL values: TEXT compares by BINARY (UTF-8 bytes, which order as code points), numbers
// numerically across INTEGER and REAL, JSON true/false as 1/0. svc_lower and svc_instant are registered below.

/**
 * Statements that drop what ANALYZE wrote to `sqlite_stat4` (this build of SQLite has STAT4), keeping `sqlite_stat1`'s
 * counts, and make the connection read its statistics again (`analyze sqlite_schema`, which also creates the tables
 * if no ANALYZE ever ran). With samples of an index, SQLite plans a statement that constrains the index's columns by a
 * bound parameter with that parameter's value, and marks it to be planned again whenever the parameter is bound; and
 * better-sqlite3 binds every parameter on every run. So each such statement was parsed and planned anew on every run
 * (callgrind, 500 runs of a range probe after ANALYZE: 500 `sqlite3Reprepare` calls; none without the samples): a
 * filtered records page once its field was indexed, the claim's pick once `pragma optimize` had analyzed the jobs.
 * The counts choose between svc's indexes as the samples did (docs/queries.md).
 */
export const WITHOUT_SAMPLES = ['analyze sqlite_schema', 'delete from sqlite_stat4', 'analyze sqlite_schema'] as const;

const query: QueryDialect = {
  field: fieldSql,
  param: (value, type) => (type === 'boolean' ? sql`${value ? 1 : 0}` : sql`${value}`),
  idText: 'id',
  contains: (name, lowered) => sql<boolean>`instr(svc_lower(${sql.raw(fieldSql(name, 'text'))}), ${lowered}) > 0`,
  loweredFrom: null,
  readValue: (value, type) => (value === null || value === undefined ? null : type === 'boolean' ? value === 1 : (value as string | number)),
  // A partial index: its WHERE names the collection as a constant, and only queries that say so use it. Descending,
  // as SQLite puts NULL lowest: its order is a descending sort's (nulls last, ties by id), so a top-N page stops early;
  // an ascending sort still reads it in order and sorts only the ties.
  createIndex: (index, collection, expression) => `create index if not exists "${index}" on records (${expression} desc, id) where collection = '${collection}'`,
  dropIndex: (index) => `drop index if exists "${index}"`,
  createStatistics: () => [],
  refreshStatistics: ['pragma analysis_limit = 1000', 'pragma optimize', 'pragma analysis_limit = 0', ...WITHOUT_SAMPLES],
  dropStatistics: () => [],
  analyzeIndex: (index) => [`analyze "${index}"`, ...WITHOUT_SAMPLES],
  indexState: (index) => sql<{ valid: number }>`select 1 as valid from sqlite_master where type = 'index' and name = ${index}`,
  explain: 'explain query plan',
  // better-sqlite3 binds a JavaScript number as a REAL (its data.cpp), and SQLite reads a bare LIMIT parameter's value
  // when it plans only if it is an INTEGER (sqlite3ExprIsInteger), yet marks the statement to be planned again at
  // every bind all the same. So `limit ?` was planned as if the limit were unknown, anew on every run: W11's page,
  // 500 runs under callgrind, 3,197,000 instructions a run with `limit ?`, 3,041,000 with `limit (? + 0)` (3,029,000
  // with `limit 51`, whose plan was the same there). `(? + 0)` keeps today's plans exactly: the planner is as blind
  // to it as it was to the REAL (`EXPLAIN QUERY PLAN` of the feed's pages, 60 filters and limits: the same plans with
  // the limit written as a number; sqlite-replanning.test.ts).
  limit: (rows) => sql`(${rows} + 0)`,
  indexedTextMaxBytes: null,
  valueTooLongForIndex: () => false,
  // One modulo a row in SQLite's VM, one JavaScript call per 64 rows: within the noise of a 200,000-row scan.
  rowCheck: ROW_CHECK,
  recordCheck: RECORD_CHECK,
  eventCheck: largeValueCheck('payload'),
};

const LAST_POSITION = CompiledQuery.raw('select position from events where position is not null order by tx desc, position desc limit 1');

/**
 * SQLite's busy handler (busy_timeout; better-sqlite3 builds with HAVE_USLEEP): a writer that finds the write lock
 * taken tries again after sleeping 1, 2, 5, 10, 15, 20, 25, 25, 25, 50 and 50 ms, then 100 ms a time, and never in
 * between. It sleeps on its process's event loop, better-sqlite3 being synchronous: `svc prune`'s transactions, 6 ms
 * each on average and never over 70 ms, but back to back (microseconds free between two), kept the writer of a
 * server beside it from the lock 0.5-1.2 s, and every request with it (50,000 to 201,000 events to prune). Measured
 * here: a writer held off 20, 60 and 150 ms took the lock 33.7, 79.2 and 179.7 ms after it began waiting.
 */
const BUSY_SLEEPS_MS = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];
// A sleep ends late by up to a few milliseconds on a loaded machine (0.5-4 ms summed over the sleeps above, measured).
const BUSY_SLACK_MS = 5;

/** The sleep a waiting writer is in once it has waited `waitedMs`: the longest it may go without a try from then on. */
function busySleepAfter(waitedMs: number): number {
  let slept = 0;
  for (const ms of BUSY_SLEEPS_MS) {
    if (waitedMs < slept + ms) return ms;
    slept += ms;
  }
  return BUSY_SLEEPS_MS[BUSY_SLEEPS_MS.length - 1]!;
}

const caps: DialectCapabilities = {
  name: 'sqlite',
  // One writer at a time: a write transaction holds every row it reads already.
  forUpdate: () => sql``,
  skipLocked: () => sql``,
  lockRow: async () => {},
  rowsOf: (columns, rows) =>
    sql`select ${sql.join(columns.map(([name], i) => sql`value ->> ${sql.lit(i)} as ${sql.ref(name)}`))} from json_each(${JSON.stringify(rows)})`,
  jobs: sqliteJobs,
  sharedByProcesses: false,
  restAfterWrite: (heldMs) => busySleepAfter(heldMs) + BUSY_SLACK_MS,
  nowMs: () => sql<number>`CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)`,
  currentSchema: async () => undefined,
  limitStatements: async () => {},
  isQueryTimeout: (e) => e instanceof ReaderTimeoutError,
  isUniqueViolation: (e) => typeof e === 'object' && e !== null && String((e as { code?: unknown }).code).startsWith('SQLITE_CONSTRAINT_'),
  // One writer at a time, and writes commit in the order they run: a counter read and bumped inside the write is a
  // commit order on its own. The last position is one step back along the feed index (tx is always 0 here).
  eventPositions: async (db, count) => {
    const last = (await db.executeQuery<{ position: number }>(LAST_POSITION)).rows[0]?.position ?? 0;
    return { values: Array.from({ length: count }, (_, i) => ({ tx: 0, position: last + 1 + i })) };
  },
  feedHorizon: () => sql<number>`1`,
  feedHorizonOnce: false,
  // About a millisecond of the event loop a statement (1,024 rows of events_feed and their rows' collection and topic).
  feedScanRows: 1024,
  // Events written since migration 012 carry their JSON up to the payload; older ones are built from their columns
  // (created_at is whole milliseconds: the seconds by strftime, the milliseconds written out, no float on the way).
  eventJson: () => sql<string>`case when json_prefix is not null then json_prefix || coalesce(payload, 'null') || '}'
    else '{"id":' || json_quote(id) || ',"topic":' || json_quote(topic) || ',"collection":' || json_quote(collection)
    || ',"recordId":' || json_quote(record_id) || ',"occurredAt":"' || strftime('%Y-%m-%dT%H:%M:%S', created_at / 1000, 'unixepoch')
    || printf('.%03dZ', created_at % 1000) || '","payload":' || coalesce(payload, 'null') || '}' end`,
  textBytes: (value) => sql<Buffer | null>`cast(${value} as blob)`,
  keepPlan: () => {},
  arrayRows: async <T extends readonly unknown[]>(db: Kysely<Tables>, query: CompiledQuery) =>
    (await db.executeQuery<T>(CompiledQuery.raw(markedForArrays(query.sql), [...query.parameters]))).rows,
  joinPage: {
    json: (value) => sql<Buffer | null>`cast(group_concat(${value}, ',') as blob)`,
    text: (value) => sql<string | null>`group_concat(${value}, ',')`,
  },
  together: null,
  targetsVersion: null,
  query,
};

const STATEMENT_CACHE_SIZE = 500;

/**
 * A statement's text marked for array rows, the same string each time for the same text: a text built once (sqlOnce)
 * keeps its hash, so the statement cache finds it without hashing a new string on every request.
 */
const marked = new Map<string, string>();
function markedForArrays(text: string): string {
  let out = marked.get(text);
  if (out === undefined) {
    if (marked.size >= STATEMENT_CACHE_SIZE) marked.clear();
    marked.set(text, (out = ARRAY_ROWS + text));
  }
  return out;
}

/**
 * Kysely prepares every query anew; preparing costs more than running most of svc's statements. The SQL text of a
 * query is stable (values are parameters), so prepared statements are kept by text, least recently used dropped.
 */
function withStatementCache(native: SQLite.Database, budget: MainBudget, budgetMs: number): SqliteDatabase {
  const cached = statementCache(native, STATEMENT_CACHE_SIZE);
  return {
    close: () => native.close(),
    prepare(query: string) {
      // Every transaction takes the write lock first (Kysely begins with a plain, deferred `begin`). A deferred one
      // that reads and then writes is refused at once (SQLITE_BUSY, no busy_timeout) when another process committed
      // in between: `svc prune` beside a running server failed so. Begun immediate, it waits its turn instead.
      // SQLite rolls a transaction back by itself after some failures (SQLITE_FULL, an I/O error): Kysely's rollback
      // then failed with "no transaction is active", an error that replaced the one saying why (outages, SPEC §12).
      const text = query === 'begin' ? 'begin immediate' : query === 'rollback' && !native.inTransaction ? 'select 0 where 0' : query;
      // Kysely runs the statement right after preparing it, in the same turn: the budget is this statement's.
      const checked = text.includes(ROW_CHECK);
      if (checked && budget.overran) throw new OverBudgetError();
      budget.deadline = checked ? performance.now() + budgetMs : Infinity;
      return cached(text);
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

export interface SqliteReaders {
  /** Reader threads (0: records queries run on the main connection, with no timeout). */
  count: number;
  timeoutMs: number;
}

export function openSqlite(path: string, synchronous: 'FULL' | 'NORMAL', readers: SqliteReaders = { count: 0, timeoutMs: 0 }): Database {
  if (path !== ':memory:') createPrivately(path);
  const native = new SQLite(path);
  // WAL lets readers proceed during a write; busy_timeout covers a second process (svc migrate) briefly.
  native.pragma('journal_mode = WAL');
  native.pragma(`synchronous = ${synchronous}`);
  native.pragma('busy_timeout = 5000');
  native.pragma('foreign_keys = ON');
  // Samples an earlier svc's ANALYZE left (WITHOUT_SAMPLES), dropped before any reader thread reads the statistics.
  if (hasSamples(native)) for (const statement of WITHOUT_SAMPLES) native.exec(statement);
  // An in-memory database is this connection's alone: no other connection can read it.
  const pool = readers.count > 0 && path !== ':memory:' ? new ReaderPool(path, readers.count, readers.timeoutMs) : null;
  const budget: MainBudget = { deadline: Infinity, overran: false };
  // Set while heavy work holds the main connection: records queries then go straight to a reader thread.
  const mainHeld = { held: false };
  registerQueryFunctions(native, budget);
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: withStatementCache(native, budget, pool ? MAIN_BUDGET_MS : Infinity) }) });
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  const grouped = new GroupCommit(db);
  const changing = new Set<string>();
  const queries = pool ? readerKysely(pool, db, mainHeld, budget) : db;
  const offMain = pool ? readerKysely(pool, db, mainHeld, budget, true) : db;
  return {
    db,
    queries,
    reads: queries,
    offMain,
    caps,
    write: (work) => grouped.run(work),
    writeStatement: (work) => grouped.run(work),
    heavy: async (scope, transaction, work) => {
      // An in-memory database is this connection's alone, and small work is quicker than a thread's start.
      if (path === ':memory:' || isSmall(native, scope)) return transaction ? grouped.run(work) : work(db);
      return onWriterThread(path, synchronous, db, mainHeld, (threadDb) => (transaction ? threadDb.transaction().execute(work) : work(threadDb)));
    },
    // One process serves a SQLite database (emitterSignal): the changes under way are this process's.
    schemaChange: async (collection) => {
      if (changing.has(collection)) return null;
      changing.add(collection);
      return async () => void changing.delete(collection);
    },
    signal: emitterSignal(emitter, 'jobs'),
    events: emitterSignal(emitter, 'events'),
    ping: async () => {
      native.prepare('select 1').get();
    },
    close: async () => {
      if (pool) await queries.destroy();
      await db.destroy();
    },
    ...(path === ':memory:' ? {} : { migrationLock: (onWait: () => void) => fileLock(`${path}-migrate-lock`, onWait) }),
  };
}

function hasSamples(native: SQLite.Database): boolean {
  if (native.prepare("select 1 from sqlite_schema where name = 'sqlite_stat4'").get() === undefined) return false;
  return native.prepare('select 1 from sqlite_stat4 limit 1').get() !== undefined;
}

/**
 * Work (Database.heavy) that takes a few milliseconds: a collection of at most this many records and bytes, and for
 * an index build, a records table of at most `tableRows` rows (the build scans every row, reading the collection
 * column of the others: about 0.5 µs a row; 120,000 rows of other collections held the loop 78 ms).
 */
const SMALL = { records: 1000, bytes: 4 * 1024 * 1024, tableRows: 20_000 };

/** Whether the work is that small: the first rows' sizes, read from the rows' headers (not their data). */
function isSmall(native: SQLite.Database, scope: { collection: string; reads: 'collection' | 'table' }): boolean {
  const { n, bytes } = native
    .prepare('select count(*) as n, coalesce(sum(size), 0) as bytes from (select octet_length(data) as size from records where collection = ? limit ?)')
    .get(scope.collection, SMALL.records + 1) as { n: number; bytes: number };
  if (n > SMALL.records || bytes > SMALL.bytes) return false;
  if (scope.reads === 'collection') return true;
  const { rows } = native.prepare('select count(*) as rows from (select 1 from records limit ?)').get(SMALL.tableRows + 1) as { rows: number };
  return rows <= SMALL.tableRows;
}

/**
 * An exclusive lock between processes, held by an exclusive transaction on a file of its own beside the database
 * (an empty SQLite database: the file stays, as -wal and -shm do). SQLite's lock is the operating system's, so a process
 * that dies holding it lets go. Not the database file itself: the migrations write there, from this same process.
 */
async function fileLock(path: string, onWait: () => void): Promise<() => void> {
  createPrivately(path);
  const lock = new SQLite(path, { timeout: 0 });
  let told = false;
  for (;;) {
    try {
      lock.exec('begin exclusive');
      return () => lock.close();
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') {
        lock.close();
        throw err;
      }
      if (!told) onWait();
      told = true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** In-process wake-ups: one process serves a SQLite database. */
function emitterSignal(emitter: EventEmitter, name: string): JobSignal {
  return {
    notify: async (targets) => {
      emitter.emit(name, targets ?? null);
    },
    subscribe: async (listener) => {
      emitter.on(name, listener);
      return async () => {
        emitter.off(name, listener);
      };
    },
  };
}
