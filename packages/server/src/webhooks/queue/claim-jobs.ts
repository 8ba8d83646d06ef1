import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { DeliveryJobsTable, Tables } from '../../db/tables.js';

export type ClaimedJob = Pick<DeliveryJobsTable, 'id' | 'webhook_id' | 'body' | 'attempt_count' | 'round_start' | 'lease_id' | 'lease_expires_at'>;

/**
 * pending → delivering for one target: up to `limit` of its due jobs, oldest due first, under a lease timed by
 * the database clock. One statement; an index range probe on (webhook_id, state, next_attempt_at), so its cost
 * does not grow with the backlog, and a worker asks only for as many jobs as the target has free slots.
 */
export async function claimJobs(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { leaseId: string; leaseMs: number; limit: number; webhookId: string },
): Promise<ClaimedJob[]> {
  const now = caps.nowMs();
  const lock = caps.skipLocked ? sql`for update skip locked` : sql``;
  const { rows } = await sql<ClaimedJob>`
    update delivery_jobs
       set state = 'delivering', lease_id = ${opts.leaseId}, lease_expires_at = ${now} + ${opts.leaseMs}, updated_at = ${now}
     where id in (
       select id from delivery_jobs
        where webhook_id = ${opts.webhookId} and state = 'pending' and next_attempt_at <= ${now}
          -- the database, not a worker's view of it, decides that a disabled target's jobs wait
          and exists (select 1 from webhooks w where w.id = ${opts.webhookId} and w.enabled = 1)
        order by next_attempt_at
        limit ${opts.limit}
        ${lock})
       and state = 'pending'
    returning id, webhook_id, body, attempt_count, round_start, lease_id, lease_expires_at`.execute(db);
  return rows;
}
