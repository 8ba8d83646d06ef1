import { sql, type Kysely, type RawBuilder } from 'kysely';
import { insertTogether, type InsertPart } from '../../db/compiled.js';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import { NeedsTransaction } from '../../db/run-again.js';
import type { Tables } from '../../db/tables.js';
import { eventInserts, newEvent, type EventTrace, type NewEvent } from '../../events/event-write.js';
import { newId, newIdAfter, type DeliveryId, type EventId } from '../../lib/ids.js';
import { envelopeBytes, type EventInput } from '../envelope.js';
import { isRecordEvent, wantsEvent } from '../subscription-match.js';
import type { TargetsCheck } from '../targets-cache.js';
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
  eventId: EventId;
  /** A feed event (feed readers are woken after the commit). */
  inFeed: boolean;
  jobIds: DeliveryId[];
  pending: number;
  /** The targets of its pending jobs, each once: the wake-up names them (JobSignal), so workers probe only those. */
  pendingTargets: string[];
  handedOver: Array<{ job: HeldJob; target: TargetRow }>;
  /**
   * Targets whose pending job this write locked to hold its own behind it (newestUnfinished), where a claim can run
   * meanwhile (sharedByProcesses): that claim passed the job over (`for update skip locked`), may have found nothing
   * and marked the target idle, and the held job wakes nobody. The wake-up after the commit names them (outbox.ts).
   */
  lockedTargets: string[];
}

/**
 * Ordering `record`: a job waits (`held`) while an older job of the same target and record is unfinished; this
 * returns the newest such job's id, or null. On PostgreSQL that job is locked, so a worker finishing it at this
 * moment either finishes first (the lock then finds it finished: this job needs not wait) or waits for this commit
 * and then releases this job. A pending job locked so is passed over by a claim meanwhile (`lockedPending`).
 */
async function newestUnfinished(trx: Kysely<Tables>, caps: DialectCapabilities, webhookId: string, recordId: string): Promise<{ id: string; lockedPending: boolean } | null> {
  const probes = unfinishedProbes(caps, webhookId, recordId);
  const held = await probes.held.execute(trx);
  // A held job is never claimed: locking it keeps no claim from anything.
  if (held.rows.length > 0) return { id: held.rows[0]!.id, lockedPending: false };
  const open = await probes.open.execute(trx);
  const id = open.rows.reduce<string | null>((newest, r) => (newest === null || r.id > newest ? r.id : newest), null);
  return id === null ? null : { id, lockedPending: open.rows.some((r) => r.state === 'pending') };
}

/**
 * newestUnfinished's two probes, alone so their plans can be checked: each is answered by its partial index
 * (migrations 006 and 011), state literals and all. A record has one unfinished ordered job, seldom more (those
 * queued before its target's ordering was switched on), so the second lists them all and the newest is picked in
 * JavaScript: with `order by id desc limit 1` SQLite walked the target's whole history in delivery_jobs_webhook (id
 * order) instead, looking for the record.
 */
export function unfinishedProbes(caps: DialectCapabilities, webhookId: string, recordId: string): { held: RawBuilder<{ id: string }>; open: RawBuilder<{ id: string; state: string }> } {
  const lock = caps.forUpdate();
  return {
    held: sql<{ id: string }>`select id from delivery_jobs where webhook_id = ${webhookId} and record_id = ${recordId} and state = 'held'
                               order by id desc limit 1 ${lock}`,
    open: sql<{ id: string; state: string }>`select id, state from delivery_jobs where webhook_id = ${webhookId} and record_id = ${recordId} and ordered = 1
                                 and state in ('pending', 'delivering') ${lock}`,
  };
}

export interface EnqueueOptions {
  now: number;
  handoff: JobHandoff | null;
  onlyTargetId?: string;
  exceptTargetId?: string;
  subscribed?: (topic: EventInput['topic']) => Promise<TargetRow[]>;
  /** The write span's context, stored with its events and given to the jobs handed over (SPEC §15); none: untraced. */
  trace?: EventTrace | null;
  /** Rows the caller writes with the events and jobs (a create's records): one statement where it can be (insertTogether). */
  before?: readonly InsertPart[];
  /** Where `subscribed` answers from targets kept across writes: their version, checked by the inserts (targets-cache.ts). */
  targetsCheck?: TargetsCheck;
}

/**
 * [*] → pending, [*] → delivering (hand-off), or [*] → held: inside the caller's transaction, the event and one job
 * per enabled target subscribed to it (or for `onlyTargetId`; never for `exceptTargetId`); `held` when the target orders by record and an older
 * job of the record is unfinished. Either all of it commits with the record write or none of it does.
 */
export async function enqueue(trx: Kysely<Tables>, caps: DialectCapabilities, event: EventInput, opts: EnqueueOptions): Promise<Enqueued> {
  return (await enqueueMany(trx, caps, [event], opts))[0]!;
}

const JOB_COLUMNS = [
  'id', 'webhook_id', 'event_id', 'topic', 'collection', 'record_id', 'state', 'attempt_count', 'round_start', 'next_attempt_at',
  'lease_id', 'lease_expires_at', 'last_error_code', 'last_error_message', 'created_at', 'updated_at', 'ordered',
] as const;

/**
 * `enqueue` for several events in order (a batch's writes): the same events and jobs, in one insert per table. An
 * event's ordering check sees the jobs of the events before it in the same call, as it would see them written.
 */
export async function enqueueMany(trx: Kysely<Tables>, caps: DialectCapabilities, events: readonly EventInput[], opts: EnqueueOptions): Promise<Enqueued[]> {
  const { now, onlyTargetId } = opts;
  const subscribed = opts.subscribed ?? ((topic: EventInput['topic']) => subscribedTargets(trx, topic));
  const all: Enqueued[] = [];
  const written: NewEvent[] = [];
  const jobs: JobPlan = { rows: [], planned: new Set() };
  for (const event of events) {
    const found = onlyTargetId ? await findTargets(trx, [onlyTargetId]) : (await subscribed(event.topic)).filter((t) => wantsEvent(t, event));
    // An operational event is never sent to the target it is about (SPEC §10).
    const targets = opts.exceptTargetId === undefined ? found : found.filter((t) => t.id !== opts.exceptTargetId);
    const e = newEvent(event, now, opts.trace ?? null);
    written.push(e);
    all.push(await planJobs(trx, caps, { ...event, eventId: e.id, inFeed: e.inFeed, payloadJson: e.payloadJson }, targets, opts, jobs));
  }
  const jobsInsert: InsertPart = { spec: { name: 'jobs-insert', table: 'delivery_jobs', columns: JOB_COLUMNS }, rows: jobs.rows };
  // What the caller writes with them (a create's records), the events and their jobs: one statement where the database
  // can (insertTogether), else one after another in this order.
  const check = opts.targetsCheck?.checkFor(trx) ?? null;
  const inserts = [...(opts.before ?? []), ...(await eventInserts(trx, caps, written)), jobsInsert];
  try {
    // Outside a transaction (Database.writeStatement) the inserts and the check must be one statement.
    await insertTogether(trx, caps, inserts, { check, oneStatement: !trx.isTransaction });
  } catch (err) {
    if (check !== null) opts.targetsCheck!.failed(trx, err);
    throw err;
  }
  return all;
}

/** The job rows of one call so far, and their targets and records: unfinished (not yet written) for a later event's ordering check. */
interface JobPlan {
  rows: unknown[][];
  planned: Set<string>;
}

/** One event's jobs, a row each in `plan`: held behind an older unfinished job of its record, handed over, or pending. */
async function planJobs(
  trx: Kysely<Tables>,
  caps: DialectCapabilities,
  event: EventInput & { eventId: EventId; inFeed: boolean; payloadJson: string },
  targets: readonly TargetRow[],
  { now, handoff, trace }: EnqueueOptions,
  plan: JobPlan,
): Promise<Enqueued> {
  const { eventId, payloadJson } = event;
  const enqueued: Enqueued = { eventId, inFeed: event.inFeed, jobIds: [], pending: 0, pendingTargets: [], handedOver: [], lockedTargets: [] };
  for (const target of targets) {
    const key = `${target.id}\0${event.recordId}`;
    const ordered = target.ordering === 'record' && isRecordEvent(event);
    // An earlier event of this write already holds the record's place: no look-up needed.
    const probes = ordered && !plan.planned.has(key);
    // The look-up locks the job it finds: that needs a transaction.
    if (probes && !trx.isTransaction) throw new NeedsTransaction('an ordered target');
    const found = probes ? await newestUnfinished(trx, caps, target.id, event.recordId) : null;
    const waitsFor = found?.id ?? null;
    // SQLite: no claim runs until this write commits, so none passes the job over.
    if (found?.lockedPending && caps.sharedByProcesses) enqueued.lockedTargets.push(target.id);
    const held = ordered && (plan.planned.has(key) || waitsFor !== null);
    plan.planned.add(key);
    // Held jobs go out oldest id first (promoteHeld): this one's id sorts after the job it waits for, even when that
    // one was made by another process in the same millisecond. (Within this write, ids are made in order anyway.)
    const id = waitsFor !== null ? newIdAfter('del', waitsFor, now) : newId('del', now);
    const lease = held ? null : (handoff?.leaseFor(target.id) ?? null);
    if (lease) {
      const body = envelopeBytes({ id, topic: event.topic, collection: event.collection, record_id: event.recordId }, payloadJson);
      // Never claimed, so never read back: the job carries its write's trace context from here (the claim reads it
      // with the event's payload).
      const job = { id, webhookId: target.id, lease: lease.lease, leaseExpiresAt: lease.expiresAt, attemptCount: 0, roundStart: 0, body };
      enqueued.handedOver.push({ job: trace ? { ...job, traceparent: trace.traceparent, tracestate: trace.tracestate } : job, target });
    } else if (!held) {
      enqueued.pending++;
      // An event's targets are distinct: each is named once.
      enqueued.pendingTargets.push(target.id);
    }
    enqueued.jobIds.push(id);
    const state = held ? 'held' : lease ? 'delivering' : 'pending';
    plan.rows.push([id, target.id, eventId, event.topic, event.collection, event.recordId, state, 0, 0, now, lease?.lease ?? null, lease?.expiresAt ?? null, null, null, now, now, ordered ? 1 : 0]);
  }
  return enqueued;
}
