import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import { newId } from '../../lib/ids.js';
import { envelopeOf, type EventInput } from '../envelope.js';
import { isRecordEvent, wantsEvent } from '../subscription-match.js';
import { findTargets, subscribedTargets, type TargetRow } from '../targets-store.js';
import type { HeldJob } from './job.js';

/**
 * A worker in the writing process taking the jobs of that process's writes without claiming them: the job is
 * written `delivering` under a lease of its own in the record's transaction and handed over after the commit. A
 * claim per write would be a commit of its own (on SQLite a sync) and a trip through the poll loop; this way a
 * record written by `svc serve` is on its way to the receiver within the same turn of the event loop. A job the
 * worker has no room for is written `pending`, for any worker to claim. If the process dies between the commit and
 * the attempt, the lease expires and the job is rescued like any other: still at least once.
 */
export interface JobHandoff {
  /** Inside the writing transaction: a fresh lease for a new job of this target, or null (leave it pending). */
  leaseFor(webhookId: string): { lease: string; expiresAt: number } | null;
  /** After the commit: the jobs written under those leases, each with its target as the write read it. */
  adopt(jobs: ReadonlyArray<{ job: HeldJob; target: TargetRow }>): void;
}

/** What a write enqueued: jobs left pending (workers are woken for them) and jobs handed to this process's worker. */
export interface Enqueued {
  eventId: string;
  /** A feed event (feed readers are woken after the commit). */
  inFeed: boolean;
  jobIds: string[];
  pending: number;
  handedOver: Array<{ job: HeldJob; target: TargetRow }>;
}

/**
 * Ordering `record`: a job waits (`held`) while an older job of the same target and record is unfinished. On
 * PostgreSQL the newest such job is locked, so a worker finishing it at this moment either finishes first (the
 * lock then finds it finished: this job needs not wait) or waits for this commit and then releases this job.
 */
async function mustWait(trx: Kysely<Tables>, caps: DialectCapabilities, webhookId: string, recordId: string): Promise<boolean> {
  const lock = caps.skipLocked ? sql`for update` : sql``;
  // State literals: each probe is answered by its partial index (migration 006).
  const held = await sql`select id from delivery_jobs where webhook_id = ${webhookId} and record_id = ${recordId} and state = 'held'
                          order by id desc limit 1 ${lock}`.execute(trx);
  if (held.rows.length > 0) return true;
  const open = await sql`select id from delivery_jobs where webhook_id = ${webhookId} and record_id = ${recordId} and state in ('pending', 'delivering')
                          limit 1 ${lock}`.execute(trx);
  return open.rows.length > 0;
}

/**
 * [*] → pending, [*] → delivering (hand-off), or [*] → held: inside the caller's transaction, the event and one job
 * per enabled target subscribed to it (or for `onlyTargetId`; never for `exceptTargetId`); `held` when the target orders by record and an older
 * job of the record is unfinished. Either all of it commits with the record write or none of it does.
 */
export async function enqueue(
  trx: Kysely<Tables>,
  caps: DialectCapabilities,
  event: EventInput,
  opts: {
    now: number;
    handoff: JobHandoff | null;
    onlyTargetId?: string;
    exceptTargetId?: string;
    subscribed?: (topic: EventInput['topic']) => Promise<TargetRow[]>;
  },
): Promise<Enqueued> {
  const { now, handoff, onlyTargetId } = opts;
  const subscribed = opts.subscribed ?? ((topic: EventInput['topic']) => subscribedTargets(trx, topic));
  const found = onlyTargetId ? await findTargets(trx, [onlyTargetId]) : (await subscribed(event.topic)).filter((t) => wantsEvent(t, event));
  // An operational event is never sent to the target it is about (SPEC §10).
  const targets = opts.exceptTargetId === undefined ? found : found.filter((t) => t.id !== opts.exceptTargetId);
  const eventId = newId('evt', now);
  // Record changes are feed events, and their payload names the event (SPEC §7); a webhook.test is neither.
  const inFeed = event.topic !== 'webhook.test';
  const payload = JSON.stringify(inFeed ? { ...event.payload, eventId } : event.payload);
  const row = { id: eventId, topic: event.topic, collection: event.collection, record_id: event.recordId, payload, created_at: now };
  if (!inFeed) await trx.insertInto('events').values({ ...row, tx: null, position: null }).execute();
  else {
    const { tx, position } = caps.eventPosition();
    const insert = sql`insert into events (id, topic, collection, record_id, payload, created_at, tx, position)
                       values (${row.id}, ${row.topic}, ${row.collection}, ${row.record_id}, ${row.payload}, ${row.created_at}, ${tx}, ${position})`;
    // Feed readers in every process hear of it when the transaction commits (never for a rollback).
    await caps.withFeedNotice(insert).execute(trx);
  }
  if (targets.length === 0) return { eventId, inFeed, jobIds: [], pending: 0, handedOver: [] };
  const handedOver: Enqueued['handedOver'] = [];
  const waiting = new Set<string>();
  for (const target of targets) {
    if (target.ordering === 'record' && isRecordEvent(event) && (await mustWait(trx, caps, target.id, event.recordId))) waiting.add(target.id);
  }
  const rows = targets.map((target) => {
    const id = newId('del', now);
    const held = waiting.has(target.id);
    const lease = held ? null : (handoff?.leaseFor(target.id) ?? null);
    const parts = { id, topic: event.topic, collection: event.collection, record_id: event.recordId };
    if (lease) {
      const body = envelopeOf(parts, payload);
      handedOver.push({ job: { id, webhookId: target.id, lease: lease.lease, leaseExpiresAt: lease.expiresAt, attemptCount: 0, roundStart: 0, body }, target });
    }
    return {
      ...parts,
      webhook_id: target.id,
      event_id: eventId,
      state: held ? ('held' as const) : lease ? ('delivering' as const) : ('pending' as const),
      attempt_count: 0,
      round_start: 0,
      next_attempt_at: now,
      lease_id: lease?.lease ?? null,
      lease_expires_at: lease?.expiresAt ?? null,
      last_error_code: null,
      last_error_message: null,
      created_at: now,
      updated_at: now,
    };
  });
  await trx.insertInto('delivery_jobs').values(rows).execute();
  return { eventId, inFeed, jobIds: rows.map((r) => r.id), pending: rows.length - handedOver.length - waiting.size, handedOver };
}
