import { deleteExpiredSessions } from './auth/sessions-store.js';
import { pruneLoginFailures } from './auth/login-limit-store.js';
import type { Context } from './context.js';
import { pruneIdempotencyKeys } from './records/idempotency-store.js';

const EVERY_MS = 10 * 60_000;

/** Housekeeping in every API process: expired sessions, idempotency keys past 24 h, old login failures. */
export async function pruneExpired(ctx: Context): Promise<void> {
  const now = ctx.clock.now();
  const { db } = ctx.database;
  const sessions = await deleteExpiredSessions(db, now, ctx.config.sessionIdleMinutes * 60_000);
  const keys = await pruneIdempotencyKeys(db, now);
  await pruneLoginFailures(db, now - 15 * 60_000);
  if (sessions + keys > 0) ctx.logger.debug({ sessions, idempotencyKeys: keys }, 'pruned expired rows');
}

export function startMaintenance(ctx: Context): () => void {
  const run = () => void pruneExpired(ctx).catch((err: unknown) => ctx.logger.warn({ err }, 'maintenance failed; it runs again later'));
  const timer = setInterval(run, EVERY_MS);
  timer.unref();
  run();
  return () => clearInterval(timer);
}
