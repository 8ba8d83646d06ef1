import { sql, type Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';

/**
 * Reads of one target's attempts within a time window, for its health (SPEC §10). An attempt is a row of
 * `delivery_attempts_rows` (failures; successes recorded before migration 020 or by older processes) or the success
 * a delivered job holds on its row (020): every query reads the window of both, a range of
 * `delivery_attempts_webhook_time` (webhook_id, started_at; migration 008) and one of `delivery_jobs_success_time`
 * (webhook_id, success_started_at; 020), never the history. A succeeded attempt is one recorded without an error (a
 * 2xx); every other recorded attempt failed.
 */

export const HOUR_MS = 3_600_000;

export interface Window {
  webhookId: string;
  /** Inclusive bounds, Unix ms. */
  from: number;
  to: number;
  /**
   * The records queries' row check (QueryDialect.rowCheck), for reads run where they run (Database.queries): on
   * SQLite it lets the main connection hand a long read to a reader thread, and a reader past the timeout stop.
   */
  rowCheck?: string | null;
}

export interface HourCounts {
  /** The hour's start, Unix ms. */
  hour: number;
  succeeded: number;
  failed: number;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
}

/**
 * The window's attempts (start, duration, error code) as one derived table. Spelled out rather than read through the
 * view `delivery_attempts`, so each half's bounds are written on its own index's columns (and SQLite's plan names
 * the halves, not a scan of the view).
 */
const inWindow = (db: Kysely<Tables>, w: Window) =>
  db.selectFrom(
    db
      .selectFrom('delivery_attempts_rows')
      .select(['started_at', 'duration_ms', 'error_code'])
      .where('webhook_id', '=', w.webhookId)
      .where('started_at', '>=', w.from)
      .where('started_at', '<=', w.to)
      .$if(Boolean(w.rowCheck), (q) => q.where(sql.raw<boolean>(w.rowCheck!)))
      .unionAll(
        db
          .selectFrom('delivery_jobs')
          .select([sql<number>`success_started_at`.as('started_at'), sql<number>`success_duration_ms`.as('duration_ms'), sql<string | null>`cast(null as text)`.as('error_code')])
          .where('webhook_id', '=', w.webhookId)
          .where('success_started_at', '>=', w.from)
          .where('success_started_at', '<=', w.to)
          .$if(Boolean(w.rowCheck), (q) => q.where(sql.raw<boolean>(w.rowCheck!))),
      )
      .as('attempt'),
  );

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Attempts per hour of the window (hours without attempts are absent); integer division on both databases. */
export async function countsByHour(db: Kysely<Tables>, w: Window): Promise<HourCounts[]> {
  const rows = await countsByHourQuery(db, w).execute();
  return rows.map((r) => ({
    hour: Number(r.hour) * HOUR_MS,
    succeeded: Number(r.succeeded),
    failed: Number(r.total) - Number(r.succeeded),
    lastSuccessAt: num(r.last_success),
    lastFailureAt: num(r.last_failure),
  }));
}

/** The statement alone, so its plan can be checked. */
export function countsByHourQuery(db: Kysely<Tables>, w: Window) {
  // The divisor is a literal so the grouped expression and the selected one are the same text on PostgreSQL.
  const hour = sql<number>`started_at / ${sql.lit(HOUR_MS)}`;
  const ok = sql`error_code is null`;
  return inWindow(db, w)
    .select([
      hour.as('hour'),
      sql<number>`count(*)`.as('total'),
      sql<number>`sum(case when ${ok} then 1 else 0 end)`.as('succeeded'),
      sql<number | null>`max(case when ${ok} then started_at end)`.as('last_success'),
      sql<number | null>`max(case when ${ok} then null else started_at end)`.as('last_failure'),
    ])
    .groupBy(hour);
}

/**
 * The duration at 1-based `rank` of the window's attempts ordered by duration (nearest-rank percentiles): the same
 * integer comparison and row on both databases, where their own percentile functions differ or are missing.
 */
export async function durationAtRank(db: Kysely<Tables>, w: Window, rank: number): Promise<number | null> {
  const row = await durationAtRankQuery(db, w, rank).executeTakeFirst();
  return row ? Number(row.duration_ms) : null;
}

export const durationAtRankQuery = (db: Kysely<Tables>, w: Window, rank: number) =>
  inWindow(db, w).select('duration_ms').orderBy('duration_ms').limit(1).offset(rank - 1);
