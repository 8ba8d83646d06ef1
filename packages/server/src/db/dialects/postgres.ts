import pg from 'pg';
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import type { Tables } from '../tables.js';
import { NeedsTransaction, runningAgain } from '../run-again.js';
import { channelSignal, noticesThrough } from './postgres-listen.js';
import { postgresJobs } from './postgres/jobs.js';
import { schemaChangeLock } from './postgres/schema-change-lock.js';
import { outageSettings, surviveBrokenConnections, watchForStalls } from './postgres-outages.js';
import type { Database, DialectCapabilities, QueryDialect, QueryValueType } from './types.js';

// data is text: each expression parses it as jsonb. Text compares under "C" (code points); case folds by svc_lower
// (migration 013: svc's own table of simple lowercase mappings, not the server's locale); svc_instant is migration 009's.
const fieldSql = (name: string, type: QueryValueType): string => {
  const value = `(data::jsonb ->> '${name}')`;
  switch (type) {
    case 'text':
      return `(${value} collate "C")`;
    case 'number':
    case 'integer':
      return `(${value}::numeric)`;
    case 'boolean':
      return `(${value}::boolean)`;
    case 'datetime':
      return `svc_instant${value}`;
    case 'json':
      return value;
  }
};

/**
 * The relation loweredFrom joins; its columns are `~` and the field's name (a checked identifier), which no column of
 * `records` can be, whatever the fields are named.
 */
const LOWERED = 'svc_lowered';

/** The statistics object that goes with an indexed field's index (migration 010 names the existing ones alike). */
const statisticsName = (index: string): string => `${index}_stats`;

const query: QueryDialect = {
  field: fieldSql,
  param: (value, type) => {
    switch (type) {
      case 'number':
      case 'integer':
      case 'datetime':
        return sql`cast(${String(value)} as numeric)`;
      case 'boolean':
        return sql`cast(${value} as boolean)`;
      default:
        return sql`${value}`;
    }
  },
  idText: '(id collate "C")',
  // svc_lower: migration 013's table-driven mapping, the same on both databases (not lower() under a server locale),
  // applied once a row to each field the filter's `~` terms name (loweredFrom).
  contains: (name, lowered) => sql<boolean>`strpos(${sql.raw(`${LOWERED}."~${name}"`)}, ${lowered}) > 0`,
  // OFFSET 0 keeps the planner from pulling either subquery up into the WHERE, where each reference would evaluate
  // its expression again; the inner one parses the record's JSON once for all the fields.
  loweredFrom: (names) =>
    ` cross join lateral (select ${names.map((n) => `svc_lower(parsed.doc ->> '${n}') as "~${n}"`).join(', ')} from (select records.data::jsonb as doc offset 0) as parsed offset 0) as ${LOWERED}`,
  readValue: (value, type) => {
    if (value === null || value === undefined) return null;
    return type === 'number' || type === 'integer' ? Number(value) : (value as string | boolean);
  },
  // Concurrently: writes go on during the build. It cannot run inside a transaction. In a descending sort's order
  // (nulls last, ties by id), so a top-N page reads only its rows; filters use it in either direction.
  createIndex: (index, collection, expression) =>
    `create index concurrently if not exists "${index}" on records (${expression} desc nulls last, id) where collection = '${collection}'`,
  dropIndex: (index) => `drop index concurrently if exists "${index}"`,
  // A statistics object has no WHERE: ANALYZE evaluates its expression on every collection's records. Only a text
  // field's expression cannot fail on another collection's values (a cast to numeric or boolean, or svc_instant, can),
  // so only text fields get one; a range on a number keeps the planner's default estimate (a third of the rows).
  createStatistics: (index, expression, type) =>
    type === 'text' ? [`create statistics if not exists "${statisticsName(index)}" on (${expression}) from records`] : [],
  dropStatistics: (index) => [`drop statistics if exists "${statisticsName(index)}"`],
  refreshStatistics: [],
  analyzeIndex: () => ['analyze records'],
  indexState: (index) => sql<{ valid: boolean }>`select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid
    where c.relname = ${index} and c.relnamespace = current_schema()::regnamespace`,
  explain: 'explain',
  limit: (rows) => sql`${rows}`,
  indexedTextMaxBytes: 2600,
  // program_limit_exceeded: "index row size … exceeds btree version 4 maximum 2704", "index row requires … bytes".
  valueTooLongForIndex: (e) => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '54000',
  rowCheck: null,
  recordCheck: null,
  eventCheck: null,
};

const CHANNEL = 'svc_jobs';
const FEED_CHANNEL = 'svc_events';

/**
 * Inserts as one statement: each a data-modifying WITH of its own (every one runs to completion, whatever the outer
 * select reads; on one snapshot, in no set order). Nothing in it notifies: wake-ups go after the commit
 * (postgres-listen.ts coalescedNotices).
 */
const together: NonNullable<DialectCapabilities['together']> = (parts, check) => {
  const ctes = parts.map((insert, i) => sql`${sql.raw(`part${i}`)} as (${insert})`);
  return sql`with ${sql.join(ctes)} select ${check === null ? sql`1` : sql`${check} as checked`}`;
};

const caps: DialectCapabilities = {
  name: 'postgres',
  forUpdate: () => sql`for update`,
  skipLocked: () => sql`for update skip locked`,
  lockRow: async (trx, table, column, key) => {
    await sql`select 1 from ${sql.table(table)} where ${sql.ref(column)} = ${key} for update`.execute(trx);
  },
  rowsOf: (columns, rows) =>
    sql`select * from unnest(${sql.join(columns.map(([, type], i) => sql`${rows.map((r) => r[i])}::${sql.raw(type)}[]`))}) as r(${sql.join(columns.map(([name]) => sql.ref(name)))})`,
  jobs: postgresJobs,
  sharedByProcesses: true,
  restAfterWrite: () => 0,
  // clock_timestamp, not now(): now() is frozen at transaction start.
  // A scalar subquery is evaluated once per statement, so the planner can use it in an index range.
  nowMs: () => sql<number>`(select (extract(epoch from clock_timestamp()) * 1000)::bigint)`,
  currentSchema: async (db) => (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s,
  limitStatements: async (trx, ms) => {
    await sql`select set_config('statement_timeout', ${String(Math.max(1, Math.floor(ms)))}, true)`.execute(trx);
  },
  isQueryTimeout: (e) => e instanceof QueriesPoolBusy || (typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '57014'),
  isUniqueViolation: (e) => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '23505',
  eventPositions: async () => ({ expressions: { tx: sql<number>`pg_current_xact_id()::text::bigint`, position: sql<number>`nextval('events_position_seq')` } }),
  // The oldest transaction still running at the statement's snapshot, leaving out those known to run in another
  // database of the cluster (transaction ids are cluster-wide; only this database's can write our events). One
  // that ended before pg_stat_activity was read is kept in: the horizon errs early, never late (and so a read's
  // horizon can fall a little below the one before; feed.ts refuseUnissued).
  feedHorizon: () => sql<number>`(select coalesce(
      (select min(x::text::bigint) from pg_snapshot_xip(pg_current_snapshot()) as x
        where (x::text::bigint % 4294967296)::text not in (
          select a.backend_xid::text from pg_stat_activity a where a.backend_xid is not null and a.datname is distinct from current_database())),
      pg_snapshot_xmax(pg_current_snapshot())::text::bigint))`,
  feedHorizonOnce: true,
  feedScanRows: null,
  textBytes: (value) => sql<string | null>`${value}`,
  keepPlan,
  arrayRows: async <T extends readonly unknown[]>(db: Kysely<Tables>, query: CompiledQuery) =>
    (await db.executeQuery<Record<string, unknown>>(query)).rows.map((row) => Object.values(row) as unknown as T),
  // Events written since migration 012 carry their JSON up to the payload; older ones are built from their columns
  // (the epoch plus whole milliseconds as an interval: exact, no float, no time zone).
  eventJson: () => sql<string>`case when json_prefix is not null then json_prefix || coalesce(payload, 'null') || '}'
    else '{"id":' || to_json(id)::text || ',"topic":' || to_json(topic)::text || ',"collection":' || to_json(collection)::text
    || ',"recordId":' || to_json(record_id)::text || ',"occurredAt":"'
    || to_char(timestamp 'epoch' + created_at * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    || '","payload":' || coalesce(payload, 'null') || '}' end`,
  together,
  targetsVersion: {
    read: sql<number>`select version from targets_version where id = 1`,
    at: (expected) => sql`svc_targets_at(${expected}::bigint)`,
    isChanged: (e) => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'SV001',
  },
  query,
};

// Times are bigint milliseconds: pg would return them as strings. They fit a double exactly.
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text'),
};

/** Statement texts run as named prepared statements (DialectCapabilities.keepPlan), and their names; at most KEPT_PLANS_MAX. */
const keptPlans = new Map<string, string>();
const KEPT_PLANS_MAX = 64;

function keepPlan(text: string): void {
  if (keptPlans.size < KEPT_PLANS_MAX && !keptPlans.has(text)) keptPlans.set(text, `svc_plan_${keptPlans.size + 1}`);
}

/**
 * A pg client that sends the statements keepPlan names as named prepared statements: the first use on a connection
 * parses and plans it, later ones only bind and execute (PostgreSQL switches to a generic plan after five runs when
 * it costs no more than the custom ones). Kysely calls `query(text, parameters)`; anything else passes through.
 */
class PlanKeepingClient extends pg.Client {
  override query(...args: unknown[]): never {
    const [text, values] = args;
    const name = args.length === 2 && typeof text === 'string' && Array.isArray(values) ? keptPlans.get(text) : undefined;
    const query = super.query as (...a: unknown[]) => never;
    return name === undefined ? query.apply(this, args) : query.call(this, { name, text, values });
  }
}

/**
 * A records query (Database.queries) that waited for a connection until the pool's checkout timeout while every one
 * of the pool's connections was running another query: the database answers, svc's room for such queries is taken.
 * caps.isQueryTimeout knows it (503 query_timeout, as SQLite's wait for a busy reader thread); before, it was 503
 * `unavailable`, an outage's code. The message keeps pg-pool's, so a caller that does not ask isQueryTimeout still
 * classifies it as before (database-errors.ts).
 */
class QueriesPoolBusy extends Error {}

const CHECKOUT_TIMEOUT = 'timeout exceeded when trying to connect';

/**
 * pg-pool rejects a queued checkout with CHECKOUT_TIMEOUT both when its connections are all running statements and
 * when they are all still connecting to a server that does not answer (an outage). Only the first is a busy pool:
 * every connection checked out (so connected) when the wait gave up.
 */
function busyPoolIsQueryTimeout(pool: pg.Pool, size: number): void {
  let running = 0;
  pool.on('acquire', () => void running++);
  pool.on('release', () => void running--);
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { connect: (...args: unknown[]) => unknown }).connect = (...args: unknown[]) => {
    if (args.length > 0) return connect(...args);
    return (connect() as Promise<pg.PoolClient>).catch((err: unknown) => {
      if (err instanceof Error && err.message === CHECKOUT_TIMEOUT && running >= size) {
        throw new QueriesPoolBusy(`${CHECKOUT_TIMEOUT}: all ${size} connections for records queries are running one`);
      }
      throw err;
    });
  };
}

/**
 * `timeouts.connectMs` bounds opening a connection and waiting for a free one; `timeouts.stallMs` is how long a
 * statement may wait on a server that answers nothing before that server is probed (postgres-outages.ts). connect.ts
 * derives both from SVC_REQUEST_TIMEOUT_MS, so an outage answers 503 within it.
 */
export function openPostgres(url: string, poolSize = 10, queryTimeoutMs = 10_000, timeouts = { connectMs: 10_000, stallMs: 5_000 }): Database {
  const settings = outageSettings(timeouts.connectMs);
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: types as pg.CustomTypesConfig, Client: PlanKeepingClient, ...settings });
  surviveBrokenConnections(pool);
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  // Connections open on first use: a process that serves no records list never opens one.
  const queryPool = new pg.Pool({ connectionString: url, max: poolSize, types: types as pg.CustomTypesConfig, statement_timeout: queryTimeoutMs, ...settings });
  surviveBrokenConnections(queryPool);
  busyPoolIsQueryTimeout(queryPool, poolSize);
  const queries = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: queryPool }) });
  const stalls = watchForStalls([pool, queryPool], url, timeouts.stallMs);
  // Both channels' wake-ups share one sender: a write's two notices go in one statement.
  const notices = noticesThrough(db);
  const jobs = channelSignal(notices, url, CHANNEL, settings);
  const events = channelSignal(notices, url, FEED_CHANNEL, settings);
  return {
    db,
    queries,
    reads: db,
    offMain: queries,
    caps,
    // A write that planned with targets a process keeps, and found them changed at its insert, runs again (run-again.ts).
    write: (work) => runningAgain(() => db.transaction().execute(work)),
    heavy: (_scope, transaction, work) => (transaction ? runningAgain(() => db.transaction().execute(work)) : work(db)),
    writeStatement: (work) =>
      runningAgain(async () => {
        try {
          // A Kysely of its own for this write (not a transaction): what the write keeps per transaction is its own.
          return await db.connection().execute(work);
        } catch (err) {
          if (err instanceof NeedsTransaction) return db.transaction().execute(work);
          throw err;
        }
      }),
    schemaChange: (collection) => schemaChangeLock(url, settings, collection),
    signal: jobs,
    events,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      stalls.close();
      await Promise.all([jobs.close(), events.close()]);
      await notices.settled();
      await Promise.all([db.destroy(), queries.destroy()]);
    },
  };
}
