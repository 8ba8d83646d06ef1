import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Decision } from '../../src/webhooks/decision.js';
import type { HeldJob } from '../../src/webhooks/queue/job.js';
import { recordConsequences, type Written } from '../../src/webhooks/worker/consequences.js';
import type { TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';
import { NOW, failedAttempt, okAttempt, queueContext, seedTarget } from '../helpers/queue-fixtures.js';

const RULE = { afterMs: 60_000, minFailures: 3 };
const error = { code: 'http_status', message: 'The receiver answered 500.' };
const held = (id: string, webhookId = 'wh_a', topic = 'record.created'): HeldJob => ({
  id, webhookId, lease: 'lease_A', leaseExpiresAt: NOW + 60_000, attemptCount: 0, roundStart: 0,
  body: `{"version":"1","id":"${id}","topic":"${topic}","collection":"issues","recordId":"rec_1","payload":{}}`,
});
const written = (job: HeldJob, decision: Decision, startedAt: number): Written => ({
  job, decision, applied: true, attempt: decision.kind === 'delivered' ? okAttempt(startedAt) : { ...failedAttempt(), startedAt },
});
const retry: Decision = { kind: 'retry', at: NOW + 5_000, error };

/** What written attempts cause on their targets: counters, auto-disable, webhook.disabled (consequences.ts). */
describe.each(DIALECTS)('recordConsequences (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
    await seedTarget(t.ctx.database.db, 'wh_b');
  });
  afterEach(async () => t.close());

  const run = (now: number, items: Written[]) =>
    t.ctx.database.db.transaction().execute((trx) => recordConsequences(trx, t.ctx.database.caps, { now, written: items, rule: RULE }));
  const target = async (id: string) => {
    const r = await t.ctx.database.db.selectFrom('webhooks').select(['enabled', 'disabled_reason', 'disabled_at', 'failing_since', 'failed_attempts']).where('id', '=', id).executeTakeFirstOrThrow();
    return { ...r, disabled_at: r.disabled_at === null ? null : Number(r.disabled_at), failing_since: r.failing_since === null ? null : Number(r.failing_since) };
  };
  const operationalEvents = () => t.ctx.database.db.selectFrom('events').select(['topic', 'collection']).where('collection', '=', '_svc').execute();

  it('attempts not made never count; failed ones start a streak at the earliest and count; the rule disables once both hold', async () => {
    const notAttempted: Decision = { kind: 'not-attempted', reason: 'shutdown' };
    await run(NOW, [written(held('j1'), notAttempted, NOW), written(held('j2'), notAttempted, NOW)]);
    expect(await target('wh_a')).toMatchObject({ failing_since: null, failed_attempts: 0 });

    await run(NOW, [written(held('j1'), retry, NOW - 10), written(held('j2'), retry, NOW - 20), written(held('j3'), retry, NOW - 5)]);
    // Three failures but not yet a minute of them: still enabled.
    expect(await target('wh_a')).toEqual({ enabled: 1, disabled_reason: null, disabled_at: null, failing_since: NOW - 20, failed_attempts: 3 });
    expect(await operationalEvents()).toEqual([]);

    const { disabledTargets, events } = await run(NOW + 60_000, [written(held('j1'), retry, NOW + 59_000)]);
    expect(disabledTargets).toEqual(['wh_a']);
    expect(events).toHaveLength(1);
    expect(await target('wh_a')).toEqual({ enabled: 0, disabled_reason: 'failing', disabled_at: NOW + 60_000, failing_since: NOW - 20, failed_attempts: 4 });
    expect(await operationalEvents()).toEqual([{ topic: 'webhook.disabled', collection: '_svc' }]);
    expect(await target('wh_b')).toMatchObject({ enabled: 1, failed_attempts: 0 });
  });

  it('a 410 disables at once (gone); failures older than a success of the same batch do not count', async () => {
    await run(NOW, [written(held('j1', 'wh_b'), retry, NOW - 100), written(held('j2', 'wh_b'), { kind: 'delivered' }, NOW - 50)]);
    expect(await target('wh_b')).toMatchObject({ failing_since: null, failed_attempts: 0 });
    await run(NOW, [written(held('j3'), { ...retry, disable: 'gone' }, NOW)]);
    expect(await target('wh_a')).toMatchObject({ enabled: 0, disabled_reason: 'gone', failed_attempts: 1 });
  });

  it('a target disabled only by jobs of operational events is disabled without a webhook.disabled (no cascades)', async () => {
    const { events } = await run(NOW, [written(held('j1', 'wh_a', 'delivery.dead'), { ...retry, disable: 'gone' }, NOW)]);
    expect(await target('wh_a')).toMatchObject({ enabled: 0, disabled_reason: 'gone' });
    expect(events).toEqual([]);
    expect(await operationalEvents()).toEqual([]);
  });
});
