import type { CompiledQuery, Kysely, RawBuilder } from 'kysely';
import type { Tables } from '../tables.js';

/**
 * Either every event's own values (SQLite: one writer at a time, so the last position, read once, is counted on), or
 * the expressions each row's insert evaluates (PostgreSQL: the transaction's id, the sequence).
 */
export type EventPositions =
  | { values: Array<{ tx: number; position: number }> }
  | { expressions: { tx: RawBuilder<number>; position: RawBuilder<number> } };

/**
 * What differs between SQLite and PostgreSQL, as capabilities. Everything outside src/db/dialects asks
 * these questions instead of comparing dialect names.
 */
export interface DialectCapabilities {
  /** For logs and metrics labels only. */
  readonly name: 'sqlite' | 'postgres';
  /**
   * Appended to a read whose rows the transaction is about to change or depends on staying as read: holds them
   * until it ends (PostgreSQL `for update`). SQLite runs one writer at a time, which holds them already: nothing.
   */
  forUpdate(): RawBuilder<unknown>;
  /**
   * Appended to a read of rows to take (a claim, a pruning batch): rows another transaction holds are passed over,
   * so many workers take different rows at once (PostgreSQL `for update skip locked`). SQLite: nothing (one writer).
   */
  skipLocked(): RawBuilder<unknown>;
  /**
   * Waits for, then holds until the transaction ends, the row of `table` whose `column` is `key`: transactions that
   * change what hangs from that row run one after the other (PostgreSQL `select … for update`). SQLite: nothing to
   * do, its write transactions already run one at a time.
   */
  lockRow(trx: Kysely<Tables>, table: 'webhooks' | 'collections', column: 'id' | 'name', key: string): Promise<void>;
  /**
   * A relation of `rows` with the named columns, for a statement to join against: one parameter a column
   * (PostgreSQL: typed arrays through `unnest`) or one JSON parameter for all (SQLite: `json_each`), so the
   * statement has one text whatever the batch's size, parsed and planned once.
   */
  rowsOf(columns: ReadonlyArray<readonly [name: string, type: 'text' | 'bigint' | 'int']>, rows: ReadonlyArray<readonly unknown[]>): RawBuilder<unknown>;
  /** The delivery queue's transitions where the databases write them differently (db/dialects/<db>/jobs.ts). */
  readonly jobs: JobsDriver;
  /**
   * The feed's positions of `count` events this transaction inserts, in insert order, as two columns ordered
   * together: `tx` (the writing transaction on PostgreSQL, 0 on SQLite) and `position` (a counter). See
   * docs/event-feed.md for why two.
   */
  eventPositions(db: Kysely<Tables>, count: number): Promise<EventPositions>;
  /**
   * Events whose `tx` is below this have committed or never will, so none can appear later below it: the feed
   * reads only under it. On PostgreSQL the oldest transaction still running when the statement's snapshot was taken;
   * on SQLite (one writer, commits in order) anything above every `tx`.
   */
  feedHorizon(): RawBuilder<number>;
  /**
   * feedHorizon() reads the statement's snapshot and must be computed once where a statement uses it twice
   * (PostgreSQL); false where it is a constant that may be written in place (SQLite).
   */
  readonly feedHorizonOnce: boolean;
  /**
   * Positions one statement of a filtered feed read examines at most, the read going on from there in a later turn of
   * the event loop (feed-store.ts readBounded), where statements run on the event loop (SQLite: one read of a quiet
   * collection beside 282,000 other events held it 1 s, ten at once 4.2 s); null where the database runs the walk
   * itself while the event loop goes on (PostgreSQL: one statement, as cheap as it gets there).
   */
  readonly feedScanRows: number | null;
  /**
   * An `events` row's JSON in the feed, built by the database from the row's columns: `{"id","topic","collection",
   * "recordId","occurredAt","payload"}`, the payload's stored text as it is, `occurredAt` in ISO 8601 with
   * milliseconds, UTC: the stored prefix (migration 012, envelope.ts feedEventPrefix) and the payload, or for events
   * written before the prefix, built from the columns. Built where the row is read, a page reaches JavaScript as one
   * string an event instead of six columns to join (W9). The same bytes as JSON.stringify would give (tests:
   * events-feed, events-feed-page).
   */
  eventJson(): RawBuilder<string>;
  /**
   * A text value in the form the driver hands over most cheaply for sending as it is: SQLite casts it to a blob, which
   * reaches JavaScript as a Buffer of its UTF-8 bytes (no string made, nothing to encode again before it is signed and
   * written to a socket); PostgreSQL's driver returns the text.
   */
  textBytes(value: RawBuilder<unknown>): RawBuilder<Buffer | string | null>;
  /**
   * Runs a statement that returns rows and hands each over as an array of its values in the order the statement
   * names its columns. SQLite's driver then makes one array a row instead of an object whose every property is set
   * by name through V8's API (a claim's row of ten columns: ~14,000 instructions a job of ~90,000, callgrind);
   * PostgreSQL's rows arrive as objects and are read in their columns' order. For the hottest statements only.
   */
  arrayRows<T extends readonly unknown[]>(db: Kysely<Tables>, query: CompiledQuery): Promise<T[]>;
  /**
   * Runs this statement text (as compiled, placeholders and all) as a prepared statement whose plan each connection
   * keeps, from now on. PostgreSQL plans every unnamed statement it is sent; the feed page's (its horizon reads
   * the snapshot and pg_stat_activity) took 0.8 ms of a 4.8 ms round trip to plan. For hot statements of fixed
   * text only: a bounded number of texts is kept (db/dialects/postgres.ts), later ones run unnamed. SQLite: nothing to
   * do, every statement is prepared once already.
   */
  keepPlan(text: string): void;
  /**
   * Where a feed page is joined by the database into one value (feed-store.ts readFeedPage): aggregates joining
   * values with commas, in the order they are given the rows, null over none. SQLite's `json` is a blob, which
   * reaches JavaScript as a Buffer of the UTF-8 bytes with no decoding. Absent on PostgreSQL, whose driver reads
   * one 1.4 MB value more slowly than 1,000 small ones.
   */
  readonly joinPage?: {
    json(value: RawBuilder<unknown>): RawBuilder<Buffer | string | null>;
    text(value: RawBuilder<unknown>): RawBuilder<string | null>;
  };
  /**
   * Several inserts as one statement: PostgreSQL's data-modifying WITH, one round trip for a write's record, events
   * and jobs instead of one each. Its parts run on one snapshot in no set order: none may depend on another's rows.
   * Null where a statement costs no round trip (SQLite): the inserts run one after another (db/compiled.ts
   * insertTogether). No insert wakes anyone: the write's wake-ups are sent after its commit (webhooks/outbox.ts).
   */
  readonly together: ((parts: ReadonlyArray<RawBuilder<unknown>>, check: RawBuilder<unknown> | null) => RawBuilder<unknown>) | null;
  /**
   * The targets' version (migration 022), which every committed change to a target that a record write could see
   * moves. A process keeps the targets it read and has each write's insert check their version on its own snapshot
   * (webhooks/targets-cache.ts) instead of reading them again: a round trip less a write. Null where reading the
   * targets costs no round trip (SQLite reads them in-process).
   */
  readonly targetsVersion: {
    /** A query of the version, one value. */
    readonly read: RawBuilder<number>;
    /** An expression that is `expected` where that is the version on the statement's snapshot, and fails the statement otherwise. */
    readonly at: (expected: RawBuilder<unknown>) => RawBuilder<unknown>;
    /** Whether an error is `at`'s failure. */
    readonly isChanged: (e: unknown) => boolean;
  } | null;
  /** Several processes may share this database (PostgreSQL), so in-process caches and wake-ups are not enough. */
  readonly sharedByProcesses: boolean;
  /**
   * How long work of many write transactions (retention's batches) leaves the write lock free after one that held it
   * `heldMs`, where another process may be writing meanwhile (`svc prune` beside `svc serve`): long enough that a
   * writer which began waiting during that transaction tries again, and takes the lock, before the next one. SQLite:
   * the waiter retries only between the sleeps of its busy handler, on its event loop; 0 where a waiter is woken as
   * the lock is released, off its event loop (PostgreSQL).
   */
  restAfterWrite(heldMs: number): number;
  /** The database clock in Unix milliseconds: leases are timed by it, so workers on other hosts agree. */
  nowMs(): RawBuilder<number>;
  isUniqueViolation(error: unknown): boolean;
  /**
   * Stops this transaction's statements that run longer than `ms`, with the error isQueryTimeout knows (PostgreSQL
   * `set local statement_timeout`). SQLite: nothing; a statement on its main connection cannot be stopped.
   */
  limitStatements(trx: Kysely<Tables>, ms: number): Promise<void>;
  /** The statement was cancelled by the query timeout. */
  isQueryTimeout(error: unknown): boolean;
  /**
   * The schema svc's tables live in, when the database has schemas. Kysely's migrator looks for its own tables by
   * name across every schema, so it must be told which one is ours.
   */
  currentSchema(db: Kysely<Tables>): Promise<string | undefined>;
  /** The SQL of the filter language and of indexed fields (records/query/). */
  readonly query: QueryDialect;
}

/** A delivering attempt as the completion writes it on its job's row (migration 020's `success_*` columns). */
export interface DeliveredJob {
  id: string;
  /** The lease of the claim that made the attempt: only that claim's result is written. */
  lease: string;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  snippet: string | null;
  remoteAddress: string | null;
  dnsMs: number | null;
  connectMs: number | null;
  tlsMs: number | null;
  firstByteMs: number | null;
}

/**
 * The delivery queue's SQL that differs by database (a driver per database, as River's riverdriver): each
 * transition of webhooks/queue/ calls these for its one statement instead of asking the database's capabilities
 * what to write. A test of a transition runs on both, and its name says which driver broke.
 */
/** One target of a claim: up to `limit` of its oldest due jobs, while their bytes fit `maxBytes` (claim.ts). */
export interface ClaimTarget {
  webhookId: string;
  limit: number;
  maxBytes: number;
  /** Claimed through its rate-limit bucket: the statement takes its jobs only while the target has a limit. */
  limited: boolean;
}

/** A claim's statement(s): these targets' jobs, under one fresh lease token. */
export interface ClaimStatementOptions {
  targets: readonly ClaimTarget[];
  lease: string;
  now: number;
  leaseMs: number;
  /** What a job costs besides its payload, in the byte budget (claim.ts JOB_OVERHEAD_BYTES). */
  overheadBytes: number;
  /** Read each event's trace context (a process that traces); else the column is null and no event is probed for it. */
  withTrace: boolean;
}

/** A claimed job's values, in this order (the lease and its expiry are the claim's own, not read back). */
export type ClaimRow = readonly [
  id: string,
  webhookId: string,
  topic: string,
  collection: string,
  recordId: string,
  attemptCount: number,
  roundStart: number,
  payload: Buffer | string | null,
  /** The event's `traceparent`, a space and its `tracestate` (empty when none); null when the event has none. */
  trace: string | null,
];

export interface JobsDriver {
  /**
   * pending → delivering (webhooks/queue/claim.ts): for each target, its oldest due jobs (in due order, then by id)
   * while their running sum of bytes (payload and overhead) fits its budget, and always the first; each job's
   * payload is read only when it is taken. The database, not a worker's view, decides that a disabled or deleted
   * target's jobs wait. Rows in no set order.
   */
  claim(db: Kysely<Tables>, opts: ClaimStatementOptions): Promise<ClaimRow[]>;
  /**
   * delivering → delivered for a batch (webhooks/queue/complete.ts): each job still `delivering` under the lease
   * its entry names gets the attempt on its row, and its target's failing streak ends (auto-disable's counters,
   * migration 007). `then` runs after the update with the jobs it applied to, where the database has it: PostgreSQL
   * one statement on its own, and `then` after it (its snapshot sees what committed while the update waited); SQLite
   * one transaction for the update, `then` and the counters (one commit, one sync).
   */
  delivered(
    db: Kysely<Tables>,
    now: number,
    done: readonly DeliveredJob[],
    then: (db: Kysely<Tables>, applied: ReadonlyArray<{ id: string; ordered: number }>) => Promise<void>,
  ): Promise<Array<{ id: string; ordered: number }>>;
}

/** A collection field's type, as the filter language compares it (records/fields.ts FieldType). */
export type QueryValueType = 'text' | 'number' | 'integer' | 'boolean' | 'datetime' | 'json';

/**
 * Field names are checked identifiers (FIELD_NAME) and are spliced into the SQL text, never values: an expression
 * index is used only when a query repeats its expression exactly, constants included.
 */
export interface QueryDialect {
  /**
   * A data field's value, typed so that comparing and ordering it follows SPEC §8 (text by code point, numbers
   * numerically, datetimes as instants via svc_instant, false before true), NULL when absent or null. It is also the
   * exact expression an indexed field's index is built on.
   */
  field(name: string, type: QueryValueType): string;
  /** An operand bound as a parameter, typed like field() of the same type. `datetime` takes an instantKey text. */
  param(value: string | number | boolean, type: QueryValueType): RawBuilder<unknown>;
  /** The record's id, compared by code point. */
  readonly idText: string;
  /**
   * Whether a text field's value, lowercased by the Unicode simple mapping, contains `lowered` (bound). With
   * `loweredFrom`, it reads the field's lowered value that the FROM clause made once per row.
   */
  contains(name: string, lowered: string): RawBuilder<boolean>;
  /**
   * PostgreSQL: what follows `from records` so that each field named in `~` terms is parsed and lowered once per row,
   * not once per term (a LATERAL subquery behind an optimization fence). 50 terms over one field were 50 parses of
   * the record's JSON and 50 lowerings of the value a row. Null where the dialect has no LATERAL (SQLite).
   */
  loweredFrom: ((names: readonly string[]) => string) | null;
  /** A cursor's sort value read back from a row, as JSON (PostgreSQL returns numeric as text). */
  readValue(value: unknown, type: QueryValueType): string | number | boolean | null;
  /**
   * Statements that build the index of an indexed field (`where` a checked collection name), each run alone.
   * PostgreSQL builds it concurrently, which must run outside any transaction.
   */
  createIndex(index: string, collection: string, expression: string): string;
  dropIndex(index: string): string;
  /**
   * Statements that keep the planner's statistics of an indexed field's expression, run after its index is built
   * (before analyzeIndex), and those that drop them with the index. PostgreSQL gathers no statistics for the
   * expressions of a partial index, so without these it guesses any equality at 0.5 % of the rows: for `status =
   * 'open'` (a quarter of them) it then reads the status index and sorts, instead of walking the sort's index and
   * stopping after one page (870 ms against 2 ms for W11's page of 100,000 records). SQLite's ANALYZE of the index
   * already counts its values: none.
   */
  createStatistics(index: string, expression: string, type: QueryValueType): string[];
  dropStatistics(index: string): string[];
  /**
   * Statements that gather the statistics the planner needs to prefer a new index (SQLite has none until ANALYZE, and
   * without them picks an equality index over one that serves the sort; PostgreSQL has no statistics on an expression
   * before it), run in order.
   */
  analyzeIndex(index: string): readonly string[];
  /**
   * Statements that bring stale planner statistics up to date, run by maintenance every hour. SQLite gathers none on
   * its own: `PRAGMA optimize` analyzes the tables that grew or shrank tenfold since their last ANALYZE, each index
   * read approximately (`analysis_limit`), so it stays cheap on a large table. PostgreSQL's autovacuum keeps them.
   */
  readonly refreshStatistics: readonly string[];
  /** Whether an index exists and is usable (PostgreSQL: a failed concurrent build leaves an invalid one behind). */
  indexState(index: string): RawBuilder<{ valid: boolean | number }>;
  /** The prefix that makes a statement answer with its plan. */
  readonly explain: string;
  /**
   * A page's LIMIT of `rows`, bound. SQLite: `(? + 0)`, an expression. SQLite (3.53) marks a statement whose LIMIT is
   * a bare parameter to be planned again whenever that parameter is bound, which its driver does on every run, while
   * the plan never used the value: the driver binds every number as a REAL, and the planner reads only an INTEGER
   * there (sqlite.ts). PostgreSQL: the bare parameter, which a custom plan reads.
   */
  limit(rows: number): RawBuilder<unknown>;
  /**
   * The most bytes of UTF-8 an indexed text field may hold, or null for no limit of its own. PostgreSQL's B-tree takes
   * an entry of at most 2,704 bytes (a third of a page): a record with a longer value in an indexed field failed at
   * its insert, answered 500 `internal`. 2,600 bytes leave room for the entry's header and the record's id, with
   * no compression counted on; SQLite has no such limit.
   */
  readonly indexedTextMaxBytes: number | null;
  /** Building an index failed because a value is too long for an index entry (PostgreSQL SQLSTATE 54000). */
  valueTooLongForIndex(error: unknown): boolean;
  /**
   * A condition true for every row, added to every records query so a long one can be stopped: SQLite calls into
   * JavaScript (svc_check) about once every 64 rows it examines, where the main connection gives the statement up
   * past its budget and a reader thread being ended stops at once (sqlite-readers.ts; better-sqlite3 cannot interrupt
   * a statement). Null where the database stops statements itself (PostgreSQL's statement_timeout).
   */
  readonly rowCheck: string | null;
  /**
   * rowCheck for a records query: it also calls into JavaScript before every large record (64 KiB of data or more),
   * whose parse alone can take milliseconds, so a statement over a few dozen records of 1 MB (never reaching a 64th
   * row) still stops at its budget: 63 such records held the event loop 500 ms.
   */
  readonly recordCheck: string | null;
  /**
   * rowCheck for the feed's statements over events (Database.reads): it also calls into JavaScript before every
   * large payload (64 KiB or more), so a page of a few large events stops at its budget too.
   */
  readonly eventCheck: string | null;
}

/** Wake-ups for workers when jobs are committed: LISTEN/NOTIFY on PostgreSQL, an in-process emitter on SQLite. */
/**
 * Wake-ups between processes (PostgreSQL's LISTEN/NOTIFY) or within one (SQLite). A wake-up for new pending jobs names
 * their targets, so a worker probes those and not every target it knows (with 1,050 targets, every wake-up made the
 * next claim ask all of them again); one that names none (`null`) means "look at everything": targets changed, jobs
 * revived, a poll, or more targets than a notice's payload holds.
 */
export interface JobSignal {
  notify(targets?: readonly string[] | null): Promise<void>;
  subscribe(listener: (targets: readonly string[] | null) => void): Promise<() => Promise<void>>;
}

export interface Database {
  readonly db: Kysely<Tables>;
  /**
   * Where records list queries run. On PostgreSQL a pool of its own whose every statement has statement_timeout
   * (SVC_QUERY_TIMEOUT_MS), set once per connection rather than per query, so it costs no round trip; on SQLite `db`.
   */
  readonly queries: Kysely<Tables>;
  /**
   * Where the feed's pages are read (SPEC §12: no page holds the event loop): statements that carry
   * QueryDialect.eventCheck, outside transactions. On SQLite `queries`: a statement runs on the main connection until
   * its budget (20 ms) is spent, then again on a reader thread; on PostgreSQL `db`, whose statements never hold the
   * loop and whose plans it keeps (no statement_timeout of its own: a feed statement is bounded by its limit).
   */
  readonly reads: Kysely<Tables>;
  /**
   * `queries` for a statement known to be long in a part that makes no row check: on SQLite straight to a reader
   * thread, never the main connection, whose budget is checked only as rows are read, so a sort after the read (a
   * GROUP BY, a window function) ran there to its end. A health overview page's statements over 250,000 attempts held
   * the event loop 100-170 ms so. On PostgreSQL `queries`.
   */
  readonly offMain: Kysely<Tables>;
  readonly caps: DialectCapabilities;
  readonly signal: JobSignal;
  /** Wake-ups for feed readers (long-polls, streams) when events commit: its own channel, so workers are not woken. */
  readonly events: JobSignal;
  /**
   * A write transaction for the request path. On SQLite the ones that arrive together share one commit (see
   * group-commit.ts); on PostgreSQL it is a plain transaction (the server overlaps concurrent commits itself).
   */
  write<T>(work: (trx: Kysely<Tables>) => Promise<T>): Promise<T>;
  /**
   * A write that is one statement where it can be (a create's record, event and jobs with their targets' check). On
   * PostgreSQL `work` first runs on a connection outside any transaction, so that statement commits by itself: no
   * BEGIN and no COMMIT, two round trips less. What would need a transaction there (a second statement that writes, a
   * lock) throws NeedsTransaction first, with nothing written, and `work` runs again in `write`. SQLite: `write`.
   */
  writeStatement<T>(work: (db: Kysely<Tables>) => Promise<T>): Promise<T>;
  /**
   * Work over a whole collection at once (an index build, a forced delete of a collection): in one transaction as
   * `write` runs it (`transaction`), or outside any (PostgreSQL builds an index concurrently, which no transaction may
   * hold). On SQLite it runs on a connection in a worker thread while the main connection waits, so the event loop
   * goes on (sqlite-writer-thread.ts): `work` must use only the Kysely it is given. Work that stays small runs on the
   * main connection, as starting a thread would cost more: `reads` says what it reads, the collection's records (a
   * delete) or every record's row (an index build: a partial index is built by a scan of the whole table).
   */
  heavy<T>(scope: { collection: string; reads: 'collection' | 'table' }, transaction: boolean, work: (db: Kysely<Tables>) => Promise<T>): Promise<T>;
  /** Liveness of the connection, for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Held by a change of one collection's schema (create, PATCH, delete) for its whole course: the index builds, the
   * commit and the drops after it, which are separate steps (PostgreSQL builds and drops an index concurrently, outside
   * any transaction). Index names are derived from collection and field, so two changes at once acted on each other's
   * indexes: the loser of two PATCHes dropped the index the winner's committed schema named. Nothing else takes it:
   * record writes and reads go on. Null at once, without waiting, when another change of that collection holds it,
   * in this process or (PostgreSQL) another; the returned function lets go.
   */
  schemaChange(collection: string): Promise<(() => Promise<void>) | null>;
  /**
   * Held while migrations are applied, so that two processes starting on a new database at once apply each migration
   * once: SQLite runs Kysely's migrations outside a transaction and with no lock of its own (PostgreSQL's migrator
   * takes an advisory lock: there this is absent). `onWait` is called once if another process holds it.
   */
  migrationLock?(onWait: () => void): Promise<() => void>;
}
