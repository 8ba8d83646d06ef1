import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promoteHeld } from '../../../src/webhooks/queue/promote-held.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, T0, queueContext, seedJob, seedTarget, snapshot } from '../../helpers/queue-fixtures.js';

/** held → pending: the oldest held job of a record once nothing of that record is pending or delivering. */
describe.each(DIALECTS)('promoteHeld (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
    await seedTarget(t.ctx.database.db, 'wh_b');
  });
  afterEach(async () => t.close());

  it('releases the oldest held job of the finished job\'s record only, due now', async () => {
    const { db, caps } = t.ctx.database;
    const done = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', recordId: 'rec_1', state: 'delivered', attemptCount: 1, ordered: true });
    const next = await seedJob(db, { id: 'job_2', webhookId: 'wh_a', recordId: 'rec_1', state: 'held', ordered: true });
    const later = await seedJob(db, { id: 'job_3', webhookId: 'wh_a', recordId: 'rec_1', state: 'held', ordered: true });
    const otherRecord = await seedJob(db, { id: 'job_4', webhookId: 'wh_a', recordId: 'rec_2', state: 'held', ordered: true });
    const otherTarget = await seedJob(db, { id: 'job_5', webhookId: 'wh_b', recordId: 'rec_1', state: 'held', ordered: true });
    expect(await promoteHeld(db, caps, { now: NOW, after: ['job_1'] })).toBe(1);
    expect((await snapshot(db)).jobs).toEqual([done, { ...next, state: 'pending', next_attempt_at: NOW, updated_at: NOW }, later, otherRecord, otherTarget]);
  });

  it('releases nothing while the record has a pending or delivering job, or for an empty list', async () => {
    const { db, caps } = t.ctx.database;
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', recordId: 'rec_1', state: 'dead', attemptCount: 3, ordered: true });
    await seedJob(db, { id: 'job_2', webhookId: 'wh_a', recordId: 'rec_1', state: 'pending', nextAttemptAt: T0, ordered: true });
    await seedJob(db, { id: 'job_3', webhookId: 'wh_a', recordId: 'rec_1', state: 'held', ordered: true });
    const before = await snapshot(db);
    expect(await promoteHeld(db, caps, { now: NOW, after: ['job_1'] })).toBe(0);
    expect(await promoteHeld(db, caps, { now: NOW, after: [] })).toBe(0);
    expect(await promoteHeld(db, caps, { now: NOW })).toBe(0);
    expect(await snapshot(db)).toEqual(before);
  });

  it('without a list, sweeps every record whose held jobs wait for nothing', async () => {
    const { db, caps } = t.ctx.database;
    const a = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', recordId: 'rec_1', state: 'held', ordered: true });
    const a2 = await seedJob(db, { id: 'job_2', webhookId: 'wh_a', recordId: 'rec_1', state: 'held', ordered: true });
    const b = await seedJob(db, { id: 'job_3', webhookId: 'wh_b', recordId: 'rec_2', state: 'held', ordered: true });
    expect(await promoteHeld(db, caps, { now: NOW })).toBe(2);
    const promoted = { state: 'pending', next_attempt_at: NOW, updated_at: NOW };
    expect((await snapshot(db)).jobs).toEqual([{ ...a, ...promoted }, a2, { ...b, ...promoted }]);
  });
});
