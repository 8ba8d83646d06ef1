import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claim } from '../../../src/webhooks/queue/claim.js';
import { complete } from '../../../src/webhooks/queue/complete.js';
import { rescue } from '../../../src/webhooks/queue/rescue.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, T0, attemptRow, failedAttempt, jobRow, okAttempt, queueContext, seedJob, seedTarget, snapshot } from '../../helpers/queue-fixtures.js';

/** delivering → delivered, fenced by (id, lease): a worker whose lease was lost lands nothing, not even its attempt. */
describe.each(DIALECTS)('complete (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
  });
  afterEach(async () => t.close());

  it('delivers a held job, clears its lease and error, and numbers its attempt attempt_count after', async () => {
    const { db, caps } = t.ctx.database;
    const before = await seedJob(db, {
      id: 'job_1', webhookId: 'wh_a', state: 'delivering', attemptCount: 2, roundStart: 1,
      lease: { id: 'lease_A', expiresAt: NOW + 30_000 }, lastError: { code: 'timeout', message: 'timed out' },
    });
    const applied = await complete(db, caps, { now: NOW, done: [{ job: { id: 'job_1', lease: 'lease_A' }, attempt: okAttempt() }] });
    expect([...applied]).toEqual(['job_1']);
    expect(await jobRow(db, 'job_1')).toEqual({
      ...before, state: 'delivered', attempt_count: 3, lease_id: null, lease_expires_at: null,
      last_error_code: null, last_error_message: null, updated_at: NOW,
    });
    expect((await snapshot(db)).attempts).toEqual([attemptRow('job_1', 3, okAttempt())]);
  });

  it('ends the target\'s failing streak (the auto-disable counters), and only that target\'s', async () => {
    const { db, caps } = t.ctx.database;
    await seedTarget(db, 'wh_b');
    await db.updateTable('webhooks').set({ failing_since: T0, failed_attempts: 7 }).execute();
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'delivering', lease: { id: 'lease_A', expiresAt: NOW + 30_000 } });
    await complete(db, caps, { now: NOW, done: [{ job: { id: 'job_1', lease: 'lease_A' }, attempt: okAttempt() }] });
    const counters = await db.selectFrom('webhooks').select(['id', 'failing_since', 'failed_attempts']).orderBy('id').execute();
    expect(counters.map((c) => [c.id, c.failing_since === null ? null : Number(c.failing_since), c.failed_attempts])).toEqual(
      counters.map((c) => (c.id === 'wh_a' ? ['wh_a', null, 0] : [c.id, T0, 7])),
    );
  });

  it('changes nothing under a lease that is not the row\'s, and for a job that is not delivering', async () => {
    const { db, caps } = t.ctx.database;
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'delivering', lease: { id: 'lease_B', expiresAt: NOW + 30_000 } });
    // A pending job that still carries the token (as no transition leaves it) must not match on the token alone.
    await seedJob(db, { id: 'job_2', webhookId: 'wh_a', state: 'pending', lease: { id: 'lease_A', expiresAt: NOW + 30_000 } });
    await seedJob(db, { id: 'job_3', webhookId: 'wh_a', state: 'dead', attemptCount: 3, lease: null });
    const before = await snapshot(db);
    const applied = await complete(db, caps, {
      now: NOW,
      done: [
        { job: { id: 'job_1', lease: 'lease_A' }, attempt: okAttempt() },
        { job: { id: 'job_2', lease: 'lease_A' }, attempt: okAttempt() },
        { job: { id: 'job_3', lease: 'lease_A' }, attempt: okAttempt() },
      ],
    });
    expect(applied.size).toBe(0);
    expect(await snapshot(db)).toEqual(before);
  });

  it('in a batch mixing fresh and stale leases, lands only the fresh ones with their own attempts', async () => {
    const { db, caps } = t.ctx.database;
    const fresh = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'delivering', attemptCount: 0, lease: { id: 'lease_A', expiresAt: NOW + 1 } });
    const stale = await seedJob(db, { id: 'job_2', webhookId: 'wh_a', state: 'delivering', attemptCount: 4, lease: { id: 'lease_B', expiresAt: NOW + 1 } });
    const fresh2 = await seedJob(db, { id: 'job_3', webhookId: 'wh_a', state: 'delivering', attemptCount: 1, lease: { id: 'lease_A', expiresAt: NOW + 1 } });
    const a1 = okAttempt(NOW - 300);
    const a3 = { ...okAttempt(NOW - 100), statusCode: 204, responseSnippet: '' };
    const applied = await complete(db, caps, {
      now: NOW,
      done: [
        { job: { id: 'job_1', lease: 'lease_A' }, attempt: a1 },
        { job: { id: 'job_2', lease: 'lease_A' }, attempt: okAttempt() },
        { job: { id: 'job_3', lease: 'lease_A' }, attempt: a3 },
      ],
    });
    expect([...applied].sort()).toEqual(['job_1', 'job_3']);
    const done = { state: 'delivered', lease_id: null, lease_expires_at: null, updated_at: NOW };
    expect(await snapshot(db)).toEqual({
      jobs: [{ ...fresh, ...done, attempt_count: 1 }, stale, { ...fresh2, ...done, attempt_count: 2 }],
      attempts: [attemptRow('job_1', 1, a1), attemptRow('job_3', 2, a3)],
    });
  });

  it('lands the new claim\'s result, not the old one\'s, when a rescued job was claimed again', async () => {
    const { db, caps } = t.ctx.database;
    const before = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'pending', nextAttemptAt: T0 });
    const take = async (now: number) => (await claim(db, caps, { now, leaseMs: 1_000, targets: [{ webhookId: 'wh_a', limit: 1 }] }))[0]![0]!;
    const first = await take(NOW);
    expect(await rescue(db, { now: NOW + 1_001 })).toBe(1);
    const second = await take(NOW + 2_000);
    expect(second.lease).not.toBe(first.lease);
    const held = await snapshot(db);

    expect([...(await complete(db, caps, { now: NOW + 2_100, done: [{ job: first, attempt: okAttempt() }] }))]).toEqual([]);
    expect(await snapshot(db)).toEqual(held);

    const a = okAttempt(NOW + 2_050);
    expect([...(await complete(db, caps, { now: NOW + 2_200, done: [{ job: second, attempt: a }] }))]).toEqual(['job_1']);
    expect(await snapshot(db)).toEqual({
      jobs: [{ ...before, state: 'delivered', attempt_count: 1, updated_at: NOW + 2_200 }],
      attempts: [attemptRow('job_1', 1, a)],
    });
  });

  // A process's first claim may still have its result queued when the rescued job is claimed again by the same
  // process: the batch then holds the job twice. Attempts are matched on (id, lease), so only the live claim's lands.
  it('in one batch holding the same job under its old and its new lease, lands the new one once', async () => {
    // The same process can hold both: its first claim's result still queued when the rescued job is claimed again.
    const { db, caps } = t.ctx.database;
    const before = await seedJob(db, { id: 'job_1', webhookId: 'wh_a', state: 'delivering', attemptCount: 1, lease: { id: 'lease_new', expiresAt: NOW + 1 } });
    const fresh = okAttempt(NOW - 10);
    const applied = await complete(db, caps, {
      now: NOW,
      done: [
        { job: { id: 'job_1', lease: 'lease_old' }, attempt: failedAttempt() },
        { job: { id: 'job_1', lease: 'lease_new' }, attempt: fresh },
      ],
    });
    expect([...applied]).toEqual(['job_1']);
    expect(await snapshot(db)).toEqual({
      jobs: [{ ...before, state: 'delivered', attempt_count: 2, lease_id: null, lease_expires_at: null, updated_at: NOW }],
      attempts: [attemptRow('job_1', 2, fresh)],
    });
  });

  // SQLite sends a batch as statements of up to 64 rows of parameters, the last padded with rows of nulls: a batch
  // across three statements lands each job's own attempt, and the stale ones (and the padding) land nothing.
  it('a batch of 150 lands every fresh job with its own attempt, whatever statement it falls in, and no stale one', async () => {
    const { db, caps } = t.ctx.database;
    const ids = Array.from({ length: 150 }, (_, i) => `job_${String(i).padStart(3, '0')}`);
    const stale = new Set(ids.filter((_, i) => i % 5 === 3));
    const seeded = new Map<string, Awaited<ReturnType<typeof seedJob>>>();
    for (const id of ids) {
      seeded.set(id, await seedJob(db, { id, webhookId: 'wh_a', state: 'delivering', attemptCount: 1, lease: { id: stale.has(id) ? 'lease_B' : 'lease_A', expiresAt: NOW + 5_000 } }));
    }
    // Every attempt its own figures, so one landing on another job's row would show.
    const attemptOf = (i: number) => ({ ...okAttempt(NOW - 1_000 + i), statusCode: 200 + (i % 7), responseSnippet: `answer ${i}` });
    const applied = await complete(db, caps, { now: NOW, done: ids.map((id, i) => ({ job: { id, lease: 'lease_A' }, attempt: attemptOf(i) })) });
    expect([...applied].sort()).toEqual(ids.filter((id) => !stale.has(id)));
    const after = await snapshot(db);
    expect(after.jobs).toEqual(ids.map((id) => (stale.has(id) ? seeded.get(id) : { ...seeded.get(id), state: 'delivered', attempt_count: 2, lease_id: null, lease_expires_at: null, updated_at: NOW })));
    expect(after.attempts).toEqual(ids.flatMap((id, i) => (stale.has(id) ? [] : [attemptRow(id, 2, attemptOf(i))])));
  });

  it('writes nothing for an empty batch', async () => {
    const { db, caps } = t.ctx.database;
    expect((await complete(db, caps, { now: NOW, done: [] })).size).toBe(0);
    expect(await snapshot(db)).toEqual({ jobs: [], attempts: [] });
  });

  it('releases the next held job of the delivered job\'s record (ordering record)', async () => {
    const { db, caps } = t.ctx.database;
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', recordId: 'rec_1', state: 'delivering', lease: { id: 'lease_A', expiresAt: NOW + 5_000 }, ordered: true });
    const next = await seedJob(db, { id: 'job_2', webhookId: 'wh_a', recordId: 'rec_1', state: 'held', ordered: true });
    const after = await seedJob(db, { id: 'job_3', webhookId: 'wh_a', recordId: 'rec_1', state: 'held', ordered: true });
    await complete(db, caps, { now: NOW, done: [{ job: { id: 'job_1', lease: 'lease_A' }, attempt: okAttempt() }] });
    expect(await jobRow(db, 'job_2')).toEqual({ ...next, state: 'pending', next_attempt_at: NOW, updated_at: NOW });
    expect(await jobRow(db, 'job_3')).toEqual(after);
  });

  it('a job not marked ordered holds no record\'s place: its completion releases nothing (and skips the release statement)', async () => {
    const { db, caps } = t.ctx.database;
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', recordId: 'rec_1', state: 'delivering', lease: { id: 'lease_A', expiresAt: NOW + 5_000 } });
    const held = await seedJob(db, { id: 'job_2', webhookId: 'wh_a', recordId: 'rec_1', state: 'held', ordered: true });
    expect(await complete(db, caps, { now: NOW, done: [{ job: { id: 'job_1', lease: 'lease_A' }, attempt: okAttempt() }] })).toEqual(new Set(['job_1']));
    expect(await jobRow(db, 'job_2')).toEqual(held);
  });
});
