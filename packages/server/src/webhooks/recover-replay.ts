import type { Kysely } from 'kysely';
import type { Config } from '../config/schema.js';
import type { Tables } from '../db/tables.js';
import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { eventsWithoutJob } from './queue/jobs-store.js';
import { recoverDead } from './queue/recover-dead.js';
import { replayEvents } from './queue/replay-events.js';
import type { EventInput } from './envelope.js';
import { subscriptionMatches } from './subscription-match.js';
import type { Topic } from './topics.js';
import { requireTarget } from './targets.js';
import type { TargetRow } from './targets-store.js';

/**
 * Recover and replay (SPEC §10): sending a target what it missed. Both work in batches of BATCH jobs or events, each
 * its own short transaction, and answer the total; both refuse a disabled target (its jobs would only wait).
 */

export const BATCH = 500;
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
  for (;;) {
    const n = await db.transaction().execute((trx) =>
      recoverDead(trx, caps, {
        now: ctx.clock.now(),
        webhookId: target.id,
        from: w.since,
        to: w.until,
        firstDelayMs: ctx.config.webhookRetrySchedule[0] ?? 0,
        limit: BATCH,
      }),
    );
    jobs += n;
    if (n < BATCH) break;
  }
  if (jobs > 0) await ctx.database.signal.notify().catch(() => {});
  return { jobs };
}

/**
 * A job for every retained event in the window that the target's subscription matches and that it has no job for
 * (events from while it was disabled, or from before it existed). `since` moves forward to the delivered-jobs
 * retention horizon: the answer says which `since` was used.
 */
export async function replayTarget(
  ctx: Context,
  id: string,
  w: Window,
  /** Gives a stored record event its filter judge (records layer: it knows the collection's fields). */
  judge: (db: Kysely<Tables>, event: EventInput) => Promise<EventInput>,
): Promise<{ jobs: number; since: number }> {
  const target = await enabledTarget(ctx, id, 'replay events to it');
  const since = Math.max(w.since, deliveredRetentionHorizon(ctx.config, ctx.clock.now()));
  let jobs = 0;
  let afterId: string | null = null;
  while (since <= w.until) {
    const page = await ctx.database.db.transaction().execute(async (trx) => {
      const events = await eventsWithoutJob(trx, { webhookId: target.id, from: since, to: w.until, afterId, limit: BATCH });
      const wanted: typeof events = [];
      for (const e of events) {
        const event = await judge(trx, { topic: e.topic as Topic, collection: e.collection, recordId: e.record_id, payload: JSON.parse(e.payload ?? '{}') as Record<string, unknown> });
        if (subscriptionMatches(target, event)) wanted.push(e);
      }
      const created = await replayEvents(trx, ctx.database.caps, { now: ctx.clock.now(), webhookId: target.id, ordered: target.ordering === 'record', eventIds: wanted.map((e) => e.id) });
      return { created: created.length, last: events.at(-1)?.id ?? null, full: events.length === BATCH };
    });
    jobs += page.created;
    if (!page.full) break;
    afterId = page.last;
  }
  if (jobs > 0) await ctx.database.signal.notify().catch(() => {});
  return { jobs, since };
}
