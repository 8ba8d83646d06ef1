import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scheduleRetry } from '../../../src/webhooks/queue/schedule-retry.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, T0, attemptRow, failedAttempt, jobRow, queueContext, seedJob, snapshot } from '../../helpers/queue-fixtures.js';

/** delivering → pending at `at`, the failed attempt recorded with it; fenced by (id, lease). */
describe.each(DIALECTS)('scheduleRetry (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
  });
  afterEach(async () => t.close());

  it('puts the job back at `at` with the error and one attempt numbered attempt_count after', async () => {
    const { db } = t.ctx.database;
    const before = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'delivering', attemptCount: 1, roundStart: 1, nextAttemptAt: T0, lease: { id: 'lease_A', expiresAt: NOW + 5_000 } });
    const attempt = failedAttempt('http_status', 'The receiver answered 503.');
    expect(await scheduleRetry(db, { now: NOW, job: { id: 'job_1', lease: 'lease_A' }, attempt, at: NOW + 30_000 })).toBe(true);
    expect(await jobRow(db, 'job_1')).toEqual({
      ...before, state: 'pending', attempt_count: 2, next_attempt_at: NOW + 30_000, lease_id: null, lease_expires_at: null,
      last_error_code: 'http_status', last_error_message: 'The receiver answered 503.', updated_at: NOW,
    });
    expect((await snapshot(db)).attempts).toEqual([attemptRow('job_1', 2, attempt)]);
  });

  it('returns false and writes nothing, not even the attempt, under a stale lease or for a job not delivering', async () => {
    const { db } = t.ctx.database;
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'delivering', attemptCount: 1, lease: { id: 'lease_B', expiresAt: NOW + 5_000 } });
    await seedJob(db, { id: 'job_2', webhookId: 'wh_a', state: 'pending', lease: { id: 'lease_A', expiresAt: NOW + 5_000 } });
    await seedJob(db, { id: 'job_3', webhookId: 'wh_a', state: 'delivered', attemptCount: 1 });
    const before = await snapshot(db);
    for (const id of ['job_1', 'job_2', 'job_3']) {
      expect(await scheduleRetry(db, { now: NOW, job: { id, lease: 'lease_A' }, attempt: failedAttempt(), at: NOW + 30_000 })).toBe(false);
    }
    expect(await snapshot(db)).toEqual(before);
  });

  it('inside a transaction that rolls back, leaves neither the update nor the attempt', async () => {
    // The attempt and the transition must commit together: the caller's transaction is used, not a nested one.
    const { db } = t.ctx.database;
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'delivering', lease: { id: 'lease_A', expiresAt: NOW + 5_000 } });
    const before = await snapshot(db);
    await expect(
      db.transaction().execute(async (trx) => {
        expect(await scheduleRetry(trx, { now: NOW, job: { id: 'job_1', lease: 'lease_A' }, attempt: failedAttempt(), at: NOW + 1 })).toBe(true);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await snapshot(db)).toEqual(before);
  });
});
