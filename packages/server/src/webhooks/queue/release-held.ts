import { sql, type Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';
import { recordTopic, unfinishedJobIds } from './job.js';
import type { WebhookId } from '../../lib/ids.js';

/** held → pending for every held job of a target whose ordering was switched off: nothing waits any more. */
export async function releaseHeld(db: Kysely<Tables>, opts: { now: number; webhookId: WebhookId }): Promise<number> {
  const res = await sql`update delivery_jobs set state = 'pending', next_attempt_at = ${opts.now}, updated_at = ${opts.now}
                         where webhook_id = ${opts.webhookId} and state = 'held'`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}

/**
 * A target's ordering was switched on: its unfinished record jobs (made while it did not order) take part in their
 * records' ordering from now on, so a new write waits behind them (the `ordered` mark of migration 011). Not a
 * transition (no state changes): the other half of what switching a target's ordering does to its queue.
 */
export async function markOrdered(db: Kysely<Tables>, webhookId: WebhookId): Promise<number> {
  const res = await sql`update delivery_jobs set ordered = 1
                         where id in (${unfinishedJobIds(webhookId)})
                           and ordered = 0 and ${recordTopic('topic')}`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}
