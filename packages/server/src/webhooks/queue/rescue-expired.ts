import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';

/** delivering → pending for leases past expiry: their worker died or stalled. The attempt may have been sent. */
export async function rescueExpired(db: Kysely<Tables>, caps: DialectCapabilities): Promise<number> {
  const now = caps.nowMs();
  const res = await db
    .updateTable('delivery_jobs')
    .set({ state: 'pending', lease_id: null, lease_expires_at: null, updated_at: now })
    .where('state', '=', 'delivering')
    .where('lease_expires_at', '<', now)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
