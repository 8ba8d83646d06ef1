import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/connect.js';
import type { Tables } from '../db/tables.js';
import { storeEventTrace } from '../events/event-write.js';
import type { EventInput } from './envelope.js';
import { enqueue, enqueueMany, type Enqueued, type JobHandoff } from './queue/enqueue.js';
import { subscribedTargets, type TargetRow } from './targets-store.js';

/**
 * The write path's way into the delivery engine: a write enqueues its event inside its own transaction, and tells
 * the outbox once that transaction has committed. The runtime builds it with this process's worker as the hand-off
 * (or none, for `serve --no-worker` and tests), so the write path never reaches into a running worker by itself.
 */
export interface Outbox {
  enqueue(trx: Kysely<Tables>, event: EventInput, now: number, onlyTargetId?: string): Promise<Enqueued>;
  /** `enqueue` of several events in order, written together (a batch's creates). */
  enqueueMany(trx: Kysely<Tables>, events: readonly EventInput[], now: number): Promise<Enqueued[]>;
  /**
   * After the commit: hand the local worker its jobs, and wake workers (here and elsewhere) for the pending ones.
   * A transaction of several writes (a batch) passes all it enqueued at once: one wake-up for all of them.
   */
  committed(enqueued: Enqueued | null | ReadonlyArray<Enqueued | null>): Promise<void>;
  /** Tracing's write spans (SPEC §15), or null when tracing is off: handed in, so the write path imports no tracing. */
  readonly tracer: WriteTracer | null;
}

/** What the write path needs of tracing (tracing/tracing.ts's runtime is one). */
export interface WriteTracer {
  /** `fn` inside a span, a child of the active one; error status when it throws. */
  inSpan<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** Attributes on the active span; a batch's several records become lists. */
  note(attributes: Readonly<Record<string, string>>): void;
  /** `fn`, to run later in the context active now (a group commit runs a write from another request's turn). */
  bind<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  /** The active span's W3C context (a write tracing did not sample has one too, flagged so), or null: no span. */
  current(): { readonly traceparent: string; readonly tracestate: string | null } | null;
}

/**
 * The write span's context stored with the events just written (events/event-write.ts), and given to the jobs handed
 * to this process's worker, which are never claimed (the claim reads it with the event's payload).
 */
async function storeTrace(trx: Kysely<Tables>, tracer: WriteTracer | null, enqueued: readonly Enqueued[]): Promise<void> {
  const trace = tracer?.current() ?? null;
  if (trace === null || enqueued.length === 0) return;
  await storeEventTrace(trx, enqueued.map((e) => e.eventId), trace);
  for (const e of enqueued) for (const h of e.handedOver) h.job = { ...h.job, traceparent: trace.traceparent, tracestate: trace.tracestate };
}

export function createOutbox(database: Database, logger: Logger, handoff: JobHandoff | null, tracer: WriteTracer | null = null): Outbox {
  // The targets read once per transaction and topic: a batch (or a group commit) of many writes asks once, not per
  // write. Nothing that changes targets runs inside a record write's transaction.
  const read = new WeakMap<Kysely<Tables>, Map<string, Promise<TargetRow[]>>>();
  const subscribedIn = (trx: Kysely<Tables>) => (topic: EventInput['topic']) => {
    let byTopic = read.get(trx);
    if (!byTopic) read.set(trx, (byTopic = new Map()));
    let targets = byTopic.get(topic);
    if (!targets) byTopic.set(topic, (targets = subscribedTargets(trx, topic)));
    return targets;
  };
  return {
    tracer,
    async enqueue(trx, event, now, onlyTargetId) {
      const enqueued = await enqueue(trx, database.caps, event, { now, handoff, onlyTargetId, subscribed: subscribedIn(trx) });
      await storeTrace(trx, tracer, [enqueued]);
      return enqueued;
    },
    async enqueueMany(trx, events, now) {
      const enqueued = await enqueueMany(trx, database.caps, events, { now, handoff, subscribed: subscribedIn(trx) });
      await storeTrace(trx, tracer, enqueued);
      return enqueued;
    },
    async committed(given) {
      const all = (Array.isArray(given) ? given : [given]).filter((e): e is Enqueued => e !== null);
      if (all.length === 0) return;
      const handedOver = all.flatMap((e) => e.handedOver);
      if (handedOver.length > 0) handoff?.adopt(handedOver);
      // PostgreSQL's readers heard it from the write's own NOTIFY; this process's, on SQLite, hear it here.
      if (all.some((e) => e.inFeed) && !database.caps.sharedByProcesses) void database.events.notify();
      if (all.every((e) => e.pending === 0)) return;
      // A lost wake-up only delays delivery until the next poll; it must not fail the committed write.
      await database.signal.notify().catch((err: unknown) => logger.warn({ err }, 'job wake-up failed'));
    },
  };
}
