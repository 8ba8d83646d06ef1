import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { DeliveryJobsTable, Tables } from '../db/tables.js';
import { iso } from '../lib/clock.js';
import { TEST_RECORD_ID } from '../lib/ids.js';
import { enqueue, type Enqueued } from './queue/enqueue.js';
import type { DisabledReason, TargetRow } from './targets-store.js';
import { OPERATIONAL_COLLECTION, isOperationalTopic } from './topics.js';
import { jobView, targetView } from './views.js';

/**
 * Svc's own events (SPEC §10), written in the transaction of the transition that causes them: feed events of the
 * reserved collection `_svc` (the admin feed shows them, the public one never does), delivered to the targets
 * subscribed to their topic except the one they are about. Nothing a job of an operational event does causes
 * another one, so a failing subscriber cannot start a chain of them.
 */

/** `webhook.disabled`: svc (not an admin) disabled a target. */
export function enqueueWebhookDisabled(
  trx: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { now: number; target: TargetRow; reason: Exclude<DisabledReason, 'manual'> },
): Promise<Enqueued> {
  const { now, target, reason } = opts;
  const payload = { webhook: targetView(target), reason, occurredAt: iso(now) };
  return enqueue(trx, caps, { topic: 'webhook.disabled', collection: OPERATIONAL_COLLECTION, recordId: TEST_RECORD_ID, payload }, { now, handoff: null, exceptTargetId: target.id });
}

/** `delivery.dead`: a job died; none for a job of an operational event. */
export async function enqueueDeliveryDead(trx: Kysely<Tables>, caps: DialectCapabilities, opts: { now: number; job: DeliveryJobsTable }): Promise<Enqueued | null> {
  const { now, job } = opts;
  if (isOperationalTopic(job.topic)) return null;
  const payload = { delivery: jobView(job), occurredAt: iso(now) };
  return enqueue(trx, caps, { topic: 'delivery.dead', collection: OPERATIONAL_COLLECTION, recordId: TEST_RECORD_ID, payload }, { now, handoff: null, exceptTargetId: job.webhook_id });
}
