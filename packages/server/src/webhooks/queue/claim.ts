import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { DeliveryJobsTable, Tables } from '../../db/tables.js';
import { envelopeBytes } from '../envelope.js';
import { newLeaseToken, type HeldJob } from './job.js';

/** How many due jobs of one target to take, and how many bytes of them. */
export interface ClaimRequest {
  webhookId: string;
  limit: number;
  /**
   * The jobs' bytes (each its payload and JOB_OVERHEAD_BYTES) this claim may take for the target: its oldest due
   * jobs while their running sum fits, and always the first, however large. Default CLAIM_MAX_BYTES.
   */
  maxBytes?: number;
}

/**
 * A claim's bytes when the caller names no budget (SPEC §12: claims are budgeted in bytes as they are read). With
 * ~2 MB payloads (a 1 MiB record's update event) a claim of 512 jobs would otherwise hold 1 GB. 8 MiB, not more:
 * SQLite reads a claim's payloads on the main thread, and a claim of 16 such jobs (32 MiB) took 350-600 ms on a
 * loaded two-core machine, 4 of them (8 MiB) 26-56 ms. Small jobs never meet it (512 jobs of 1 KB are 0.6 MiB).
 */
export const CLAIM_MAX_BYTES = 8 * 1024 * 1024;
/** What a job costs besides its payload: its envelope's other members, and the held job's own objects. */
export const JOB_OVERHEAD_BYTES = 256;

type ClaimRow = Pick<DeliveryJobsTable, 'id' | 'webhook_id' | 'topic' | 'collection' | 'record_id' | 'attempt_count' | 'round_start' | 'lease_id' | 'lease_expires_at'> & {
  payload: Buffer | string | null;
};

/**
 * Targets per statement. SQLite refuses a compound SELECT of more than 500 parts (SQLITE_MAX_COMPOUND_SELECT); a
 * claim for more targets than this is one statement per group, in one transaction.
 */
export const CLAIM_TARGETS_PER_STATEMENT = 100;

/**
 * pending → delivering: for each target asked, up to `limit` of its oldest due jobs (returned in no set order), under one fresh
 * lease token for this claim. One statement for all the targets (up to CLAIM_TARGETS_PER_STATEMENT): one round trip
 * and one commit (on SQLite one sync). Results come in the order asked.
 */
export async function claim(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { now: number; leaseMs: number; targets: readonly ClaimRequest[] },
): Promise<HeldJob[][]> {
  if (opts.targets.length === 0) return [];
  const lease = newLeaseToken();
  const run = async (q: Kysely<Tables>, targets: readonly ClaimRequest[]) =>
    (await claimStatement(caps, { targets, lease, now: opts.now, leaseMs: opts.leaseMs }).execute(q)).rows;
  const groups: ClaimRequest[][] = [];
  for (let i = 0; i < opts.targets.length; i += CLAIM_TARGETS_PER_STATEMENT) groups.push(opts.targets.slice(i, i + CLAIM_TARGETS_PER_STATEMENT));
  const rows =
    groups.length === 1
      ? await run(db, groups[0]!)
      : await db.transaction().execute(async (trx) => {
          const all: ClaimRow[] = [];
          for (const group of groups) all.push(...(await run(trx, group)));
          return all;
        });
  const byTarget = new Map<string, HeldJob[]>(opts.targets.map((t) => [t.webhookId, []]));
  for (const r of rows) {
    byTarget.get(r.webhook_id)?.push({
      id: r.id,
      webhookId: r.webhook_id,
      lease,
      leaseExpiresAt: Number(r.lease_expires_at),
      attemptCount: r.attempt_count,
      roundStart: r.round_start,
      // Every job's event has its payload (enqueue.ts, migration 003); 'null' only if a row was made by hand.
      body: envelopeBytes(r, r.payload ?? 'null'),
    });
  }
  return opts.targets.map((t) => byTarget.get(t.webhookId)!);
}

/**
 * The statement, alone so its plan can be checked. For each target a range probe on the partial index of pending jobs
 * by (webhook_id, next_attempt_at), so its cost does not grow with the backlog: one limited subquery per target,
 * joined by UNION ALL (each with its own limit as a value, so PostgreSQL plans the rows it will really get; an
 * unnest()ed list of targets with LATERAL left it guessing, and it chose a hash join over the whole table). The
 * envelope comes back with the job (its event's payload, read in the RETURNING list). The update then finds each
 * chosen job by its primary key (caps.idIn: PostgreSQL hashed a sequential scan of the table past ~100 ids; W4: 2 of
 * a claim's 6 ms on 20 000 jobs).
 *
 * The outer statement must not repeat `state = 'pending'`: SQLite then answered it by walking every pending job
 * in a state index and testing each against the list, a cost that grows with the backlog (20 000 due jobs: 470
 * deliveries/s instead of thousands). Nothing is lost by leaving it out: on SQLite the subqueries and the update are
 * one statement under the single writer lock, and on PostgreSQL the rows the subqueries return are locked
 * (`for update skip locked`) with the WHERE re-checked on their newest version, so they are still pending when the
 * update reaches them.
 *
 * The byte budget is applied in the statement, as the jobs are read, not after: each chosen job's payload size is
 * read without reading the payload (`octet_length`: SQLite's record header, PostgreSQL's TOAST pointer; the events'
 * primary key, one probe a job), a running sum in due order (a window over at most `limit` rows) keeps the jobs that
 * fit and always the first, and only those are updated and have their payload read in RETURNING. The row lock stays
 * on the innermost query (PostgreSQL refuses FOR UPDATE beside a window function): the jobs it locked beyond the
 * budget stay pending, unlocked at the statement's commit. Small jobs fit whole: for them the statement takes what
 * it took before, at the cost of one more primary-key probe a job.
 */
export function claimStatement(
  caps: DialectCapabilities,
  opts: { targets: readonly ClaimRequest[]; lease: string; now: number; leaseMs: number },
): RawBuilder<ClaimRow> {
  const lock = caps.skipLocked ? sql`for update skip locked` : sql``;
  const chosen = opts.targets.map(
    (t) => sql`select id from (
                 select id, row_number() over budget as n, sum(bytes) over budget as upto from (
                   -- a probe of the events' key per job, never a join: PostgreSQL hashed the whole events table for one
                   select due.id, due.next_attempt_at,
                          coalesce((select octet_length(e.payload) from events e where e.id = due.event_id), 0) + ${sql.lit(JOB_OVERHEAD_BYTES)} as bytes from (
                     select id, event_id, next_attempt_at from delivery_jobs
                      where webhook_id = ${t.webhookId} and state = 'pending' and next_attempt_at <= ${opts.now}
                        -- the database, not a worker's view of it, decides that a disabled or deleted target's jobs wait
                        and exists (select 1 from webhooks w where w.id = ${t.webhookId} and w.enabled = 1 and w.deleted_at is null)
                      order by next_attempt_at
                      limit ${t.limit}
                      ${lock}) as due) as sized
                 window budget as (order by next_attempt_at, id)) as budgeted
               where n = 1 or upto <= ${t.maxBytes ?? CLAIM_MAX_BYTES}`,
  );
  return sql<ClaimRow>`
    update delivery_jobs
       set state = 'delivering', lease_id = ${opts.lease}, lease_expires_at = ${opts.now + opts.leaseMs}, updated_at = ${opts.now}
     where ${caps.idIn(sql.join(chosen, sql` union all `))}
    returning id, webhook_id, topic, collection, record_id, attempt_count, round_start, lease_id, lease_expires_at,
              ${caps.textBytes(sql`(select e.payload from events e where e.id = delivery_jobs.event_id)`)} as payload`;
}
