import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { DeliveryJobsTable, JobState, Tables } from '../../db/tables.js';
import { idFloorAt } from '../../lib/ids.js';
import { envelopeOf } from '../envelope.js';

/** Reads of the queue for the admin API and metrics; transitions live in their own files. */

export async function listJobs(
  db: Kysely<Tables>,
  filter: { webhookId?: string; state?: JobState },
  afterId: string | null,
  limit: number,
): Promise<DeliveryJobsTable[]> {
  return listJobsQuery(db, filter, afterId, limit).execute();
}

/** The query alone, so its plan can be checked. */
export function listJobsQuery(db: Kysely<Tables>, filter: { webhookId?: string; state?: JobState }, afterId: string | null, limit: number) {
  let q = db.selectFrom('delivery_jobs').selectAll().orderBy('id', 'desc').limit(limit);
  if (filter.webhookId) q = q.where('webhook_id', '=', filter.webhookId);
  // A literal (one of four validated states): the partial indexes of migration 003 then apply on both databases.
  if (filter.state === 'pending') q = q.where(sql<boolean>`state in ('pending', 'held')`);
  else if (filter.state) q = q.where('state', '=', sql.lit(filter.state));
  if (afterId) q = q.where('id', '<', afterId);
  return q;
}

/** The exact bytes a job sends: built from the job and its event's payload, as a claim builds them. */
export async function findEnvelope(db: Kysely<Tables>, job: DeliveryJobsTable): Promise<string> {
  const event = await db.selectFrom('events').select('payload').where('id', '=', job.event_id).executeTakeFirst();
  return envelopeOf(job, event?.payload ?? 'null');
}

export async function findJob(db: Kysely<Tables>, id: string): Promise<DeliveryJobsTable | null> {
  return (await db.selectFrom('delivery_jobs').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/**
 * Jobs waiting and in flight, and how long the oldest due job has waited: one statement, answered from the partial
 * indexes of unfinished jobs (migration 003), so its cost follows the backlog, never the history of delivered jobs.
 */
export async function queueStats(db: Kysely<Tables>, caps: DialectCapabilities): Promise<{ byState: Record<string, number>; oldestDueAgeMs: number }> {
  const row = await queueStatsStatement(db, caps).executeTakeFirstOrThrow();
  const byState: Record<string, number> = {};
  if (Number(row.pending) > 0) byState.pending = Number(row.pending);
  if (Number(row.delivering) > 0) byState.delivering = Number(row.delivering);
  const due = row.due === null || row.due === undefined ? null : Number(row.due);
  return { byState, oldestDueAgeMs: due === null ? 0 : Math.max(0, Number(row.now) - due) };
}

/** The statement alone, so its query plan can be checked. */
export function queueStatsStatement(db: Kysely<Tables>, caps: DialectCapabilities) {
  // States as literals, so both databases can prove the partial indexes of migration 003 apply.
  return db.selectNoFrom((eb) => [
    eb.selectFrom('delivery_jobs').select(eb.fn.countAll<number>().as('n')).where('state', '=', sql.lit('pending')).as('pending'),
    eb.selectFrom('delivery_jobs').select(eb.fn.countAll<number>().as('n')).where('state', '=', sql.lit('delivering')).as('delivering'),
    eb.selectFrom('delivery_jobs').select((s) => s.fn.min('next_attempt_at').as('due')).where('state', '=', sql.lit('pending')).as('due'),
    caps.nowMs().as('now'),
  ]);
}

/** What prune() would remove now, all batches together (`svc prune --dry-run`). */
export async function countPrunable(db: Kysely<Tables>, opts: { state: 'delivered' | 'dead'; before: number }): Promise<{ jobs: number; attempts: number }> {
  const old = db.selectFrom('delivery_jobs').select('id').where('state', '=', sql.lit(opts.state)).where('updated_at', '<', opts.before);
  const jobs = await db.selectFrom(old.as('j')).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const attempts = await db.selectFrom('delivery_attempts').select((eb) => eb.fn.countAll<number>().as('n')).where('job_id', 'in', old).executeTakeFirstOrThrow();
  return { jobs: Number(jobs.n), attempts: Number(attempts.n) };
}

/**
 * The id `scan` dead jobs into a recovery's walk (after `afterId`, or from the window's start `from`; job ids sort by
 * creation time): recoverDead's slice is (start, that id], so no statement of a recovery walks more than `scan`
 * entries of the dead jobs' partial index (migration 003), however many other targets' dead jobs lie in the window.
 * Null when fewer are left.
 */
export async function deadScanEnd(db: Kysely<Tables>, opts: { from: number; afterId: string | null }, scan: number): Promise<string | null> {
  // One lower bound (recover-dead.ts says why).
  const q = db.selectFrom('delivery_jobs').select('id').where('state', '=', sql.lit('dead')).where('id', opts.afterId === null ? '>=' : '>', opts.afterId ?? idFloorAt('del', opts.from));
  const row = await q.orderBy('id').limit(1).offset(scan - 1).executeTakeFirst();
  return row?.id ?? null;
}
