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
  /**
   * A write transaction for the request path. On SQLite the ones that arrive together share one commit (see
   * group-commit.ts); on PostgreSQL it is a plain transaction (the server overlaps concurrent commits itself).
   */
  write<T>(work: (trx: Kysely<Tables>) => Promise<T>): Promise<T>;
  /** Liveness of the connection, for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
