import { sql, type Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';

/** held → pending for every held job of a target whose ordering was switched off: nothing waits any more. */
export async function releaseHeld(db: Kysely<Tables>, opts: { now: number; webhookId: string }): Promise<number> {
  const res = await sql`update delivery_jobs set state = 'pending', next_attempt_at = ${opts.now}, updated_at = ${opts.now}
                         where webhook_id = ${opts.webhookId} and state = 'held'`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}
