import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { InsertPart } from '../db/compiled.js';
import type { Database } from '../db/connect.js';
import type { Tables } from '../db/tables.js';
import type { RequestSpan, WorkSpan } from '../tracing/types.js';
import type { EventInput } from './envelope.js';
import { enqueue, enqueueMany, type Enqueued, type JobHandoff } from './queue/enqueue.js';
import { TargetsCache } from './targets-cache.js';
import { subscribedTargets, type TargetRow } from './targets-store.js';

/**
 * The write path's way into the delivery engine: a write enqueues its event inside its own transaction, and tells
 * the outbox once that transaction has committed. The runtime builds it with this process's worker as the hand-off
 * (or none, for `serve --no-worker` and tests), so the write path never reaches into a running worker by itself.
 */
export interface Outbox {
  enqueue(trx: Kysely<Tables>, event: EventInput, now: number, onlyTargetId?: string): Promise<Enqueued>;
  /**
   * `enqueue` of several events in order, written together (a batch's creates); `before`: rows the write itself inserts
   * (its records), written with them, in one statement where the database can (db/compiled.ts insertTogether): none
   * may depend on the events' or jobs' rows.
   */
  enqueueMany(trx: Kysely<Tables>, events: readonly EventInput[], now: number, before?: readonly InsertPart[]): Promise<Enqueued[]>;
  /**
   * After the commit: hand the local worker its jobs (before it returns), and wake workers (here and elsewhere) for
   * the pending ones and feed readers for the feed's events. A transaction of several writes (a batch) passes all it
   * enqueued at once: one wake-up for all of them. Resolves once the wake-ups are sent; never fails (a failure is
   * logged): the write's answer does not wait for it.
   */
  committed(enqueued: Enqueued | null | ReadonlyArray<Enqueued | null>): Promise<void>;
  /** This outbox for the writes of one request: their spans are children of the request's server span (SPEC §15). */
  forRequest(parent: RequestSpan | null): Outbox;
  /**
   * `fn` in the span of a write's transaction (SPEC §15), a child of the request's span (forRequest; none: a root
   * span), given the outbox that notes on that span and stores its context with every event it writes. Without
   * tracing it is `fn(this outbox)`.
   */
  inWriteSpan<T>(fn: (outbox: Outbox) => Promise<T>): Promise<T>;
  /** Attributes on the write's span (`svc.collection`, `svc.record.id`); a batch's several records become lists. */
  note(attributes: Readonly<Record<string, string>>): void;
}

/**
 * What the write path needs of tracing (tracing/tracing.ts's runtime is one): handed in, so the write path never
 * loads tracing itself.
 */
export interface WriteTracer {
  inSpan<T>(name: string, parent: RequestSpan | null, fn: (span: WorkSpan) => Promise<T>): Promise<T>;
}

export function createOutbox(database: Database, logger: Logger, handoff: JobHandoff | null, tracer: WriteTracer | null = null): Outbox {
  // PostgreSQL: the targets kept across writes, checked by each write's inserts (targets-cache.ts).
  const kept = database.caps.targetsVersion === null ? null : new TargetsCache(database.caps.targetsVersion);
  // SQLite: the targets read once per transaction and topic: a batch (or a group commit) of many writes asks once, not
  // per write. Nothing that changes targets runs inside a record write's transaction.
  const read = new WeakMap<Kysely<Tables>, Map<string, Promise<TargetRow[]>>>();
  const subscribedIn = (trx: Kysely<Tables>) => (topic: EventInput['topic']) => {
    if (kept !== null) return kept.subscribed(trx, topic);
    let byTopic = read.get(trx);
    if (!byTopic) read.set(trx, (byTopic = new Map()));
    let targets = byTopic.get(topic);
    if (!targets) byTopic.set(topic, (targets = subscribedTargets(trx, topic)));
    return targets;
  };
  const targetsCheck = kept ?? undefined;
  const committed: Outbox['committed'] = async (given) => {
    const all = (Array.isArray(given) ? given : [given]).filter((e): e is Enqueued => e !== null);
    if (all.length === 0) return;
    const handedOver = all.flatMap((e) => e.handedOver);
    if (handedOver.length > 0) handoff?.adopt(handedOver);
    // Wake-ups go after the commit, never inside the write's transaction (postgres-listen.ts coalescedNotices: on
    // PostgreSQL a NOTIFY there made notifying commits flush one at a time). The answer does not wait for them: a lost
    // one only delays delivery, or a feed reader, until the next poll, and must not fail the committed write.
    const warn = (what: string) => (err: unknown) => logger.warn({ err }, `${what} wake-up failed`);
    const sent: Array<Promise<void>> = [];
    if (all.some((e) => e.inFeed)) sent.push(database.events.notify().catch(warn('feed')));
    // The targets of its pending jobs, and those whose pending job it held locked (Enqueued.lockedTargets; its held
    // jobs make no wake-up): a claim meanwhile passed that job over and may have marked the target idle.
    const targets = new Set<string>();
    for (const e of all) {
      for (const t of e.pendingTargets) targets.add(t);
      for (const t of e.lockedTargets) targets.add(t);
    }
    if (targets.size > 0) sent.push(database.signal.notify([...targets]).catch(warn('job')));
    await Promise.all(sent);
  };
  // The outbox of one request's writes, or of the writes in one span (none: untraced); the same engine behind each.
  const within = (parent: RequestSpan | null, span: WorkSpan | null): Outbox => {
    const outbox: Outbox = {
      async enqueue(trx, event, now, onlyTargetId) {
        return enqueue(trx, database.caps, event, { now, handoff, onlyTargetId, subscribed: subscribedIn(trx), targetsCheck, trace: span?.headers ?? null });
      },
      async enqueueMany(trx, events, now, before) {
        return enqueueMany(trx, database.caps, events, { now, handoff, subscribed: subscribedIn(trx), targetsCheck, trace: span?.headers ?? null, before });
      },
      committed,
      forRequest: (request) => (tracer === null ? outbox : within(request, null)),
      inWriteSpan: (fn) => (tracer === null ? fn(outbox) : tracer.inSpan('svc.transaction', parent, (inner) => fn(within(parent, inner)))),
      note: span === null ? () => {} : (attributes) => span.note(attributes),
    };
    return outbox;
  };
  return within(null, null);
}
