import { deleteExpiredSessions } from './auth/sessions-store.js';
import { pruneLoginFailures } from './auth/login-limit-store.js';
import type { Context } from './context.js';
import { pruneIdempotencyKeys } from './records/idempotency-store.js';
import { eraseExpiredPreviousSecrets } from './webhooks/targets-store.js';

// Every minute, so an expired previous secret is erased within a minute of its overlap ending rather than lingering
// for up to ten. That is cheap: a few deletes and one update of the (small) targets table, which usually match no rows.
const EVERY_MS = 60_000;

/**
 * Housekeeping in every API process: expired sessions, idempotency keys past 24 h, old login failures, and previous
 * webhook secrets whose overlap has ended.
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

export function startMaintenance(ctx: Context): () => void {
  const run = () => void pruneExpired(ctx).catch((err: unknown) => ctx.logger.warn({ err }, 'maintenance failed; it runs again later'));
  const timer = setInterval(run, EVERY_MS);
  timer.unref();
  run();
  return () => clearInterval(timer);
}
