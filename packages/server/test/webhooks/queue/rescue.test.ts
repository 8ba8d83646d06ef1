import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claim } from '../../../src/webhooks/queue/claim.js';
import { complete } from '../../../src/webhooks/queue/complete.js';
import { rescue } from '../../../src/webhooks/queue/rescue.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, attemptRow, okAttempt, queueContext, seedJob, snapshot } from '../../helpers/queue-fixtures.js';

/** delivering → pending once the lease has expired: its worker died or stalled. No attempt is recorded. */
describe.each(DIALECTS)('rescue (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
  });
  afterEach(async () => t.close());

  it('rescues only delivering jobs whose lease expired before now; at expiry the lease still holds', async () => {
    const { db } = t.ctx.database;
    const error = { code: 'timeout', message: 't' };
    const expired = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'delivering', attemptCount: 3, roundStart: 2, lastError: error, lease: { id: 'lease_A', expiresAt: NOW - 1 } });
    const atExpiry = await seedJob(db, { id: 'job_2', webhookId: 'wh_a', state: 'delivering', lease: { id: 'lease_A', expiresAt: NOW } });
    const live = await seedJob(db, { id: 'job_3', webhookId: 'wh_a', state: 'delivering', lease: { id: 'lease_A', expiresAt: NOW + 1 } });
    // Other states, even with an old lease left on them, are not the rescue's.
    const others = [
      await seedJob(db, { id: 'job_4', webhookId: 'wh_a', state: 'pending', lease: { id: 'lease_A', expiresAt: NOW - 10 } }),
      await seedJob(db, { id: 'job_5', webhookId: 'wh_a', state: 'delivered', attemptCount: 1, lease: { id: 'lease_A', expiresAt: NOW - 10 } }),
      await seedJob(db, { id: 'job_6', webhookId: 'wh_a', state: 'dead', attemptCount: 3, lease: { id: 'lease_A', expiresAt: NOW - 10 } }),
    ];
    expect(await rescue(db, { now: NOW })).toBe(1);
    expect(await snapshot(db)).toEqual({
      jobs: [{ ...expired, state: 'pending', lease_id: null, lease_expires_at: null, updated_at: NOW }, atExpiry, live, ...others],
      attempts: [],
    });
    expect(await rescue(db, { now: NOW })).toBe(0);
  });

  it('fences the old claim off: claim A, rescue, claim B; A\'s complete lands nothing, B\'s lands', async () => {
    const { db, caps } = t.ctx.database;
    const before = await seedJob(db, { id: 'job_1', webhookId: 'wh_a' });
    const take = async (now: number) => (await claim(db, caps, { now, leaseMs: 1_000, targets: [{ webhookId: 'wh_a', limit: 1 }] }))[0]![0]!;
    const a = await take(NOW);
    expect(await rescue(db, { now: NOW + 1_001 })).toBe(1);
    const b = await take(NOW + 1_002);
    expect(b.lease).not.toBe(a.lease);

    const held = await snapshot(db);
    expect((await complete(db, caps, { now: NOW + 1_100, done: [{ job: a, attempt: okAttempt() }] })).size).toBe(0);
    expect(await snapshot(db)).toEqual(held);

    const attempt = okAttempt(NOW + 1_050);
    expect([...(await complete(db, caps, { now: NOW + 1_200, done: [{ job: b, attempt }] }))]).toEqual(['job_1']);
    expect(await snapshot(db)).toEqual({
      jobs: [{ ...before, state: 'delivered', attempt_count: 1, updated_at: NOW + 1_200 }],
      attempts: [attemptRow('job_1', 1, attempt)],
    });
  });
});
