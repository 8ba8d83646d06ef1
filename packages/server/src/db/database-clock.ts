import { sql } from 'kysely';
import type { Clock } from '../lib/clock.js';
import type { Database } from './dialects/types.js';

const RESYNC_MS = 60_000;

/**
 * The process clock, corrected by its offset from the database server's clock. Leases and due times are written by
 * every process sharing a PostgreSQL database, each with its own clock: anchored to one server's, they agree across
 * hosts to within a round trip, without a database call per reading. The offset is measured at start and again, in
 * the background, at most once a minute (a failed measurement keeps the last one).
 */
export async function databaseClock(database: Database, local: () => number = Date.now): Promise<Clock> {
  let offset = 0;
  let measuredAt = -Infinity;
  let measuring: Promise<void> | null = null;
  const measure = async (): Promise<void> => {
    const before = local();
    const row = await sql<{ now: number | string }>`select ${database.caps.nowMs()} as now`.execute(database.db);
    const after = local();
    // The server read its clock somewhere in the round trip; the middle is the best guess.
    offset = Number(row.rows[0]!.now) - (before + after) / 2;
    measuredAt = after;
  };
  await measure();
  return {
    now() {
      const t = local();
      if (t - measuredAt > RESYNC_MS && !measuring) {
        measuredAt = t;
        measuring = measure()
          .catch(() => {})
          .finally(() => (measuring = null));
      }
      return Math.round(t + offset);
    },
  };
}
