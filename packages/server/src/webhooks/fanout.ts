import { sql, type Kysely } from 'kysely';
import type { Context } from '../context.js';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { Tables } from '../db/tables.js';
import { newId } from '../lib/ids.js';
import { envelopeOf, type EventInput } from './envelope.js';
import type { JobHandoff } from './handoff.js';
import type { ClaimedJob } from './queue/claim-jobs.js';
import { findTargets, subscribedTargets, type TargetRow } from './targets-store.js';

/** What a write enqueued: jobs left pending (workers are woken for them) and jobs written for this process's worker. */
export interface Enqueued {
  ids: string[];
  pending: number;
  /** With the target rows as this transaction read them, so the worker signs and sends with current settings. */
  handedOver: Array<{ job: ClaimedJob; target: TargetRow }>;
}

export const NOTHING_ENQUEUED: Enqueued = { ids: [], pending: 0, handedOver: [] };

/** After the commit: hand the local worker its jobs, and wake workers (here and elsewhere) for the pending ones. */
export async function afterCommit(ctx: Context, enqueued: Enqueued, handoff: JobHandoff | null): Promise<void> {
  if (enqueued.handedOver.length > 0) handoff?.adopt(enqueued.handedOver);
  if (enqueued.pending === 0) return;
  // A lost wake-up only delays delivery until the next poll; it must not fail the committed write.
  await ctx.database.signal.notify().catch((err: unknown) => ctx.logger.warn({ err }, 'job wake-up failed'));
}

/**
 * Inside the caller's transaction: the event and one job per enabled subscribed target. Either all of it commits
 * with the record write or none of it does. A job this process's worker has room for is written `delivering`
 * under its lease (see handoff.ts); the rest are pending. The caller passes the result to afterCommit().
 */
export async function enqueueEvent(
  trx: Kysely<Tables>,
  caps: DialectCapabilities,
  event: EventInput,
  now: number,
  opts: { onlyTargetId?: string; handoff?: JobHandoff | null } = {},
): Promise<Enqueued> {
  const { onlyTargetId, handoff = null } = opts;
  const targets = onlyTargetId ? await findTargets(trx, [onlyTargetId]) : await subscribedTargets(trx, event.topic);
  const eventId = newId('evt', now);
  // The payload is stored once, on the event, for all of its jobs (none: nothing will ever read it).
  const payload = targets.length === 0 ? null : JSON.stringify(event.payload);
  await trx.insertInto('events').values({ id: eventId, topic: event.topic, collection: event.collection, record_id: event.recordId, payload, created_at: now }).execute();
  if (payload === null) return NOTHING_ENQUEUED;
  const handedOver: Enqueued['handedOver'] = [];
  const jobs = targets.map((t) => {
    const id = newId('del', now);
    const lease = handoff?.leaseFor(t.id) ?? null;
    const parts = { id, topic: event.topic, collection: event.collection, record_id: event.recordId };
    // The lease is timed by the database clock, as a claim's is.
    if (lease) {
      const job = { id, webhook_id: t.id, body: envelopeOf(parts, payload), attempt_count: 0, round_start: 0, lease_id: lease.leaseId, lease_expires_at: 0 };
      handedOver.push({ job, target: t });
    }
    return {
      ...parts,
      webhook_id: t.id,
      event_id: eventId,
      state: lease ? ('delivering' as const) : ('pending' as const),
      attempt_count: 0,
      round_start: 0,
      next_attempt_at: now,
      lease_id: lease?.leaseId ?? null,
      lease_expires_at: lease ? sql<number>`${caps.nowMs()} + ${lease.leaseMs}` : null,
      last_error_code: null,
      last_error_message: null,
      created_at: now,
      updated_at: now,
    };
  });
  await trx.insertInto('delivery_jobs').values(jobs).execute();
  return { ids: jobs.map((j) => j.id), pending: jobs.length - handedOver.length, handedOver };
}
