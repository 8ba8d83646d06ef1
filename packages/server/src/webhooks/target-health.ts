import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { countsByHour, durationAtRank, HOUR_MS, type Window } from './attempt-stats-store.js';

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

export async function targetHealth(db: Kysely<Tables>, opts: { webhookId: string; since: number; now: number; rowCheck?: string | null }): Promise<TargetHealth> {
  const w: Window = { webhookId: opts.webhookId, from: opts.since, to: opts.now, rowCheck: opts.rowCheck ?? null };
  const hours = new Map((await countsByHour(db, w)).map((h) => [h.hour, h]));
  const buckets: TargetHealth['buckets'] = [];
  for (let start = Math.floor(opts.since / HOUR_MS) * HOUR_MS; start <= opts.now; start += HOUR_MS) {
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
  const [p50, p95] = total === 0 ? [null, null] : await Promise.all([durationAtRank(db, w, nearestRank(0.5, total)), durationAtRank(db, w, nearestRank(0.95, total))]);
  return {
    attempts: { total, succeeded, failed },
    successRate: total === 0 ? null : succeeded / total,
    latencyMs: { p50, p95 },
    lastSuccessAt,
    lastFailureAt,
    buckets,
  };
}
