import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobState } from '../../../src/db/tables.js';
import { retryDead } from '../../../src/webhooks/queue/retry-dead.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, T0, jobRow, queueContext, seedJob, seedTarget, snapshot } from '../../helpers/queue-fixtures.js';

const FIRST_DELAY_MS = 5_000;

/** dead → pending for one more full round (the admin's retry), never for a deleted target. */
describe.each(DIALECTS)('retryDead (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
  });
  afterEach(async () => t.close());

  it('starts a new round at attempt_count, due after the first delay; numbering and the last error stay', async () => {
    const { db } = t.ctx.database;
    const error = { code: 'http_status', message: 'The receiver answered 500.' };
    const before = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'dead', attemptCount: 5, roundStart: 0, nextAttemptAt: T0 + 3, lastError: error });
    expect(await retryDead(db, t.ctx.database.caps, { now: NOW, jobId: 'job_1', firstDelayMs: FIRST_DELAY_MS })).toBe(true);
    expect(await jobRow(db, 'job_1')).toEqual({ ...before, state: 'pending', round_start: 5, next_attempt_at: NOW + FIRST_DELAY_MS, updated_at: NOW });
  });

  it.each<JobState>(['pending', 'delivering', 'delivered'])('returns false and changes nothing for a %s job', async (state) => {
    const { db } = t.ctx.database;
    const lease = state === 'delivering' ? { id: 'lease_A', expiresAt: NOW + 1 } : null;
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state, attemptCount: 2, lease });
    const before = await snapshot(db);
    expect(await retryDead(db, t.ctx.database.caps, { now: NOW, jobId: 'job_1', firstDelayMs: FIRST_DELAY_MS })).toBe(false);
    expect(await snapshot(db)).toEqual(before);
  });

  it('returns false and changes nothing when the target is deleted, or the job does not exist', async () => {
    // A claim needs a live target: a job sent back to pending for a deleted one would wait for ever.
    const { db } = t.ctx.database;
    await seedTarget(db, 'wh_gone', { enabled: false, deletedAt: T0 + 1 });
    await seedJob(db, { id: 'job_1', webhookId: 'wh_gone', state: 'dead', attemptCount: 1, lastError: { code: 'target_deleted', message: 'x' } });
    const before = await snapshot(db);
    expect(await retryDead(db, t.ctx.database.caps, { now: NOW, jobId: 'job_1', firstDelayMs: FIRST_DELAY_MS })).toBe(false);
    expect(await retryDead(db, t.ctx.database.caps, { now: NOW, jobId: 'job_missing', firstDelayMs: FIRST_DELAY_MS })).toBe(false);
    expect(await snapshot(db)).toEqual(before);
  });

  it('still retries for a disabled target (its job waits pending until it is enabled)', async () => {
    const { db } = t.ctx.database;
    await seedTarget(db, 'wh_off', { enabled: false });
    const before = await seedJob(db, { id: 'job_1', webhookId: 'wh_off', state: 'dead', attemptCount: 3, roundStart: 0 });
    expect(await retryDead(db, t.ctx.database.caps, { now: NOW, jobId: 'job_1', firstDelayMs: 0 })).toBe(true);
    expect(await jobRow(db, 'job_1')).toEqual({ ...before, state: 'pending', round_start: 3, next_attempt_at: NOW, updated_at: NOW });
  });

  it('for a target that orders by record: back to held, released at once unless the record has an unfinished job', async () => {
    const { db, caps } = t.ctx.database;
    await seedTarget(db, 'wh_o', { ordering: 'record' });
    // rec_1 has nothing unfinished: its retried job is released (due now); rec_2's newer version is still pending.
    await seedJob(db, { id: 'job_1', webhookId: 'wh_o', recordId: 'rec_1', state: 'dead', attemptCount: 8 });
    await seedJob(db, { id: 'job_2', webhookId: 'wh_o', recordId: 'rec_2', state: 'dead', attemptCount: 8 });
    await seedJob(db, { id: 'job_3', webhookId: 'wh_o', recordId: 'rec_2', state: 'pending', ordered: true });
    await seedJob(db, { id: 'job_4', webhookId: 'wh_o', recordId: 'rec_2', state: 'held', ordered: true });
    expect(await retryDead(db, caps, { now: NOW, jobId: 'job_1', firstDelayMs: FIRST_DELAY_MS })).toBe(true);
    expect(await retryDead(db, caps, { now: NOW, jobId: 'job_2', firstDelayMs: FIRST_DELAY_MS })).toBe(true);
    // Revived, each holds its record's place again (the `ordered` mark follows the target's ordering now).
    expect(await jobRow(db, 'job_1')).toMatchObject({ state: 'pending', round_start: 8, next_attempt_at: NOW, ordered: 1 });
    // One job of a record in flight at a time: the retried one waits, and goes first once job_3 is done (the oldest held).
    expect(await jobRow(db, 'job_2')).toMatchObject({ state: 'held', round_start: 8, ordered: 1 });
    expect((await jobRow(db, 'job_3')).state).toBe('pending');
    expect((await jobRow(db, 'job_4')).state).toBe('held');
  });
});
