import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { complete } from '../../../src/webhooks/queue/complete.js';
import { killTargetJobs } from '../../../src/webhooks/queue/kill-target-jobs.js';
import { createTestContext, type TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, T0, jobRow, okAttempt, seedEvent, seedJob, seedTarget, snapshot } from '../../helpers/queue-fixtures.js';

/** pending|delivering → dead for a deleted target's unfinished jobs, in the delete's transaction. */
describe.each(DIALECTS)('killTargetJobs (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await createTestContext(dialect);
    await seedTarget(t.ctx.database.db, 'wh_a');
    await seedTarget(t.ctx.database.db, 'wh_b');
    await seedEvent(t.ctx.database.db);
  });
  afterEach(async () => t.close());

  it('kills the target\'s pending and delivering jobs only, and a later complete under the old lease lands nothing', async () => {
    const { db, caps } = t.ctx.database;
    const pending = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', attemptCount: 1, roundStart: 0, nextAttemptAt: T0 + 9, lastError: { code: 'timeout', message: 't' } });
    const delivering = await seedJob(db, { id: 'job_2', webhookId: 'wh_a', state: 'delivering', attemptCount: 2, lease: { id: 'lease_A', expiresAt: NOW + 5_000 } });
    const untouched = [
      await seedJob(db, { id: 'job_3', webhookId: 'wh_a', state: 'delivered', attemptCount: 1 }),
      await seedJob(db, { id: 'job_4', webhookId: 'wh_a', state: 'dead', attemptCount: 3, lastError: { code: 'http_status', message: '500' } }),
      await seedJob(db, { id: 'job_5', webhookId: 'wh_b' }),
      await seedJob(db, { id: 'job_6', webhookId: 'wh_b', state: 'delivering', lease: { id: 'lease_A', expiresAt: NOW + 5_000 } }),
    ];
    expect(await killTargetJobs(db, { now: NOW, webhookId: 'wh_a' })).toBe(2);
    // attempt_count and next_attempt_at stay: killing is not an attempt.
    const killed = { state: 'dead', lease_id: null, lease_expires_at: null, last_error_code: 'target_deleted', last_error_message: 'The webhook target was deleted.', updated_at: NOW };
    const after = { jobs: [{ ...pending, ...killed }, { ...delivering, ...killed }, ...untouched], attempts: [] };
    expect(await snapshot(db)).toEqual(after);

    // The worker that held job_2 finishes its attempt after the delete: its write must not revive the job.
    expect((await complete(db, caps, { now: NOW + 1, done: [{ job: { id: 'job_2', lease: 'lease_A' }, attempt: okAttempt() }] })).size).toBe(0);
    expect(await snapshot(db)).toEqual(after);
    expect(await killTargetJobs(db, { now: NOW + 2, webhookId: 'wh_a' })).toBe(0);
  });

  it('kills held jobs too', async () => {
    const { db } = t.ctx.database;
    await seedJob(db, { id: 'job_h', webhookId: 'wh_a', state: 'held' });
    expect(await killTargetJobs(db, { now: NOW, webhookId: 'wh_a' })).toBe(1);
    expect((await jobRow(db, 'job_h'))?.state).toBe('dead');
  });
});
