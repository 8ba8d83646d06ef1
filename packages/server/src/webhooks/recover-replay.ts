import type { Kysely } from 'kysely';
import type { Config } from '../config/schema.js';
import type { Tables } from '../db/tables.js';
import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { nextTurn } from '../lib/turns.js';
import { deadScanEnd } from './queue/jobs-store.js';
import { recoverDeadJobs } from './queue/recover-dead.js';
import { replayEvents } from './queue/replay-events.js';
import type { EventInput } from './envelope.js';
import { eventPayloads, replayCandidates, replayScanEnd, type ReplayCandidate, type ReplaySelection } from './replay-store.js';
import { isRecordEvent, subscriptionMatches } from './subscription-match.js';
import type { Topic } from './topics.js';
import { requireTarget } from './targets.js';
import type { TargetRow } from './targets-store.js';
import type { EventId } from '../lib/ids.js';

/**
 * Recover and replay (SPEC §10, §12): sending a target what it missed, without holding the process. Both walk their
 * window a slice of SCAN index entries at a time (dead jobs, or events), write at most BATCH jobs per transaction,
 * and wait for the event loop's next turn between two steps, so requests are answered while they run (on SQLite
 * every statement runs on the main thread). Both answer the total and refuse a disabled target (its jobs would
 * only wait).
 */

/** Jobs written per transaction. */
export const BATCH = 500;
/**
 * Index entries one statement walks. Reading is cheap next to writing (SQLite: a slice of 2,000 events ~1 ms, a
 * commit ~10 ms), so a slice is larger than a batch: a replay over 200,000 events is 100 slices, not 400.
 */
export const SCAN = 2000;
/** Payloads read at once when a subscription needs them (filter, changedFields): at most this many bytes, and events. */
export const PAYLOAD_BATCH_BYTES = 8 * 1024 * 1024;
const PAYLOAD_BATCH_EVENTS = 100;
const DAY_MS = 86_400_000;

/**
 * The oldest time whose delivered jobs are still kept: replaying an event from before it could send it twice (its
 * delivered job may have been pruned by SVC_RETENTION_DELIVERED_DAYS).
 */
export function deliveredRetentionHorizon(config: Config, now: number): number {
  return now - config.retentionDeliveredDays * DAY_MS;
}

export interface Window {
  since: number;
  until: number;
}

async function enabledTarget(ctx: Context, id: string, verb: string): Promise<TargetRow> {
  const target = await requireTarget(ctx, id);
  if (!target.enabled) throw new AppError('conflict', `The target is disabled; enable it before you ${verb}.`);
  return target;
}

/** Every dead job of the target created in the window goes back to pending for one more round. */
export async function recoverTarget(ctx: Context, id: string, w: Window): Promise<{ jobs: number }> {
  const target = await enabledTarget(ctx, id, 'recover its jobs');
  const { db, caps } = ctx.database;
  let jobs = 0;
  let afterId: string | null = null;
  for (;;) {
    // The walk only moves forward: after a full batch it resumes after the greatest job it sent back, never from the
    // slice's start again. A job recovered here that dies again while the recovery runs (a short schedule, a worker
    // beside it) is dead behind the walk and stays so: one more round per job, and the answer counts each job once.
    const slice: { afterId: string | null; throughId: string | null } = { afterId, throughId: await deadScanEnd(db, { from: w.since, afterId }, SCAN) };
    const ids = await db.transaction().execute((trx) =>
      recoverDeadJobs(trx, caps, {
        now: ctx.clock.now(),
        webhookId: target.id,
        from: w.since,
        to: w.until,
        firstDelayMs: ctx.config.webhookRetrySchedule[0] ?? 0,
        limit: BATCH,
        ...slice,
      }),
    );
    jobs += ids.length;
    if (ids.length < BATCH) {
      if (slice.throughId === null) break;
      afterId = slice.throughId;
    } else {
      afterId = ids.reduce((a, b) => (b > a ? b : a));
    }
    await nextTurn();
  }
  if (jobs > 0) await ctx.database.signal.notify().catch(() => {});
  return { jobs };
}

/** Gives a stored record event its filter judge (records layer: it knows the collection's fields). */
export type EventJudge = (db: Kysely<Tables>, event: EventInput) => Promise<EventInput>;

/** What of the subscription SQL judges: topics (never webhook.test, made for one target) and, for record events, collections. */
function selection(target: TargetRow, w: Window): ReplaySelection {
  const topics = target.topics.filter((t) => t !== 'webhook.test');
  return {
    webhookId: target.id,
    from: w.since,
    to: w.until,
    recordTopics: topics.filter((topic) => isRecordEvent({ topic })),
    collections: target.collections,
    otherTopics: topics.filter((topic) => !isRecordEvent({ topic })),
  };
}

/**
 * Whether judging this event for the target needs its payload: a record event only for a filter or, on an update,
 * changed fields; any other (operational) event for the target it is about, which its small payload names.
 */
const needsPayload = (target: TargetRow, topic: string): boolean =>
  !isRecordEvent({ topic: topic as Topic }) || target.filter !== null || (target.changedFields !== null && topic === 'record.updated');

/**
 * The candidates the subscription matches. Those that need no payload are judged without it (SQL has already
 * matched their topic and collection); the others are read by id in batches of at most PAYLOAD_BATCH_BYTES (always
 * one event at least), each batch parsed, judged and dropped before the next is read.
 */
async function matching(ctx: Context, target: TargetRow, candidates: readonly ReplayCandidate[], judge: EventJudge): Promise<EventId[]> {
  const event = (c: ReplayCandidate, payload: Record<string, unknown>): EventInput => ({ topic: c.topic as Topic, collection: c.collection, recordId: c.record_id, payload });
  const wanted = new Set(candidates.filter((c) => !needsPayload(target, c.topic) && subscriptionMatches(target, event(c, {}))).map((c) => c.id));
  const pending = candidates.filter((c) => needsPayload(target, c.topic));
  while (pending.length > 0) {
    let bytes = pending[0]!.size;
    let n = 1;
    while (n < pending.length && n < PAYLOAD_BATCH_EVENTS && bytes + pending[n]!.size <= PAYLOAD_BATCH_BYTES) bytes += pending[n++]!.size;
    const batch = pending.splice(0, n);
    const payloads = await eventPayloads(ctx.database.db, batch.map((c) => c.id));
    for (const c of batch) {
      const stored = payloads.get(c.id);
      if (stored === undefined) continue;
      let e = event(c, JSON.parse(stored) as Record<string, unknown>);
      if (isRecordEvent(e) && target.filter !== null) e = await judge(ctx.database.db, e);
      if (subscriptionMatches(target, e)) wanted.add(c.id);
    }
    if (pending.length > 0) await nextTurn();
  }
  // The database's edge: the candidates are rows of events.
  return candidates.filter((c) => wanted.has(c.id)).map((c) => c.id as EventId);
}

/**
 * A job for every retained event in the window that the target's subscription matches and that it has no job for
 * (events from while it was disabled, or from before it existed). `since` moves forward to the delivered-jobs
 * retention horizon: the answer says which `since` was used. The events are walked a slice of SCAN at a time; a
 * slice's candidates are found by topic and collection in SQL, judged (payloads read only where needed), and their
 * jobs inserted BATCH to a transaction, guarded against a job made meanwhile (replayEvents).
 */
export async function replayTarget(ctx: Context, id: string, w: Window, judge: EventJudge): Promise<{ jobs: number; since: number }> {
  const target = await enabledTarget(ctx, id, 'replay events to it');
  const since = Math.max(w.since, deliveredRetentionHorizon(ctx.config, ctx.clock.now()));
  const sel = selection(target, { since, until: w.until });
  const { db, caps } = ctx.database;
  let jobs = 0;
  let afterId: string | null = null;
  const subscribed = sel.otherTopics.length > 0 || (sel.recordTopics.length > 0 && sel.collections?.length !== 0);
  while (subscribed && since <= w.until) {
    const throughId = await replayScanEnd(db, { from: since, afterId }, SCAN);
    const candidates = await replayCandidates(db, { from: since, afterId, throughId }, sel);
    const eventIds = await matching(ctx, target, candidates, judge);
    for (let i = 0; i < eventIds.length; i += BATCH) {
      const batch = eventIds.slice(i, i + BATCH);
      const created = await db.transaction().execute((trx) =>
        replayEvents(trx, caps, { now: ctx.clock.now(), webhookId: target.id, ordered: target.ordering === 'record', eventIds: batch }),
      );
      jobs += created.length;
      await nextTurn();
    }
    if (throughId === null) break;
    afterId = throughId;
    await nextTurn();
  }
  if (jobs > 0) await ctx.database.signal.notify().catch(() => {});
  return { jobs, since };
}
