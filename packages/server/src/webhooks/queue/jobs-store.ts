import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { DeliveryJobsTable, JobState, Tables } from '../../db/tables.js';

/** Reads of the queue for the admin API and metrics; transitions live in their own files. */

export async function listJobs(
  db: Kysely<Tables>,
  filter: { webhookId?: string; state?: JobState },
  afterId: string | null,
  limit: number,
): Promise<DeliveryJobsTable[]> {
  let q = db.selectFrom('delivery_jobs').selectAll().orderBy('id', 'desc').limit(limit);
  if (filter.webhookId) q = q.where('webhook_id', '=', filter.webhookId);
  if (filter.state) q = q.where('state', '=', filter.state);
  if (afterId) q = q.where('id', '<', afterId);
  return q.execute();
}

export async function findJob(db: Kysely<Tables>, id: string): Promise<DeliveryJobsTable | null> {
  return (await db.selectFrom('delivery_jobs').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

export async function queueStats(db: Kysely<Tables>, caps: DialectCapabilities): Promise<{ byState: Record<string, number>; oldestDueAgeMs: number }> {
  const rows = await db.selectFrom('delivery_jobs').select(['state', (eb) => eb.fn.countAll<number>().as('n')]).where('state', 'in', ['pending', 'delivering']).groupBy('state').execute();
  const oldest = await db
    .selectFrom('delivery_jobs')
    .select([(eb) => eb.fn.min('next_attempt_at').as('due'), caps.nowMs().as('now')])
    .where('state', '=', 'pending')
    .executeTakeFirst();
  const due = oldest?.due === null || oldest?.due === undefined ? null : Number(oldest.due);
  return {
    byState: Object.fromEntries(rows.map((r) => [r.state, Number(r.n)])),
    oldestDueAgeMs: due === null ? 0 : Math.max(0, Number(oldest!.now) - due),
  };
}
