import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { DeliveryJobsTable, Tables } from '../../db/tables.js';
import { envelopeOf } from '../envelope.js';

/** A job held under a lease, with the exact bytes it sends (`body`, rebuilt from the job and its event's payload). */
export type ClaimedJob = Pick<DeliveryJobsTable, 'id' | 'webhook_id' | 'attempt_count' | 'round_start' | 'lease_id' | 'lease_expires_at'> & { body: string };

type ClaimRow = Pick<DeliveryJobsTable, 'id' | 'webhook_id' | 'topic' | 'collection' | 'record_id' | 'attempt_count' | 'round_start' | 'lease_id' | 'lease_expires_at'> & {
  payload: string | null;
};

/**
 * pending → delivering for one target: up to `limit` of its due jobs, oldest due first, under a lease timed by
 * the database clock. One statement; a range probe on the partial index of pending jobs by (webhook_id,
 * next_attempt_at), so its cost does not grow with the backlog, and a worker asks only for as many jobs as the
 * target has free slots. The envelope comes back with the job (its event's payload, read in the RETURNING list).
 *
 * The outer statement must not repeat `state = 'pending'`: SQLite then answered it by walking every pending job
 * in a state index and testing each against the list, a cost that grows with the backlog
 * (20 000 due jobs: 470 deliveries/s instead of thousands). Nothing is lost by leaving it out: on SQLite the
 * subquery and the update are one statement under the single writer lock, and on PostgreSQL the rows the
 * subquery returns are locked (`for update`) with the WHERE re-checked on their newest version, so they are
 * still pending when the update reaches them.
 */
export async function claimJobs(db: Kysely<Tables>, caps: DialectCapabilities, opts: ClaimOptions): Promise<ClaimedJob[]> {
  const { rows } = await claimStatement(caps, opts).execute(db);
  return rows.map((r) => ({
    id: r.id,
    webhook_id: r.webhook_id,
    // Every job's event has its payload (fanout.ts, migration 003); 'null' only if a row was made by hand.
    body: envelopeOf(r, r.payload ?? 'null'),
    attempt_count: r.attempt_count,
    round_start: r.round_start,
    lease_id: r.lease_id,
    lease_expires_at: r.lease_expires_at,
  }));
}

/** Claims for several targets in one transaction: one commit for all of them. Results in the order asked. */
export async function claimJobsOfTargets(db: Kysely<Tables>, caps: DialectCapabilities, claims: readonly ClaimOptions[]): Promise<ClaimedJob[][]> {
  if (claims.length === 1) return [await claimJobs(db, caps, claims[0]!)];
  return db.transaction().execute(async (trx) => {
    const out: ClaimedJob[][] = [];
    for (const c of claims) out.push(await claimJobs(trx, caps, c));
    return out;
  });
}

export interface ClaimOptions {
  leaseId: string;
  leaseMs: number;
  limit: number;
  webhookId: string;
}

/** The statement alone, so its query plan can be checked. */
export function claimStatement(caps: DialectCapabilities, opts: ClaimOptions): RawBuilder<ClaimRow> {
  const now = caps.nowMs();
  const lock = caps.skipLocked ? sql`for update skip locked` : sql``;
  return sql<ClaimRow>`
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
    returning id, webhook_id, topic, collection, record_id, attempt_count, round_start, lease_id, lease_expires_at,
              (select e.payload from events e where e.id = delivery_jobs.event_id) as payload`;
}
