import type { DedupeStore } from './dedupe-store.js';

/**
 * What the store needs of a database client: a `pg.Pool` (the intended argument), `pg.Client`, or anything with the
 * same `query`. Duck-typed so svc-sdk carries no dependency on `pg`.
 */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rowCount: number | null }>;
}

export interface PostgresDedupeStoreOptions {
  /** Table name, optionally schema-qualified (`receiver.svc_webhook_deliveries`). */
  table?: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

function quotedTable(name: string): { sql: string; bare: string } {
  const parts = name.split('.');
  if (parts.length > 2 || !parts.every((p) => IDENTIFIER.test(p))) {
    throw new TypeError(`invalid table name: ${JSON.stringify(name)}`);
  }
  return { sql: parts.map((p) => `"${p}"`).join('.'), bare: parts[parts.length - 1]! };
}

/**
 * A `DedupeStore` shared by every process using the same PostgreSQL database. The claim is one
 * `INSERT … ON CONFLICT DO UPDATE … WHERE expired`: the unique key makes concurrent claims queue behind each other,
 * and only the one that inserted (or took over an expired row) sees a row count of 1.
 */
export class PostgresDedupeStore implements DedupeStore {
  readonly #db: Queryable;
  readonly #table: string;
  readonly #index: string;

  constructor(db: Queryable, options: PostgresDedupeStoreOptions = {}) {
    const { sql, bare } = quotedTable(options.table ?? 'svc_webhook_deliveries');
    this.#db = db;
    this.#table = sql;
    this.#index = `"${bare.slice(0, 48)}_expires_at_idx"`;
  }

  /** Creates the table if it does not exist; safe to call at every start. */
  async ensureSchema(): Promise<void> {
    await this.#db.query(
      `CREATE TABLE IF NOT EXISTS ${this.#table} (id text PRIMARY KEY, expires_at timestamptz NOT NULL)`,
    );
    await this.#db.query(`CREATE INDEX IF NOT EXISTS ${this.#index} ON ${this.#table} (expires_at)`);
  }

  async claim(id: string, ttlSeconds: number): Promise<boolean> {
    const result = await this.#db.query(
      `INSERT INTO ${this.#table} AS d (id, expires_at)
       VALUES ($1, now() + make_interval(secs => $2::double precision))
       ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at WHERE d.expires_at < now()`,
      [id, ttlSeconds],
    );
    return result.rowCount === 1;
  }

  async release(id: string): Promise<void> {
    await this.#db.query(`DELETE FROM ${this.#table} WHERE id = $1`, [id]);
  }

  /** Deletes expired rows and returns how many; run it now and then (claims never need it to be correct). */
  async deleteExpired(): Promise<number> {
    const result = await this.#db.query(`DELETE FROM ${this.#table} WHERE expires_at < now()`);
    return result.rowCount ?? 0;
  }
}
