import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scheduleRetries, scheduleRetry } from '../../../src/webhooks/queue/schedule-retry.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, T0, attemptRow, failedAttempt, jobRow, queueContext, seedJob, seedTarget, snapshot } from '../../helpers/queue-fixtures.js';

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

  it('a batch of 300 (two statements of 256 and 64 rows, padded) applies each job under its own lease and `at`, skips the fenced, records each attempt once', async () => {
    const { db } = t.ctx.database;
    await seedTarget(db, 'wh_b');
    const ids = Array.from({ length: 300 }, (_, i) => `job_${String(i).padStart(3, '0')}`);
    for (const [i, id] of ids.entries()) {
      await seedJob(db, { id, webhookId: i % 2 ? 'wh_b' : 'wh_a', state: 'delivering', attemptCount: i % 3, lease: { id: `lease_${i % 7}`, expiresAt: NOW + 5_000 } });
    }
    // Every 10th names a lease that is not its job's (an old claim's result): left alone, no attempt.
    const fenced = (i: number) => i % 10 === 0;
    const retries = ids.map((id, i) => ({
      job: { id, lease: fenced(i) ? 'lease_old' : `lease_${i % 7}` },
      attempt: failedAttempt('http_status', `The receiver answered 5${String(i % 100).padStart(2, '0')}.`),
      at: NOW + 1_000 + i,
    }));
    const applied = await scheduleRetries(db, { now: NOW, retries });
    expect([...applied].sort()).toEqual(ids.filter((_, i) => !fenced(i)));
    const { jobs, attempts } = await snapshot(db);
    for (const [i, id] of ids.entries()) {
      const row = jobs.find((j) => j.id === id)!;
      if (fenced(i)) {
        expect(row.state).toBe('delivering');
        continue;
      }
      expect(row).toMatchObject({ state: 'pending', attempt_count: (i % 3) + 1, next_attempt_at: NOW + 1_000 + i, lease_id: null, last_error_message: retries[i]!.attempt.error.message });
    }
    const expected = ids.flatMap((id, i) => (fenced(i) ? [] : [attemptRow(id, (i % 3) + 1, retries[i]!.attempt, i % 2 ? 'wh_b' : 'wh_a')]));
    expect([...attempts].sort((a, b) => (a.job_id < b.job_id ? -1 : 1))).toEqual(expected);
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
