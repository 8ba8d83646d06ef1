import type { ClaimOutcome, DedupeStore } from './dedupe-store.js';

/**
 * What the store needs of a database client: a `pg.Pool` (the intended argument), `pg.Client`, or anything with the
 * same `query`. Duck-typed so svc-sdk carries no dependency on `pg`.
 */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rowCount: number | null; rows: Array<Record<string, unknown>> }>;
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

const expiresIn = (param: string) => `now() + make_interval(secs => ${param}::double precision)`;

/**
 * A `DedupeStore` shared by every process using the same PostgreSQL database: one row per delivery id, each method one
 * statement. The primary key makes concurrent statements on an id queue behind each other, and each of them decides
 * from the row as the previous one left it.
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

  /**
   * Creates the table if it does not exist, and upgrades a table of svc-sdk 0.1 in place; safe to call at every
   * start. Rows 0.1 wrote count as done until they expire, which is what 0.1 made of them.
   */
  async ensureSchema(): Promise<void> {
    await this.#db.query(
      `CREATE TABLE IF NOT EXISTS ${this.#table} (id text PRIMARY KEY, expires_at timestamptz NOT NULL)`,
    );
    // ALTER TABLE locks the table even when there is nothing to add, so it runs only when a column is missing.
    const { rows } = await this.#db.query(
      `SELECT count(*)::int AS n FROM pg_attribute
       WHERE attrelid = to_regclass($1) AND attname IN ('state', 'token') AND NOT attisdropped`,
      [this.#table],
    );
    if (rows[0]?.n !== 2) {
      await this.#db.query(
        `ALTER TABLE ${this.#table}
           ADD COLUMN IF NOT EXISTS state text NOT NULL DEFAULT 'done' CHECK (state IN ('in_progress', 'done')),
           ADD COLUMN IF NOT EXISTS token text NOT NULL DEFAULT ''`,
      );
    }
    await this.#db.query(`CREATE INDEX IF NOT EXISTS ${this.#index} ON ${this.#table} (expires_at)`);
  }

  /**
   * Takes the row when it is absent or expired. On a live row the update writes the row back unchanged rather than
   * being skipped by a WHERE: that way RETURNING always yields the row, locked and current, so the outcome comes from
   * the same statement instead of a second read that a concurrent release or expiry could overtake.
   */
  async claim(id: string, token: string, inProgressTtlSeconds: number): Promise<ClaimOutcome> {
    const taken = 'd.expires_at <= now()';
    const { rows } = await this.#db.query(
      `INSERT INTO ${this.#table} AS d (id, expires_at, state, token)
       VALUES ($1, ${expiresIn('$3')}, 'in_progress', $2)
       ON CONFLICT (id) DO UPDATE SET
         expires_at = CASE WHEN ${taken} THEN excluded.expires_at ELSE d.expires_at END,
         state = CASE WHEN ${taken} THEN excluded.state ELSE d.state END,
         token = CASE WHEN ${taken} THEN excluded.token ELSE d.token END
       RETURNING d.token = $2 AS mine, d.state`,
      [id, token, inProgressTtlSeconds],
    );
    const row = rows[0];
    if (!row) throw new Error('PostgresDedupeStore: the claim returned no row');
    return row.mine === true ? 'claimed' : row.state === 'done' ? 'done' : 'in_progress';
  }

  async complete(id: string, token: string, doneTtlSeconds: number): Promise<boolean> {
    const result = await this.#db.query(
      `INSERT INTO ${this.#table} AS d (id, expires_at, state, token)
       VALUES ($1, ${expiresIn('$3')}, 'done', $2)
       ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, state = 'done', token = excluded.token
       WHERE (d.state = 'in_progress' AND d.token = excluded.token) OR d.expires_at <= now()`,
      [id, token, doneTtlSeconds],
    );
    return result.rowCount === 1;
  }

  async release(id: string, token: string): Promise<boolean> {
    const result = await this.#db.query(
      `DELETE FROM ${this.#table} WHERE id = $1 AND state = 'in_progress' AND token = $2`,
      [id, token],
    );
    return result.rowCount === 1;
  }

  /** Deletes expired rows and returns how many; run it now and then (claims never need it to be correct). */
  async deleteExpired(): Promise<number> {
    const result = await this.#db.query(`DELETE FROM ${this.#table} WHERE expires_at < now()`);
    return result.rowCount ?? 0;
  }
}
