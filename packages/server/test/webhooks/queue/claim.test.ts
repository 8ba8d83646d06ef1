import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claim, CLAIM_TARGETS_PER_STATEMENT, JOB_OVERHEAD_BYTES } from '../../../src/webhooks/queue/claim.js';
import type { HeldJob } from '../../../src/webhooks/queue/job.js';
import { rescue } from '../../../src/webhooks/queue/rescue.js';
import { scheduleRetry } from '../../../src/webhooks/queue/schedule-retry.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, T0, attemptRow, failedAttempt, jobRow, queueContext, seedEvent, seedJob, seedTarget, snapshot } from '../../helpers/queue-fixtures.js';
import { turnCounter } from '../../helpers/turn-counter.js';

const LEASE_MS = 30_000;

/** pending → delivering: due jobs of the asked target, oldest due first, under one fresh lease token per claim. */
describe.each(DIALECTS)('claim (%s)', (dialect) => {
  let t: TestContext;
  const claimOne = async (webhookId: string, limit: number, now = NOW, maxBytes?: number): Promise<HeldJob[]> => {
    const [jobs] = await claim(t.ctx.database.db, t.ctx.database.caps, { now, leaseMs: LEASE_MS, targets: [{ webhookId, limit, maxBytes }] });
    return jobs!;
  };
  beforeEach(async () => {
    t = await queueContext(dialect);
  });
  afterEach(async () => t.close());

  it('takes only due pending jobs of the asked target, oldest due first, up to the limit', async () => {
    const { db } = t.ctx.database;
    await seedTarget(db, 'wh_b');
    // Ids in the reverse order of due times, so an order by id would show.
    const j4 = await seedJob(db, { id: 'job_4', webhookId: 'wh_a', nextAttemptAt: NOW - 3_000, attemptCount: 2, roundStart: 1, lastError: { code: 'timeout', message: 't' } });
    const j3 = await seedJob(db, { id: 'job_3', webhookId: 'wh_a', nextAttemptAt: NOW - 2_000 });
    await seedJob(db, { id: 'job_2', webhookId: 'wh_a', nextAttemptAt: NOW }); // due, but past the limit
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', nextAttemptAt: NOW + 1 }); // not yet due
    await seedJob(db, { id: 'job_5', webhookId: 'wh_b', nextAttemptAt: T0 }); // another target's
    await seedJob(db, { id: 'job_6', webhookId: 'wh_a', state: 'delivering', nextAttemptAt: T0, lease: { id: 'lease_X', expiresAt: NOW + 1 } });
    await seedJob(db, { id: 'job_7', webhookId: 'wh_a', state: 'dead', nextAttemptAt: T0 });
    const before = await snapshot(db);

    // Which jobs were taken shows the order (job_2 is due too); the order they come back in is not promised
    // (PostgreSQL's RETURNING follows the update, not the subquery's ORDER BY), so they are compared by id.
    const jobs = (await claimOne('wh_a', 2)).sort((x, y) => x.id.localeCompare(y.id));
    expect(jobs.map((j) => j.id)).toEqual(['job_3', 'job_4']);
    const lease = jobs[0]!.lease;
    expect(lease).toMatch(/^lease_[A-Za-z0-9_-]{16}$/);
    const body = (id: string) => Buffer.from(`{"version":"1","id":"${id}","topic":"record.created","collection":"issues","recordId":"rec_1","payload":{"title":"hello","n":1}}`);
    expect(jobs).toEqual([
      { id: 'job_3', webhookId: 'wh_a', lease, leaseExpiresAt: NOW + LEASE_MS, attemptCount: 0, roundStart: 0, body: body('job_3') },
      { id: 'job_4', webhookId: 'wh_a', lease, leaseExpiresAt: NOW + LEASE_MS, attemptCount: 2, roundStart: 1, body: body('job_4') },
    ]);
    const held = { state: 'delivering', lease_id: lease, lease_expires_at: NOW + LEASE_MS, updated_at: NOW };
    // Everything else, attempts included, exactly as it was; a claim is not an attempt.
    expect(await snapshot(db)).toEqual({
      jobs: before.jobs.map((r) => (r.id === 'job_4' ? { ...j4, ...held } : r.id === 'job_3' ? { ...j3, ...held } : r)),
      attempts: [],
    });
    // Due exactly now counts as due; a millisecond later does not.
    expect((await claimOne('wh_a', 10)).map((j) => j.id)).toEqual(['job_2']);
  });

  it('claims for more targets than one statement takes: every target its own jobs, under one lease, a group a turn', async () => {
    const { db } = t.ctx.database;
    // More than SQLite's 500 parts of a compound SELECT, and more than one group of CLAIM_TARGETS_PER_STATEMENT.
    const ids = Array.from({ length: 600 }, (_, i) => `wh_${String(i).padStart(3, '0')}`);
    for (const id of ids) {
      await seedTarget(db, id);
      await seedJob(db, { id: `job_${id}_1`, webhookId: id, nextAttemptAt: NOW - 2 });
      await seedJob(db, { id: `job_${id}_2`, webhookId: id, nextAttemptAt: NOW - 1 });
    }
    // Each group is a claim of its own, in a turn of the event loop of its own: ten groups in one transaction held a
    // SQLite process's loop 200-300 ms on a loaded machine.
    const counter = turnCounter();
    const caps = t.ctx.database.caps;
    const turns: number[] = [];
    const jobs = { ...caps.jobs, claim: (q: Parameters<typeof caps.jobs.claim>[0], o: Parameters<typeof caps.jobs.claim>[1]) => (turns.push(counter.turn), caps.jobs.claim(q, o)) };
    const claims = await claim(db, { ...caps, jobs }, { now: NOW, leaseMs: LEASE_MS, targets: ids.map((webhookId) => ({ webhookId, limit: 1 })) }).finally(() => counter.stop());
    expect(turns).toHaveLength(Math.ceil(600 / CLAIM_TARGETS_PER_STATEMENT));
    expect(new Set(turns).size, `turns ${turns.join(', ')}`).toBe(turns.length);
    expect(claims).toHaveLength(600);
    // In the order asked, each with its own oldest due job.
    expect(claims.map((jobs) => jobs.map((j) => j.id))).toEqual(ids.map((id) => [`job_${id}_1`]));
    expect(new Set(claims.flat().map((j) => j.lease)).size).toBe(1);
    const states = await db.selectFrom('delivery_jobs').select(['state', (eb) => eb.fn.countAll<number>().as('n')]).where('id', 'like', 'job_wh_%').groupBy('state').orderBy('state').execute();
    expect(states.map((r) => [r.state, Number(r.n)])).toEqual([['delivering', 600], ['pending', 600]]);
  });

  it('takes nothing of a disabled target or of a deleted one', async () => {
    const { db } = t.ctx.database;
    await seedTarget(db, 'wh_off', { enabled: false });
    // Deleted but still flagged enabled: the deleted_at guard must stand on its own.
    await seedTarget(db, 'wh_gone', { enabled: true, deletedAt: T0 + 1 });
    await seedJob(db, { id: 'job_1', webhookId: 'wh_off' });
    await seedJob(db, { id: 'job_2', webhookId: 'wh_gone' });
    const before = await snapshot(db);
    expect(await claimOne('wh_off', 10)).toEqual([]);
    expect(await claimOne('wh_gone', 10)).toEqual([]);
    expect(await snapshot(db)).toEqual(before);
  });

  it('gives one token to every job of a call and another to the next call; several targets share one call', async () => {
    const { db, caps } = t.ctx.database;
    await seedTarget(db, 'wh_b');
    for (const [i, id] of ['job_1', 'job_2', 'job_3'].entries()) await seedJob(db, { id, webhookId: 'wh_a', nextAttemptAt: T0 + i });
    for (const id of ['job_4', 'job_5']) await seedJob(db, { id, webhookId: 'wh_b' });
    const first = await claimOne('wh_a', 2);
    const [forB, forA] = await claim(db, caps, { now: NOW, leaseMs: LEASE_MS, targets: [{ webhookId: 'wh_b', limit: 5 }, { webhookId: 'wh_a', limit: 5 }] });
    expect(first.map((j) => j.id).sort()).toEqual(['job_1', 'job_2']);
    expect(new Set(first.map((j) => j.lease)).size).toBe(1);
    // Results in the order asked; the jobs already delivering were not taken again.
    expect(forB!.map((j) => j.id).sort()).toEqual(['job_4', 'job_5']);
    expect(forA!.map((j) => j.id)).toEqual(['job_3']);
    expect(new Set([...forB!, ...forA!].map((j) => j.lease)).size).toBe(1);
    expect(forA![0]!.lease).not.toBe(first[0]!.lease);
    expect((await jobRow(db, 'job_1'))!.lease_id).toBe(first[0]!.lease);
    expect((await jobRow(db, 'job_3'))!.lease_id).toBe(forA![0]!.lease);
  });

  it('claiming the same job twice in one process (claim, rescue, claim) gives two tokens; only the second writes', async () => {
    const { db } = t.ctx.database;
    const before = await seedJob(db, { id: 'job_1', webhookId: 'wh_a' });
    const [a] = await claimOne('wh_a', 1, NOW);
    expect(await rescue(db, { now: NOW + LEASE_MS + 1 })).toBe(1);
    const [b] = await claimOne('wh_a', 1, NOW + LEASE_MS + 2);
    expect(a!.id).toBe('job_1');
    expect(b!.id).toBe('job_1');
    expect(b!.lease).not.toBe(a!.lease);

    const held = await snapshot(db);
    expect(await scheduleRetry(db, { now: NOW + LEASE_MS + 3, job: a!, attempt: failedAttempt(), at: NOW + 99_000 })).toBe(false);
    expect(await snapshot(db)).toEqual(held);

    const attempt = failedAttempt('timeout', 'No answer in time.');
    expect(await scheduleRetry(db, { now: NOW + LEASE_MS + 4, job: b!, attempt, at: NOW + 99_000 })).toBe(true);
    expect(await snapshot(db)).toEqual({
      jobs: [{ ...before, attempt_count: 1, next_attempt_at: NOW + 99_000, last_error_code: 'timeout', last_error_message: 'No answer in time.', updated_at: NOW + LEASE_MS + 4 }],
      attempts: [attemptRow('job_1', 1, attempt)],
    });
  });

  it('returns the body with a null payload when a hand-made job\'s event has none', async () => {
    // Not a state enqueue makes (claim.ts says so); the envelope must still be valid JSON.
    const { db } = t.ctx.database;
    await seedEvent(db, 'evt_empty', null);
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a', eventId: 'evt_empty' });
    const [job] = await claimOne('wh_a', 1);
    expect(job!.body.toString()).toBe('{"version":"1","id":"job_1","topic":"record.created","collection":"issues","recordId":"rec_1","payload":null}');
  });

  it('takes its oldest due jobs while their bytes fit the budget, and always the first: 2 MB payloads come out a few at a time', async () => {
    const { db, caps } = t.ctx.database;
    await seedTarget(db, 'wh_b');
    // ~2 MB payloads (a 1 MiB record's update event), one small one among them; due in the order of their ids.
    const big = (n: number) => JSON.stringify({ record: { data: { body: `${n}`.padEnd(1_000_000, 'x') } }, previous: { data: { body: ''.padEnd(1_000_000, 'y') } } });
    const size = Buffer.byteLength(big(0)) + JOB_OVERHEAD_BYTES;
    for (let i = 1; i <= 6; i++) {
      await seedEvent(db, `evt_big_${i}`, i === 3 ? '{"small":true}' : big(i));
      await seedJob(db, { id: `job_${i}`, webhookId: 'wh_a', eventId: `evt_big_${i}`, nextAttemptAt: T0 + i });
    }
    await seedEvent(db, 'evt_b', big(9));
    await seedJob(db, { id: 'job_b', webhookId: 'wh_b', eventId: 'evt_b' });
    const ids = (jobs: HeldJob[] | undefined) => jobs!.map((j) => j.id).sort();

    // Room for two big jobs and a small one: the first three due, not the fourth (the sum is taken in due order).
    const [first, forB] = await claim(db, caps, { now: NOW, leaseMs: LEASE_MS, targets: [{ webhookId: 'wh_a', limit: 100, maxBytes: 2 * size + 1000 }, { webhookId: 'wh_b', limit: 100, maxBytes: 10 }] });
    expect(ids(first)).toEqual(['job_1', 'job_2', 'job_3']);
    // Each job whole: its envelope around its stored payload.
    expect(first!.find((j) => j.id === 'job_2')!.body.toString()).toBe(`{"version":"1","id":"job_2","topic":"record.created","collection":"issues","recordId":"rec_1","payload":${big(2)}}`);
    // A budget smaller than one job still takes one: a job larger than any budget is never stuck.
    expect(ids(forB)).toEqual(['job_b']);
    expect(ids(await claimOne('wh_a', 100, NOW, 1))).toEqual(['job_4']);
    // The limit still counts: the default budget (32 MiB) would take both that are left.
    expect(ids(await claimOne('wh_a', 1))).toEqual(['job_5']);
    expect(ids(await claimOne('wh_a', 100))).toEqual(['job_6']);
    const states = await db.selectFrom('delivery_jobs').select(['id', 'state']).orderBy('id').execute();
    expect(states.every((r) => r.state === 'delivering')).toBe(true);
  });
});
