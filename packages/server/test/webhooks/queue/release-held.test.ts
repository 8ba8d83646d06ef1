import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { markOrdered, releaseHeld } from '../../../src/webhooks/queue/release-held.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, queueContext, seedEvent, seedJob, seedTarget, snapshot } from '../../helpers/queue-fixtures.js';

/** held → pending for every held job of one target (its ordering was switched off). */
describe.each(DIALECTS)('releaseHeld (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
    await seedTarget(t.ctx.database.db, 'wh_b');
  });
  afterEach(async () => t.close());

  it('makes the target\'s held jobs pending and due now, and touches nothing else', async () => {
    const { db } = t.ctx.database;
    const head = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', recordId: 'rec_1', state: 'delivering', lease: { id: 'lease_A', expiresAt: NOW + 1 } });
    const h1 = await seedJob(db, { id: 'job_2', webhookId: 'wh_a', recordId: 'rec_1', state: 'held' });
    const h2 = await seedJob(db, { id: 'job_3', webhookId: 'wh_a', recordId: 'rec_1', state: 'held' });
    const other = await seedJob(db, { id: 'job_4', webhookId: 'wh_b', recordId: 'rec_1', state: 'held' });
    expect(await releaseHeld(db, { now: NOW, webhookId: 'wh_a' })).toBe(2);
    const released = { state: 'pending', next_attempt_at: NOW, updated_at: NOW };
    expect((await snapshot(db)).jobs).toEqual([head, { ...h1, ...released }, { ...h2, ...released }, other]);
    expect(await releaseHeld(db, { now: NOW, webhookId: 'wh_a' })).toBe(0);
  });

  it('markOrdered: ordering switched on marks the target\'s unfinished record jobs only (finished ones, other topics and targets stay)', async () => {
    const { db } = t.ctx.database;
    const mark = { ordered: 1 };
    const pending = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'pending' });
    const delivering = await seedJob(db, { id: 'job_2', webhookId: 'wh_a', state: 'delivering', lease: { id: 'lease_A', expiresAt: NOW + 1 } });
    const held = await seedJob(db, { id: 'job_3', webhookId: 'wh_a', state: 'held' });
    const delivered = await seedJob(db, { id: 'job_4', webhookId: 'wh_a', state: 'delivered' });
    const dead = await seedJob(db, { id: 'job_5', webhookId: 'wh_a', state: 'dead' });
    const other = await seedJob(db, { id: 'job_6', webhookId: 'wh_b', state: 'pending' });
    await seedEvent(db, 'evt_test');
    const test = await seedJob(db, { id: 'job_7', webhookId: 'wh_a', eventId: 'evt_test', state: 'pending' });
    await db.updateTable('delivery_jobs').set({ topic: 'webhook.test' }).where('id', '=', 'job_7').execute();
    expect(await markOrdered(db, 'wh_a')).toBe(3);
    expect((await snapshot(db)).jobs).toEqual([{ ...pending, ...mark }, { ...delivering, ...mark }, { ...held, ...mark }, delivered, dead, other, { ...test, topic: 'webhook.test' }]);
    expect(await markOrdered(db, 'wh_a')).toBe(0);
  });
});
