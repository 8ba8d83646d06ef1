import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { DeliveryJobsTable, Tables } from '../../db/tables.js';

export type ClaimedJob = Pick<DeliveryJobsTable, 'id' | 'webhook_id' | 'body' | 'attempt_count' | 'round_start' | 'lease_id' | 'lease_expires_at'>;

/**
 * pending → delivering. Takes up to `limit` due jobs of enabled targets (skipping targets this worker has no
 * room for), oldest due first, under a lease timed by the database clock. One statement.
 */
export async function claimJobs(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { leaseId: string; leaseMs: number; limit: number; excludeTargets: readonly string[] },
): Promise<ClaimedJob[]> {
  const now = caps.nowMs();
  const exclude = opts.excludeTargets.length > 0 ? sql`and j.webhook_id not in (${sql.join(opts.excludeTargets)})` : sql``;
  const lock = caps.skipLocked ? sql`for update of j skip locked` : sql``;
  const { rows } = await sql<ClaimedJob>`
    update delivery_jobs
       set state = 'delivering', lease_id = ${opts.leaseId}, lease_expires_at = ${now} + ${opts.leaseMs}, updated_at = ${now}
     where id in (
       select j.id from delivery_jobs j join webhooks w on w.id = j.webhook_id
        where j.state = 'pending' and j.next_attempt_at <= ${now} and w.enabled = 1 ${exclude}
        order by j.next_attempt_at
        limit ${opts.limit}
        ${lock})
       and state = 'pending'
    returning id, webhook_id, body, attempt_count, round_start, lease_id, lease_expires_at`.execute(db);
  return rows;
}
