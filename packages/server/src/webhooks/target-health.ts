import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { ownTurn } from '../lib/turns.js';
import { countsByHour, countsByTargetHour, durationAtRank, durationsAtRanks, HOUR_MS, type HourCounts, type TargetsWindow, type Window } from './attempt-stats-store.js';

/**
 * A target's health over a window ending now (SPEC §10): attempts, success rate, latency percentiles, the last
 * success and failure, and hourly buckets aligned to the hour (the first may start before `since`; only attempts
 * from `since` on are counted). Latency is every attempt's duration, failures included: a receiver that times out
 * is slow, not absent. With no attempts, the rate, latencies and times are null and every bucket is zero.
 */
export interface TargetHealth {
  attempts: { total: number; succeeded: number; failed: number };
  successRate: number | null;
  latencyMs: { p50: number | null; p95: number | null };
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  buckets: Array<{ start: number; succeeded: number; failed: number }>;
}

export const DEFAULT_HEALTH_WINDOW_MS = 24 * HOUR_MS;
export const MAX_HEALTH_WINDOW_MS = 7 * 24 * HOUR_MS;

/** Nearest-rank: the smallest value with at least p of the values at or below it. */
export const nearestRank = (p: number, n: number): number => Math.max(1, Math.ceil(p * n));

/**
 * Statements over more attempts than this are read where a sort after the read cannot hold the event loop
 * (Database.offMain: on SQLite a reader thread from the start). SQLite's main connection checks its budget only as rows
 * are read; a sort after the read (by duration, by target and hour) ran there to its end: sorting 10,000 rows takes a
 * few ms, a page of the overview's 250,000 held the loop 100-170 ms.
 */
export const OFF_MAIN_ATTEMPTS = 10_000;

/**
 * One target's health. `offMain` is where the durations' sorts run once the hours have counted more than
 * OFF_MAIN_ATTEMPTS attempts (each sorts every attempt of the window by duration).
 */
export async function targetHealth(
  db: Kysely<Tables>,
  opts: { webhookId: string; since: number; now: number; rowCheck?: string | null },
  offMain: Kysely<Tables> = db,
): Promise<TargetHealth> {
  const w: Window = { webhookId: opts.webhookId, from: opts.since, to: opts.now, rowCheck: opts.rowCheck ?? null };
  const hours = await countsByHour(db, w);
  const total = hours.reduce((n, h) => n + h.succeeded + h.failed, 0);
  const ranks = total > OFF_MAIN_ATTEMPTS ? offMain : db;
  const [p50, p95] = total === 0 ? [null, null] : await Promise.all([durationAtRank(ranks, w, nearestRank(0.5, total)), durationAtRank(ranks, w, nearestRank(0.95, total))]);
  return health(hours, p50, p95, opts);
}

/**
 * The most hourly buckets the health overview reads and builds in one turn of the event loop: its targets' hours are
 * read in chunks of targets of at most this many buckets (5 targets of a week, 40 of a day), each chunk's rows built
 * into health and handed on before the next is read, in a turn of its own (ownTurn). In one piece, a page of 10,000
 * buckets held the loop 80-180 ms on a loaded 2-core machine (its rows arriving from a reader thread at once, then
 * built and serialised at once); a chunk of 1,000 takes a few ms.
 */
export const CHUNK_BUCKETS = 1_000;

/**
 * The health of a page of targets over one window (GET /admin/v1/webhooks/stats), each exactly what targetHealth
 * answers for it, a chunk of targets at a time (CHUNK_BUCKETS), in their order: the durations at each target's two
 * ranks in one statement for the page, the attempts by target and hour in one statement a chunk. Every id asked for
 * is in the answer (without attempts: zeros and nulls).
 */
export async function* targetsHealth(
  db: Kysely<Tables>,
  opts: { webhookIds: readonly string[]; since: number; now: number; rowCheck?: string | null },
): AsyncGenerator<Array<[string, TargetHealth]>> {
  const w: TargetsWindow = { webhookIds: opts.webhookIds, from: opts.since, to: opts.now, rowCheck: opts.rowCheck ?? null };
  // The page's sort by duration runs beside its first chunks (a second connection or reader thread), as before.
  const ranked = durationsAtRanks(db, w);
  ranked.catch(() => {});
  let percentiles: Map<string, { p50: number | null; p95: number | null }> | null = null;
  const hours = Math.floor(opts.now / HOUR_MS) - Math.floor(opts.since / HOUR_MS) + 1;
  const per = Math.max(1, Math.floor(CHUNK_BUCKETS / hours));
  for (let i = 0; i < opts.webhookIds.length; i += per) {
    // Its own turn: on SQLite's main connection the statement before ran in this one (and its rows were built here).
    if (i > 0) await ownTurn();
    const ids = opts.webhookIds.slice(i, i + per);
    const hoursOf = new Map<string, HourCounts[]>();
    for (const h of await countsByTargetHour(db, { ...w, webhookIds: ids })) {
      const list = hoursOf.get(h.webhookId);
      if (list) list.push(h);
      else hoursOf.set(h.webhookId, [h]);
    }
    percentiles ??= byTarget(await ranked);
    const p = percentiles;
    yield ids.map((id) => {
      const at = p.get(id);
      return [id, health(hoursOf.get(id) ?? [], at?.p50 ?? null, at?.p95 ?? null, opts)];
    });
  }
}

/** Each target's p50 and p95 from the durations at its two ranks. */
function byTarget(ranked: ReadonlyArray<{ webhookId: string; rank: number; count: number; durationMs: number }>): Map<string, { p50: number | null; p95: number | null }> {
  const out = new Map<string, { p50: number | null; p95: number | null }>();
  for (const r of ranked) {
    const p = out.get(r.webhookId) ?? { p50: null, p95: null };
    if (r.rank === nearestRank(0.5, r.count)) p.p50 = r.durationMs;
    if (r.rank === nearestRank(0.95, r.count)) p.p95 = r.durationMs;
    out.set(r.webhookId, p);
  }
  return out;
}

/** A target's health from its window's hours and the durations at its two ranks. */
function health(hourList: readonly HourCounts[], p50: number | null, p95: number | null, window: { since: number; now: number }): TargetHealth {
  const hours = new Map(hourList.map((h) => [h.hour, h]));
  const buckets: TargetHealth['buckets'] = [];
  for (let start = Math.floor(window.since / HOUR_MS) * HOUR_MS; start <= window.now; start += HOUR_MS) {
    const h = hours.get(start);
    buckets.push({ start, succeeded: h?.succeeded ?? 0, failed: h?.failed ?? 0 });
  }
  let succeeded = 0;
  let failed = 0;
  let lastSuccessAt: number | null = null;
  let lastFailureAt: number | null = null;
  for (const h of hours.values()) {
    succeeded += h.succeeded;
    failed += h.failed;
    if (h.lastSuccessAt !== null) lastSuccessAt = Math.max(lastSuccessAt ?? 0, h.lastSuccessAt);
    if (h.lastFailureAt !== null) lastFailureAt = Math.max(lastFailureAt ?? 0, h.lastFailureAt);
  }
  const total = succeeded + failed;
  return {
    attempts: { total, succeeded, failed },
    successRate: total === 0 ? null : succeeded / total,
    latencyMs: total === 0 ? { p50: null, p95: null } : { p50, p95 },
    lastSuccessAt,
    lastFailureAt,
    buckets,
  };
}
