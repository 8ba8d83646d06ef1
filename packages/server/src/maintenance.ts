import { sql } from 'kysely';
import { deleteExpiredSessions } from './auth/sessions-store.js';
import { pruneLoginFailures } from './auth/login-limit-store.js';
import type { Context } from './context.js';
import { pruneIdempotencyKeys } from './records/idempotency-store.js';
import { eraseExpiredPreviousSecrets } from './webhooks/targets-store.js';

// Every minute, so an expired previous secret is erased within a minute of its overlap ending rather than lingering
// for up to ten. That is cheap: a few deletes and one update of the (small) targets table, which usually match no rows.
const EVERY_MS = 60_000;
/** Planner statistics change slowly: an hour between refreshes. */
const STATISTICS_EVERY_MS = 3_600_000;

/**
 * Housekeeping in every API process: expired sessions, idempotency keys past 24 h, old login failures, and previous
 * webhook secrets whose overlap has ended (every minute); planner statistics (every hour, refreshStatistics).
 */
export async function pruneExpired(ctx: Context): Promise<void> {
  const now = ctx.clock.now();
  const { db } = ctx.database;
  const sessions = await deleteExpiredSessions(db, now, ctx.config.sessionIdleMinutes * 60_000);
  const keys = await pruneIdempotencyKeys(db, now);
  await pruneLoginFailures(db, now - 15 * 60_000);
  const previousSecrets = await eraseExpiredPreviousSecrets(db, now);
  if (sessions + keys + previousSecrets > 0) ctx.logger.debug({ sessions, idempotencyKeys: keys, previousSecrets }, 'pruned expired rows');
}

/**
 * Keeps the planner's statistics current as collections grow (the dialect's refreshStatistics). Without it a SQLite
 * collection analyzed when it was small may have a filtered page on one indexed field sorted by another read the
 * filter's index and sort, instead of walking the sort's index (docs/queries.md).
 */
export async function refreshStatistics(ctx: Context): Promise<void> {
  for (const statement of ctx.database.caps.query.refreshStatistics) await sql.raw(statement).execute(ctx.database.db);
}

export function startMaintenance(ctx: Context): () => void {
  let statisticsAt = -Infinity;
  const run = () =>
    void (async () => {
      await pruneExpired(ctx);
      if (ctx.clock.now() - statisticsAt >= STATISTICS_EVERY_MS) {
        statisticsAt = ctx.clock.now();
        await refreshStatistics(ctx);
      }
    })().catch((err: unknown) => ctx.logger.warn({ err }, 'maintenance failed; it runs again later'));
  const timer = setInterval(run, EVERY_MS);
  timer.unref();
  run();
  return () => clearInterval(timer);
}
