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

/**
 * The same window for a page of targets at once (the health overview, GET /admin/v1/webhooks/stats): each half reads
 * one range of its index per target (`webhook_id in (…)` beside the bounds on the start), as the single-target reads
 * do, so a page costs what its targets' windows hold and nothing of other targets or of the history.
 */
export interface TargetsWindow extends Omit<Window, 'webhookId'> {
  webhookIds: readonly string[];
}

const inTargetsWindow = (db: Kysely<Tables>, w: TargetsWindow) =>
  db.selectFrom(
    db
      .selectFrom('delivery_attempts_rows')
      .select([sql<string>`webhook_id`.as('webhook_id'), 'started_at', 'duration_ms', 'error_code'])
      .where('webhook_id', 'in', w.webhookIds)
      .where('started_at', '>=', w.from)
      .where('started_at', '<=', w.to)
      .$if(Boolean(w.rowCheck), (q) => q.where(sql.raw<boolean>(w.rowCheck!)))
      .unionAll(
        db
          .selectFrom('delivery_jobs')
          .select([
            sql<string>`webhook_id`.as('webhook_id'),
            sql<number>`success_started_at`.as('started_at'),
            sql<number>`success_duration_ms`.as('duration_ms'),
            sql<string | null>`cast(null as text)`.as('error_code'),
          ])
          .where('webhook_id', 'in', w.webhookIds)
          .where('success_started_at', '>=', w.from)
          .where('success_started_at', '<=', w.to)
          .$if(Boolean(w.rowCheck), (q) => q.where(sql.raw<boolean>(w.rowCheck!))),
      )
      .as('attempt'),
  );

/**
 * How many attempts each target of the page has in the window (targets without any are absent): each half grouped
 * along its own index, so the count reads index entries only and sorts nothing.
 */
export async function attemptsPerTarget(db: Kysely<Tables>, w: TargetsWindow): Promise<Map<string, number>> {
  if (w.webhookIds.length === 0) return new Map();
  // The two tables named in the text, each read in its own part: a table kept in a value is what the state machine's
  // check cannot tell from a write (test/webhooks/state-machine.test.ts).
  const ids = sql.join(w.webhookIds);
  const check = w.rowCheck ? sql` and ${sql.raw(w.rowCheck)}` : sql``;
  const { rows } = await sql<{ webhook_id: string; n: number | string }>`
    select webhook_id, count(*) as n from delivery_attempts_rows
     where webhook_id in (${ids}) and started_at >= ${w.from} and started_at <= ${w.to}${check}
     group by webhook_id
    union all
    select webhook_id, count(*) as n from delivery_jobs
     where webhook_id in (${ids}) and success_started_at >= ${w.from} and success_started_at <= ${w.to}${check}
     group by webhook_id`.execute(db);
  const out = new Map<string, number>();
  for (const r of rows) out.set(r.webhook_id, (out.get(r.webhook_id) ?? 0) + Number(r.n));
  return out;
}

export interface TargetHourCounts extends HourCounts {
  webhookId: string;
}

/** Attempts per target and hour of the window, in one statement (pairs without attempts are absent). */
export async function countsByTargetHour(db: Kysely<Tables>, w: TargetsWindow): Promise<TargetHourCounts[]> {
  if (w.webhookIds.length === 0) return [];
  const rows = await countsByTargetHourQuery(db, w).execute();
  return rows.map((r) => ({
    webhookId: r.webhook_id,
    hour: Number(r.hour) * HOUR_MS,
    succeeded: Number(r.succeeded),
    failed: Number(r.total) - Number(r.succeeded),
    lastSuccessAt: num(r.last_success),
    lastFailureAt: num(r.last_failure),
  }));
}

export function countsByTargetHourQuery(db: Kysely<Tables>, w: TargetsWindow) {
  const hour = sql<number>`started_at / ${sql.lit(HOUR_MS)}`;
  const ok = sql`error_code is null`;
  return inTargetsWindow(db, w)
    .select([
      'webhook_id',
      hour.as('hour'),
      sql<number>`count(*)`.as('total'),
      sql<number>`sum(case when ${ok} then 1 else 0 end)`.as('succeeded'),
      sql<number | null>`max(case when ${ok} then started_at end)`.as('last_success'),
      sql<number | null>`max(case when ${ok} then null else started_at end)`.as('last_failure'),
    ])
    .groupBy(['webhook_id', hour]);
}

/**
 * Each target's durations at the nearest ranks of p50 and p95 (⌈0.5·n⌉ = (n+1)/2 and ⌈0.95·n⌉ = n − ⌊n/20⌋, in
 * integers), in one statement: the window's attempts numbered by duration within their target, as durationAtRank
 * orders them, and only the rows at those ranks returned (one or two a target). The rank and count come from one
 * window definition, so each database sorts the page's attempts once.
 */
export async function durationsAtRanks(db: Kysely<Tables>, w: TargetsWindow): Promise<Array<{ webhookId: string; rank: number; count: number; durationMs: number }>> {
  if (w.webhookIds.length === 0) return [];
  const rows = await durationsAtRanksQuery(db, w).execute();
  return rows.map((r) => ({ webhookId: r.webhook_id, rank: Number(r.rn), count: Number(r.n), durationMs: Number(r.duration_ms) }));
}

export function durationsAtRanksQuery(db: Kysely<Tables>, w: TargetsWindow) {
  const byDuration = sql`partition by webhook_id order by duration_ms rows between unbounded preceding and unbounded following`;
  const ranked = inTargetsWindow(db, w)
    .select([
      'webhook_id',
      'duration_ms',
      sql<number>`row_number() over (${byDuration})`.as('rn'),
      sql<number>`count(*) over (${byDuration})`.as('n'),
    ])
    .as('ranked');
  return db
    .selectFrom(ranked)
    .select(['webhook_id', 'duration_ms', 'rn', 'n'])
    .where(sql<boolean>`rn = (n + 1) / 2 or rn = n - n / 20`);
}
