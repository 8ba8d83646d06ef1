import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import type { Decision } from '../decision.js';
import { envelopeTopic } from '../envelope.js';
import { enqueueDeliveryDead, enqueueWebhookDisabled } from '../operational-events.js';
import type { Enqueued } from '../queue/enqueue.js';
import type { AttemptRecord, HeldJob } from '../queue/job.js';
import { findJob } from '../queue/jobs-store.js';
import { recordFailures, type AutoDisableRule, type FailureTally } from '../target-health-store.js';
import { isOperationalTopic } from '../topics.js';

/** A transition the completer wrote (or tried to: `applied` is false when the lease was lost). */
export interface Written {
  job: HeldJob;
  decision: Decision;
  attempt: AttemptRecord;
  applied: boolean;
}

/**
 * What a batch of written attempts causes beyond its jobs, in the same transaction: failed attempts counted on their
 * targets (a target a 410 or the auto-disable rule strikes is disabled), and the operational events of SPEC §10 —
 * `delivery.dead` for each job that died, `webhook.disabled` for each target svc disabled. A job of an operational
 * event still counts towards its target's failures, but causes no operational event itself (no cascades).
 */
export async function recordConsequences(
  trx: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { now: number; written: readonly Written[]; rule: AutoDisableRule },
): Promise<{ events: Enqueued[]; disabledTargets: string[] }> {
  const { now } = opts;
  const applied = opts.written.filter((w) => w.applied && w.decision.kind !== 'not-attempted');
  // A failure that started before a success of the same target in this batch is no longer part of a streak.
  const lastSuccess = new Map<string, number>();
  for (const w of applied) {
    if (w.decision.kind === 'delivered') lastSuccess.set(w.job.webhookId, Math.max(lastSuccess.get(w.job.webhookId) ?? -Infinity, w.attempt.startedAt));
  }
  const tallies = new Map<string, FailureTally & { causesEvents: boolean }>();
  for (const w of applied) {
    const d = w.decision;
    if (d.kind !== 'retry' && d.kind !== 'dead') continue;
    if (w.attempt.startedAt < (lastSuccess.get(w.job.webhookId) ?? -Infinity)) continue;
    const operational = isOperationalTopic(envelopeTopic(w.job.body));
    const t = tallies.get(w.job.webhookId) ?? { webhookId: w.job.webhookId, failures: 0, firstAt: w.attempt.startedAt, gone: false, causesEvents: false };
    t.failures += 1;
    t.firstAt = Math.min(t.firstAt, w.attempt.startedAt);
    t.gone ||= d.kind === 'retry' && d.disable === 'gone';
    t.causesEvents ||= !operational;
    tallies.set(w.job.webhookId, t);
  }
  const events: Enqueued[] = [];
  const disabled = await recordFailures(trx, { now, tallies: [...tallies.values()], rule: opts.rule });
  for (const { target, reason } of disabled) {
    if (tallies.get(target.id)?.causesEvents) events.push(await enqueueWebhookDisabled(trx, caps, { now, target, reason }));
  }
  for (const w of applied) {
    if (w.decision.kind !== 'dead') continue;
    const job = await findJob(trx, w.job.id);
    const enqueued = job ? await enqueueDeliveryDead(trx, caps, { now, job }) : null;
    if (enqueued) events.push(enqueued);
  }
  return { events, disabledTargets: disabled.map((d) => d.target.id) };
}
