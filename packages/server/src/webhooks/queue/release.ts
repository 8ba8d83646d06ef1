import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import type { HeldRef } from './job.js';

/**
 * delivering → pending without using an attempt: svc's own reasons not to make one (shutdown, a lease about to
 * lapse, the target disabled since the claim). Each job only under the lease of the claim it names. The due time is
 * left as it was, so a released job is claimable at once; or, with `dueAt`, moved to then (a reason that would
 * stop the next attempt just the same: a secret this process cannot open).
 */
export async function release(db: Kysely<Tables>, caps: DialectCapabilities, opts: { now: number; jobs: readonly HeldRef[]; dueAt?: number }): Promise<number> {
  if (opts.jobs.length === 0) return 0;
  const pairs = opts.jobs.map((j) => [j.id, j.lease]);
  const held = caps.rowsOf([['id', 'text'], ['lease', 'text']], pairs);
  const due = opts.dueAt === undefined ? sql`` : sql`, next_attempt_at = ${opts.dueAt}`;
  const res = await sql`
    update delivery_jobs set state = 'pending', lease_id = null, lease_expires_at = null, updated_at = ${opts.now}${due}
      from (${held}) as held
     where delivery_jobs.id = held.id and delivery_jobs.state = 'delivering' and delivery_jobs.lease_id = held.lease`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}
