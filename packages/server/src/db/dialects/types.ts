import type { Kysely, RawBuilder } from 'kysely';
import type { Tables } from '../tables.js';

/**
 * What differs between SQLite and PostgreSQL, as capabilities. Everything outside src/db/dialects asks
 * these questions instead of comparing dialect names.
 */
export interface DialectCapabilities {
  /** For logs and metrics labels only. */
  readonly name: 'sqlite' | 'postgres';
  /** `FOR UPDATE SKIP LOCKED` exists, so many workers can claim concurrently without contention. */
  readonly skipLocked: boolean;
  /**
   * `WITH … UPDATE … RETURNING` feeding another statement, and arrays as parameters (`unnest`): a batch of
   * transitions and their attempt rows is one statement. Without it, the batch travels as one JSON parameter.
   */
  readonly dataModifyingWith: boolean;
  /**
   * The feed's position of an event written in this transaction, as two columns ordered together: `tx` (the writing
   * transaction on PostgreSQL, 0 on SQLite) and `position` (a counter). See docs/event-feed.md for why two.
   */
  eventPosition(): { tx: RawBuilder<number>; position: RawBuilder<number> };
  /**
   * Events whose `tx` is below this have committed or never will, so none can appear later below it: the feed
   * reads only under it. On PostgreSQL the oldest transaction still running when the statement's snapshot was taken;
   * on SQLite (one writer, commits in order) anything above every `tx`.
   */
  feedHorizon(): RawBuilder<number>;
  /**
   * The event insert, made to also wake every process's feed readers when its transaction commits (PostgreSQL:
   * `pg_notify` in the same statement, no extra round trip); unchanged where in-process wake-ups after the commit do.
   */
  withFeedNotice(insert: RawBuilder<unknown>): RawBuilder<unknown>;
  /** Several processes may share this database (PostgreSQL), so in-process caches and wake-ups are not enough. */
  readonly sharedByProcesses: boolean;
  /** The database clock in Unix milliseconds: leases are timed by it, so workers on other hosts agree. */
  nowMs(): RawBuilder<number>;
  isUniqueViolation(error: unknown): boolean;
  /**
   * The schema svc's tables live in, when the database has schemas. Kysely's migrator looks for its own tables by
   * name across every schema, so it must be told which one is ours.
   */
  currentSchema(db: Kysely<Tables>): Promise<string | undefined>;
}

/** Wake-ups for workers when jobs are committed: LISTEN/NOTIFY on PostgreSQL, an in-process emitter on SQLite. */
export interface JobSignal {
  notify(): Promise<void>;
  subscribe(listener: () => void): Promise<() => Promise<void>>;
}

export interface Database {
  readonly db: Kysely<Tables>;
  readonly caps: DialectCapabilities;
  readonly signal: JobSignal;
  /** Wake-ups for feed readers (long-polls, streams) when events commit: its own channel, so workers are not woken. */
  readonly events: JobSignal;
  /**
   * A write transaction for the request path. On SQLite the ones that arrive together share one commit (see
   * group-commit.ts); on PostgreSQL it is a plain transaction (the server overlaps concurrent commits itself).
   */
  write<T>(work: (trx: Kysely<Tables>) => Promise<T>): Promise<T>;
  /** Liveness of the connection, for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
