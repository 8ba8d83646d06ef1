import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Tables } from '../../db/tables.js';

/** delivering → pending for leases past expiry: their worker died or stalled. The attempt may have been sent. */
export async function rescue(db: Kysely<Tables>, opts: { now: number }): Promise<number> {
  const res = await rescueStatement(opts.now).execute(db);
  return Number(res.numAffectedRows ?? 0);
}

/** The statement alone, so its query plan can be checked. The state is a literal: the lease index holds delivering jobs only. */
export function rescueStatement(now: number): RawBuilder<unknown> {
  return sql`update delivery_jobs set state = 'pending', lease_id = null, lease_expires_at = null, updated_at = ${now}
              where state = 'delivering' and lease_expires_at < ${now}`;
}
