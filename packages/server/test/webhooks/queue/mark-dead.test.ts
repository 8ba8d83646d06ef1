import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { markDead } from '../../../src/webhooks/queue/mark-dead.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, T0, attemptRow, failedAttempt, jobRow, queueContext, seedJob, snapshot } from '../../helpers/queue-fixtures.js';

/** delivering → dead after the round's last failed attempt, recorded with it; fenced by (id, lease). */
describe.each(DIALECTS)('markDead (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
  });
  afterEach(async () => t.close());

  it('kills the job with its error, keeps next_attempt_at, and records the attempt numbered attempt_count after', async () => {
    const { db } = t.ctx.database;
    const before = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'delivering', attemptCount: 4, roundStart: 2, nextAttemptAt: T0 + 7, lease: { id: 'lease_A', expiresAt: NOW + 5_000 } });
    const attempt = failedAttempt('connect_refused', 'Connection refused.');
    expect(await markDead(db, t.ctx.database.caps, { now: NOW, job: { id: 'job_1', lease: 'lease_A' }, attempt })).toBe(true);
    expect(await jobRow(db, 'job_1')).toEqual({
      ...before, state: 'dead', attempt_count: 5, lease_id: null, lease_expires_at: null,
      last_error_code: 'connect_refused', last_error_message: 'Connection refused.', updated_at: NOW,
    });
    expect((await snapshot(db)).attempts).toEqual([attemptRow('job_1', 5, attempt)]);
  });

  it('returns false and writes nothing, not even the attempt, under a stale lease or for a job not delivering', async () => {
    const { db } = t.ctx.database;
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'delivering', attemptCount: 2, lease: { id: 'lease_B', expiresAt: NOW + 5_000 } });
    await seedJob(db, { id: 'job_2', webhookId: 'wh_a', state: 'pending', lease: { id: 'lease_A', expiresAt: NOW + 5_000 } });
    await seedJob(db, { id: 'job_3', webhookId: 'wh_a', state: 'dead', attemptCount: 3, lastError: { code: 'target_deleted', message: 'x' } });
    const before = await snapshot(db);
    for (const id of ['job_1', 'job_2', 'job_3']) {
      expect(await markDead(db, t.ctx.database.caps, { now: NOW, job: { id, lease: 'lease_A' }, attempt: failedAttempt() })).toBe(false);
    }
    expect(await snapshot(db)).toEqual(before);
  });

  it('releases the next held job of the dead job\'s record (ordering record)', async () => {
    const { db, caps } = t.ctx.database;
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', recordId: 'rec_1', state: 'delivering', lease: { id: 'lease_A', expiresAt: NOW + 5_000 } });
    const next = await seedJob(db, { id: 'job_2', webhookId: 'wh_a', recordId: 'rec_1', state: 'held' });
    expect(await markDead(db, caps, { now: NOW, job: { id: 'job_1', lease: 'lease_A' }, attempt: failedAttempt() })).toBe(true);
    expect(await jobRow(db, 'job_2')).toEqual({ ...next, state: 'pending', next_attempt_at: NOW, updated_at: NOW });
  });
});
