import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { release } from '../../../src/webhooks/queue/release.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, T0, queueContext, seedJob, snapshot } from '../../helpers/queue-fixtures.js';

/** delivering → pending for svc's own reasons: no attempt used, due time kept, fenced by (id, lease). */
describe.each(DIALECTS)('release (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
  });
  afterEach(async () => t.close());

  it('puts held jobs back as they were before the claim, and leaves stale and non-delivering ones alone', async () => {
    const { db, caps } = t.ctx.database;
    const error = { code: 'http_status', message: 'The receiver answered 500.' };
    const j1 = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'delivering', attemptCount: 2, roundStart: 1, nextAttemptAt: T0 + 5, lastError: error, lease: { id: 'lease_A', expiresAt: NOW + 1 } });
    const j2 = await seedJob(db, { id: 'job_2', webhookId: 'wh_a', state: 'delivering', nextAttemptAt: T0 + 6, lease: { id: 'lease_A', expiresAt: NOW + 1 } });
    const stale = await seedJob(db, { id: 'job_3', webhookId: 'wh_a', state: 'delivering', lease: { id: 'lease_B', expiresAt: NOW + 1 } });
    const delivered = await seedJob(db, { id: 'job_4', webhookId: 'wh_a', state: 'delivered', attemptCount: 1 });
    const jobs = ['job_1', 'job_2', 'job_3', 'job_4'].map((id) => ({ id, lease: 'lease_A' }));
    expect(await release(db, caps, { now: NOW, jobs })).toBe(2);
    const released = { state: 'pending', lease_id: null, lease_expires_at: null, updated_at: NOW };
    // attempt_count, round_start, next_attempt_at and the last error stay: no attempt was made.
    expect(await snapshot(db)).toEqual({ jobs: [{ ...j1, ...released }, { ...j2, ...released }, stale, delivered], attempts: [] });
  });

  it('returns 0 and writes nothing for an empty list or a stale lease', async () => {
    const { db, caps } = t.ctx.database;
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'delivering', lease: { id: 'lease_B', expiresAt: NOW + 1 } });
    const before = await snapshot(db);
    expect(await release(db, caps, { now: NOW, jobs: [] })).toBe(0);
    expect(await release(db, caps, { now: NOW, jobs: [{ id: 'job_1', lease: 'lease_A' }] })).toBe(0);
    expect(await snapshot(db)).toEqual(before);
  });
});
