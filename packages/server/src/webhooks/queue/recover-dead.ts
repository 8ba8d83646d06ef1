import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import { idFloorAt } from '../../lib/ids.js';
import { promoteHeld } from './promote-held.js';
import { reviveDead } from './retry-dead.js';

/**
 * dead → pending, for up to `limit` dead jobs of one target created within [from, to]: each gets one more full round
 * of the schedule, exactly as retryDead gives one job (round_start = attempt_count; numbering continues). Only while
 * the target is not deleted. One guarded statement per batch, so a recovery of thousands of jobs never holds one
 * long lock; the caller repeats it, each batch in a transaction, either until a batch comes back short or over
 * consecutive slices of the dead jobs' index (afterId, throughId), so that no batch walks past other targets' dead
 * jobs without bound. Returns how many jobs it sent back.
 *
 * For a target that orders by record they come back `held` (dead → held), as retryDead's do, and promoteHeld then
 * releases the oldest of each record that has no unfinished job: a record's recovered jobs go out one after another.
 */
export async function recoverDead(...args: Parameters<typeof recoverDeadJobs>): Promise<number> {
  return (await recoverDeadJobs(...args)).length;
}

/** recoverDead, answering the ids of the jobs it sent back (the caller resumes its walk after the greatest). */
export async function recoverDeadJobs(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: {
    now: number;
    webhookId: string;
    from: number;
    to: number;
    firstDelayMs: number;
    limit: number;
    /** A slice of the dead jobs' index, (afterId, throughId] (jobs-store.ts deadScanEnd); null: unbounded on that side. */
    afterId?: string | null;
    throughId?: string | null;
  },
): Promise<string[]> {
  const { now, webhookId, from, to, limit } = opts;
  // Job ids sort by creation time: the lower bound starts the walk of the dead jobs' partial index (migration 003) at
  // the window, or at the slice, not at the oldest dead job. One lower bound, never two: SQLite ranges the scan on
  // one of them and filters by the other, so each slice would walk again from the window's start.
  const afterId = opts.afterId ?? null;
  let batch = db
    .selectFrom('delivery_jobs')
    .select('id')
    .where('state', '=', sql.lit('dead'))
    .where('id', afterId === null ? '>=' : '>', afterId ?? idFloorAt('del', from))
    .where('webhook_id', '=', webhookId)
    .where('created_at', '>=', from)
    .where('created_at', '<=', to)
    .orderBy('id')
    .limit(limit);
  if (opts.throughId != null) batch = batch.where('id', '<=', opts.throughId);
  const res = await reviveDead(db, opts).where('id', 'in', batch).returning('id').execute();
  await promoteHeld(db, caps, { now, after: res.map((r) => r.id) });
  return res.map((r) => r.id);
}
