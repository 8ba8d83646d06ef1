import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';

/** delivering → pending without using an attempt (shutdown, or claimed beyond what a target may run now). */
export async function releaseJobs(db: Kysely<Tables>, caps: DialectCapabilities, jobIds: readonly string[], leaseId: string): Promise<number> {
  if (jobIds.length === 0) return 0;
  const res = await db
    .updateTable('delivery_jobs')
    .set({ state: 'pending', lease_id: null, lease_expires_at: null, updated_at: caps.nowMs() })
    .where('id', 'in', jobIds)
    .where('state', '=', 'delivering')
    .where('lease_id', '=', leaseId)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
