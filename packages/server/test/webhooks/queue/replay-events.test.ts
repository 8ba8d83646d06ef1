import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replayEvents } from '../../../src/webhooks/queue/replay-events.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, allJobs, queueContext, seedEvent, seedJob, seedTarget, snapshot } from '../../helpers/queue-fixtures.js';

/** [*] → pending: one job of the target per named event it has no job for yet. */
describe.each(DIALECTS)('replayEvents (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
  });
  afterEach(async () => t.close());

  it('creates a pending job per event, built from the event row, due now, with no attempts', async () => {
    const { db } = t.ctx.database;
    await seedEvent(db, 'evt_2');
    const ids = await replayEvents(db, t.ctx.database.caps, { now: NOW, webhookId: 'wh_a', ordered: false, eventIds: ['evt_1', 'evt_2'] });
    expect(ids).toHaveLength(2);
    const jobs = await allJobs(db);
    expect(jobs.map((j) => j.id).sort()).toEqual([...ids].sort());
    for (const job of jobs) {
      expect(job).toEqual({
        id: job.id,
        webhook_id: 'wh_a',
        event_id: job.event_id,
        topic: 'record.created',
        collection: 'issues',
        record_id: 'rec_1',
        state: 'pending',
        attempt_count: 0,
        round_start: 0,
        next_attempt_at: NOW,
        lease_id: null,
        lease_expires_at: null,
        last_error_code: null,
        last_error_message: null,
        created_at: NOW,
        updated_at: NOW,
        ordered: 0,
      });
      expect(job.id).toMatch(/^del_/);
    }
    expect(jobs.map((j) => j.event_id).sort()).toEqual(['evt_1', 'evt_2']);
  });

  it("skips an event the target already has a job for, and one without a stored payload; another target's job does not count", async () => {
    const { db } = t.ctx.database;
    await seedTarget(db, 'wh_b');
    await seedEvent(db, 'evt_2');
    await seedEvent(db, 'evt_old', null);
    await seedJob(db, { id: 'job_a1', webhookId: 'wh_a', eventId: 'evt_1', state: 'delivered' });
    await seedJob(db, { id: 'job_b2', webhookId: 'wh_b', eventId: 'evt_2', state: 'delivered' });
    const ids = await replayEvents(db, t.ctx.database.caps, { now: NOW, webhookId: 'wh_a', ordered: false, eventIds: ['evt_1', 'evt_2', 'evt_old', 'evt_missing'] });
    expect(ids).toHaveLength(1);
    const created = (await allJobs(db)).filter((j) => j.id === ids[0]);
    expect(created).toMatchObject([{ webhook_id: 'wh_a', event_id: 'evt_2', state: 'pending' }]);
    // Asked again, it finds a job for every event and changes nothing.
    const before = await snapshot(db);
    expect(await replayEvents(db, t.ctx.database.caps, { now: NOW + 1, webhookId: 'wh_a', ordered: false, eventIds: ['evt_1', 'evt_2'] })).toEqual([]);
    expect(await snapshot(db)).toEqual(before);
  });
});
